package prober

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/quality"
)

// QualityResult is the outcome of a scenario's answer check.
type QualityResult struct {
	Passed bool
	Reason string
}

// Evaluate checks a finished result against its scenario's objectives and
// answer checks (quality, tool calls, response format, the golden line its
// prompt was drawn from and a transcript's word error rate against its
// clip's reference), and decides whether it is good:
// succeeded, met every objective, and passed every check configured. A
// failed request misses every objective: a server that rejects everything
// must not look compliant.
func Evaluate(res *Result, s config.Scenario, p prompt.Prompt) {
	res.Checks = res.Checks[:0]
	good := res.Outcome == OutcomeSuccess
	for _, o := range s.SLO.Objectives() {
		if res.Outcome != OutcomeSuccess {
			res.Checks = append(res.Checks, Check{Objective: o.Name, Threshold: o.Threshold})
			continue
		}
		var met bool
		switch o.Name {
		case config.ObjectiveTTFT:
			met = res.FirstTokenSeen() && res.TTFT <= o.Threshold
		case config.ObjectiveTPOT:
			if res.OutputTokens < 2 {
				continue // TPOT is undefined for one token
			}
			met = res.TPOT <= o.Threshold
		case config.ObjectiveE2E:
			met = res.E2E <= o.Threshold
		case config.ObjectiveStall:
			met = res.MaxGap <= o.Threshold
		case config.ObjectiveTTFTAnswer:
			// A request that reasoned until it ended never answered: missed.
			met = res.TTFTAnswer > 0 && res.TTFTAnswer <= o.Threshold
		}
		res.Checks = append(res.Checks, Check{Objective: o.Name, Threshold: o.Threshold, Met: met})
		good = good && met
	}
	switch q := endingQuality(res.ending); {
	case res.Outcome != OutcomeSuccess:
	case q != nil: // no answer: nothing in it to check
		res.Quality, good = q, false
	default:
		checkAnswer(res, s, p.Golden)
		checkTranscript(res, s, p.Clip)
		good = good && (res.Quality == nil || res.Quality.Passed)
	}
	res.Good = good
}

// checkAnswer sets a successful answer's quality from the scenario's checks
// and its golden line's: a golden failure names the line, over whatever
// the scenario's checks said.
func checkAnswer(res *Result, s config.Scenario, golden *prompt.GoldenLine) {
	if checked, why := quality.Scenario(&s, res.Answer, res.ToolCalls); checked {
		res.Quality = &QualityResult{Passed: why == "", Reason: why}
	}
	if golden == nil {
		return
	}
	if why := quality.Check(&golden.Checks, res.Answer); why != "" {
		why = golden.Name() + ": " + why
		res.Quality = &QualityResult{Reason: why}
	} else if res.Quality == nil {
		res.Quality = &QualityResult{Passed: true}
	}
}

// checkTranscript counts a transcript's word errors against its clip's
// reference and, under max_wer, fails one whose rate is past it, naming
// the clip, over whatever the other checks said.
func checkTranscript(res *Result, s config.Scenario, clip *prompt.Clip) {
	if clip == nil {
		return
	}
	res.WordErrors, res.ReferenceWords = quality.WordErrors(clip.Reference, res.Answer)
	if !s.ChecksTranscript() {
		return
	}
	wer := float64(res.WordErrors) / float64(res.ReferenceWords)
	switch {
	case wer > s.Audio.MaxWER:
		res.Quality = &QualityResult{Reason: fmt.Sprintf("%s: word error rate %.3f (%d errors in %d words) is past max_wer %g", clip.Name(), wer, res.WordErrors, res.ReferenceWords, s.Audio.MaxWER)}
	case res.Quality == nil:
		res.Quality = &QualityResult{Passed: true}
	}
}

// OwnDelay bounds how much of the figure objective judges the prober's own
// delay may have added to r: its dispatch delay and the read side at the
// stamp for the latencies counted from the planned time (TTFT at the first
// output, e2e at the last, the answer's first token anywhere in flight),
// the read side at either end spread over the gaps for TPOT, and anywhere
// in flight for a stall (a gap's closing chunk read late).
func (r *Result) OwnDelay(objective string) time.Duration {
	switch objective {
	case config.ObjectiveTTFT:
		return r.DispatchDelay + r.ReadDelayFirst
	case config.ObjectiveE2E:
		return r.DispatchDelay + r.ReadDelayLast
	case config.ObjectiveTPOT:
		if r.OutputTokens > 1 {
			return max(r.ReadDelayFirst, r.ReadDelayLast) / time.Duration(r.OutputTokens-1)
		}
		return 0
	case config.ObjectiveStall:
		return r.ReadDelay
	}
	return r.DispatchDelay + r.ReadDelay
}

// MarkOwnDelayMisses marks each check of r that missed its objective as
// measured and would have met it without the prober's own delay (its
// DispatchDelay and ReadDelay): such a miss is not certainly the target's.
func (r *Result) MarkOwnDelayMisses() {
	for i, c := range r.Checks {
		r.Checks[i].WithinOwnDelay = r.missedWithinOwnDelay(c)
	}
}

func (r *Result) missedWithinOwnDelay(c Check) bool {
	if c.Met || r.Outcome != OutcomeSuccess {
		return false
	}
	var v time.Duration
	switch c.Objective {
	case config.ObjectiveTTFT:
		if !r.FirstTokenSeen() {
			return false
		}
		v = r.TTFT
	case config.ObjectiveTPOT:
		v = r.TPOT
	case config.ObjectiveE2E:
		v = r.E2E
	case config.ObjectiveStall:
		v = r.MaxGap
	case config.ObjectiveTTFTAnswer:
		if r.TTFTAnswer <= 0 {
			return false
		}
		v = r.TTFTAnswer
	default:
		return false
	}
	return v-r.OwnDelay(c.Objective) <= c.Threshold
}
