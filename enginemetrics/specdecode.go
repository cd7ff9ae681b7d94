package enginemetrics

import (
	"fmt"

	"github.com/llmprobe/llmprobe/config"
)

// SpecDecode is how well the engine's draft model guessed over a window:
// the share of draft tokens the target model accepted, and the mean tokens
// a decode step gave (the accepted drafts and the one token the target
// model adds). It explains a TPOT or ITL change nothing else does. Each
// figure is nil with NA saying why, never 0, where the engine has no draft
// model or drafted nothing.
type SpecDecode struct {
	AcceptanceRate       *float64 `json:"acceptance_rate"`
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length"`
	// Counts are vLLM's counter deltas over the window (nil for SGLang,
	// whose gauges are its own running averages).
	Drafts         *float64 `json:"drafts,omitempty"`
	DraftTokens    *float64 `json:"draft_tokens,omitempty"`
	AcceptedTokens *float64 `json:"accepted_tokens,omitempty"`
	// Source says how the figures were made.
	Source string `json:"source"`
	NA     string `json:"na,omitempty"`
}

// specDecode is where a family's page says how its drafts fared: vLLM's
// and llama.cpp's counters, or SGLang's gauges (already averages, over the engine's own
// logging window).
type specDecode struct {
	drafts, draftTokens, accepted string // counters
	rate, length                  string // gauges
}

var specFamilies = map[string]specDecode{
	config.EngineFamilyVLLM:     {drafts: "vllm:spec_decode_num_drafts_total", draftTokens: "vllm:spec_decode_num_draft_tokens_total", accepted: "vllm:spec_decode_num_accepted_tokens_total"},
	config.EngineFamilyLlamaCPP: {drafts: "llamacpp:spec_decode_num_drafts_total", draftTokens: "llamacpp:spec_decode_num_draft_tokens_total", accepted: "llamacpp:spec_decode_num_accepted_tokens_total"},
	config.EngineFamilySGLang:   {rate: "sglang:spec_accept_rate", length: "sglang:spec_accept_length"},
}

func (s specDecode) names() []string {
	var out []string
	for _, n := range []string{s.drafts, s.draftTokens, s.accepted, s.rate, s.length} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// specDecodeOf is the window's speculative decoding, nil for a family
// that exports none.
func specDecodeOf(familyName string, f family, before, after *Page, model string, during []*Page) *SpecDecode {
	s, ok := specFamilies[familyName]
	if !ok {
		return nil
	}
	if s.drafts != "" {
		return s.fromCounters(f, before, after, model)
	}
	return s.fromGauges(f, before, after, model, during)
}

// fromCounters: acceptance rate = Δaccepted / Δdraft tokens, mean
// acceptance length = 1 + Δaccepted / Δdrafts.
func (s specDecode) fromCounters(f family, before, after *Page, model string) *SpecDecode {
	out := &SpecDecode{Source: fmt.Sprintf("counter deltas: Δ%s / Δ%s, and 1 + Δ%s / Δ%s", s.accepted, s.draftTokens, s.accepted, s.drafts)}
	delta := func(name string) (*float64, bool) {
		b := gaugeSum(before.families[name], series{name: name}, f.modelLabel, model)
		a := gaugeSum(after.families[name], series{name: name}, f.modelLabel, model)
		if a == nil {
			return nil, false
		}
		d := *a
		if b != nil {
			d -= *b
		}
		return &d, true
	}
	drafts, ok1 := delta(s.drafts)
	tokens, ok2 := delta(s.draftTokens)
	accepted, ok3 := delta(s.accepted)
	switch {
	case !ok1 || !ok2 || !ok3:
		out.NA = "no draft model: the page has no " + s.drafts + " (vLLM exports it only with a speculative config)"
		return out
	case *drafts < 0 || *tokens < 0 || *accepted < 0:
		out.NA = ErrRestarted
		return out
	}
	out.Drafts, out.DraftTokens, out.AcceptedTokens = drafts, tokens, accepted
	if *drafts == 0 || *tokens == 0 {
		out.NA = "no draft between the scrapes: no draft model, or no decode step"
		return out
	}
	rate, length := *accepted / *tokens, 1 + *accepted / *drafts
	out.AcceptanceRate, out.MeanAcceptanceLength = &rate, &length
	return out
}

// fromGauges: SGLang's gauges, the mean of the reads taken while the run
// went on (else of the two scrapes around it). A gauge of 0 is an engine
// that decoded without drafts.
func (s specDecode) fromGauges(f family, before, after *Page, model string, during []*Page) *SpecDecode {
	out := &SpecDecode{}
	mean := func(name string) (*float64, int) {
		var sum float64
		n := 0
		pages := during
		if len(pages) == 0 {
			pages = []*Page{before, after}
		}
		for _, p := range pages {
			if !p.OK() {
				continue
			}
			if v := gaugeSum(p.families[name], series{name: name}, f.modelLabel, model); v != nil {
				sum += *v
				n++
			}
		}
		if n == 0 {
			return nil, 0
		}
		m := sum / float64(n)
		return &m, n
	}
	rate, n := mean(s.rate)
	length, _ := mean(s.length)
	switch {
	case rate == nil || length == nil:
		out.NA = "no draft model: the page has no " + s.rate
		return out
	case *rate == 0 || *length == 0:
		out.NA = "the engine reports no acceptance: no draft model, or no decode step in its window"
		return out
	}
	out.Source = fmt.Sprintf("the engine's own averages (gauges %s and %s), a mean of %d reads: not counted over this window alone", s.rate, s.length, n)
	out.AcceptanceRate, out.MeanAcceptanceLength = rate, length
	return out
}
