// Package compare pairs identical requests to a baseline and a candidate
// target and has each metric judged (package decide): one burst's runs in
// alternating rounds (llmprobe compare), and always-on comparisons that
// send each tick's prompt to both at the same moment (canary analysis).
package compare

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/plan"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// Comparison is the whole result of `llmprobe compare`, as its JSON.
type Comparison struct {
	Burst string    `json:"burst"`
	Seed  uint64    `json:"seed"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Rounds is the runs per side; Order names the side of each run, in
	// the order they ran (ABBA…).
	Rounds    int      `json:"rounds"`
	Order     []string `json:"order"`
	Baseline  Side     `json:"baseline"`
	Candidate Side     `json:"candidate"`
	// Pairs are the requests that succeeded on both sides, over all rounds.
	Pairs   int             `json:"pairs"`
	Metrics []decide.Metric `json:"metrics"`
	Verdict decide.Verdict  `json:"verdict"`
	// Reasons say why the verdict is inconclusive or not measured.
	Reasons []string `json:"reasons,omitempty"`
}

// Side is one target of a comparison and what its runs measured.
type Side struct {
	Target        string   `json:"target"`
	URL           string   `json:"url"`
	Model         string   `json:"model"`
	Engine        string   `json:"engine,omitempty"`
	EngineVersion string   `json:"engine_version,omitempty"`
	Reports       []string `json:"reports"` // the runs' ids, round by round
	// Requests were measured (warmup left out); Good met every objective,
	// of Judged (cancelled ones say nothing of the target; not sent ones
	// count as not good).
	Requests  int `json:"requests"`
	Succeeded int `json:"succeeded"`
	Good      int `json:"good"`
	Judged    int `json:"judged"`
	// QualityPassed of QualityChecked answers passed their checks (golden
	// lines, quality); both 0 where no answer was checked.
	QualityChecked int `json:"quality_checked,omitempty"`
	QualityPassed  int `json:"quality_passed,omitempty"`
	// Throughput is the mean over the runs, reported and not judged.
	RequestsPerSecond     *float64          `json:"requests_per_second"`
	OutputTokensPerSecond *float64          `json:"output_tokens_per_second"`
	ClientSaturated       bool              `json:"client_saturated"`
	ErrorBound            *stats.ErrorBound `json:"error_bound,omitempty"`
	Aborted               []string          `json:"aborted,omitempty"`
	// Samples are the paired requests' latencies in seconds by metric,
	// sorted and thinned to at most maxSamples, for the distributions drawn.
	Samples map[string][]float64 `json:"samples"`
}

// Run is what one side's run of one round measured: its report and its
// results in plan order (burst.Runner.Measured).
type Run struct {
	Report   *report.Report
	Measured report.Run
}

// Round is one round: the same requests, the same nonce salt, both sides.
type Round struct {
	Baseline, Candidate Run
}

// Latency metrics compared, each per request: TTFT, TPOT, the mean of its
// inter-token latencies, and e2e.
var Latencies = []string{"ttft", "tpot", "itl", "e2e"}

// maxSamples bounds each side's kept samples of a metric.
const maxSamples = 1000

// Analyze compares the rounds of burst b; base and cand carry the sides'
// names, URLs and models, and order the side of each run as it ran.
func Analyze(b *plan.Burst, base, cand Side, order []string, rounds []Round) *Comparison {
	c := &Comparison{Burst: b.Name, Seed: b.Seed, Rounds: len(rounds), Order: order, Baseline: base, Candidate: cand}
	p := pairs{}
	for k, r := range rounds {
		c.Baseline.add(r.Baseline)
		c.Candidate.add(r.Candidate)
		p.add(k, r.Baseline.Measured, r.Candidate.Measured)
		for _, run := range []Run{r.Baseline, r.Candidate} {
			if c.Start.IsZero() || run.Report.Start.Before(c.Start) {
				c.Start = run.Report.Start
			}
			c.End = maxTime(c.End, run.Report.End)
		}
	}
	c.Baseline.finish(len(rounds), p, 0)
	c.Candidate.finish(len(rounds), p, 1)
	c.Pairs = len(p.round)
	for _, m := range Latencies {
		base, cand, strata := p.metric(m)
		if len(base) == 0 && c.Pairs > 0 {
			c.Metrics = append(c.Metrics, decide.Inapplicable(m, "p50"), decide.Inapplicable(m, "p99"))
			continue
		}
		low, high, moved := p.withoutOwnDelay(m)
		judge := func(f func(base, cand []float64) decide.Metric) decide.Metric {
			out := f(base, cand)
			if moved {
				out = decide.WithoutOwnDelay(out, f(low[0], low[1]), f(high[0], high[1]))
			}
			return out
		}
		tol, _ := decide.Tolerance(b.Burst, m, "p50")
		median := judge(func(base, cand []float64) decide.Metric {
			return decide.MedianShift(m, base, cand, strata, len(rounds), tol)
		})
		median.Judged = true
		c.Metrics = append(c.Metrics, median)
		for _, q := range tails(b, m) {
			tol, named := decide.Tolerance(b.Burst, m, q.label)
			tail := judge(func(base, cand []float64) decide.Metric {
				return decide.TailRatio(m, q.q, base, cand, strata, len(rounds), tol)
			})
			// A tail needs far more pairs than a median to show a change:
			// it decides only where the burst asks for it.
			tail.Judged = named
			c.Metrics = append(c.Metrics, tail)
		}
	}
	goodTol, _ := decide.Tolerance(b.Burst, config.Goodput, "")
	good := goodput(rounds, goodTol)
	good.Judged = true
	c.Metrics = append(c.Metrics, good)
	if c.Baseline.QualityChecked+c.Candidate.QualityChecked > 0 {
		q := decide.Quality(p.quality.passed, p.quality.round, len(rounds), decide.QualityTolerance)
		q.Judged = true
		c.Metrics = append(c.Metrics, q)
	}
	c.Verdict, c.Reasons = decide.Overall(c.Metrics, c.Pairs, [2]decide.Side{c.Baseline.decided(), c.Candidate.decided()})
	return c
}

// quantile is a tail compared, by its label and value.
type quantile struct {
	label string
	q     float64
}

// tails are metric m's tails to compare: p99, and each other tail the
// burst's max_regression names for m.
func tails(b *plan.Burst, m string) []quantile {
	out := []quantile{{"p99", 0.99}}
	for _, r := range b.MaxRegression {
		if r.Metric != m || r.Quantile == "p50" || r.Quantile == "p99" {
			continue
		}
		if q, err := strconv.ParseFloat(strings.TrimPrefix(r.Quantile, "p"), 64); err == nil {
			out = append(out, quantile{r.Quantile, q / 100})
		}
	}
	return out
}

// add counts one run of the side.
func (s *Side) add(r Run) {
	rep := r.Report
	s.Reports = append(s.Reports, rep.ID)
	if s.Engine == "" {
		s.Model, s.Engine, s.EngineVersion = rep.Model, rep.Engine, rep.EngineVersion
	}
	s.Requests += rep.Requests
	s.Succeeded += rep.Outcomes[prober.OutcomeSuccess]
	good, judged := goodOf(r.Measured)
	s.Good, s.Judged = s.Good+good, s.Judged+judged
	s.addQuality(r.Measured.Results)
	s.ClientSaturated = s.ClientSaturated || rep.ClientSaturated
	s.ErrorBound = stats.WorseBound(s.ErrorBound, rep.ErrorBound)
	if rep.Aborted {
		s.Aborted = append(s.Aborted, rep.ID+": "+rep.AbortReason)
	}
	s.RequestsPerSecond = sum(s.RequestsPerSecond, rep.Throughput.Requests)
	s.OutputTokensPerSecond = sum(s.OutputTokensPerSecond, rep.Throughput.OutputTokens)
}

// finish turns the summed throughputs into means over n runs and keeps
// the side's paired samples.
func (s *Side) finish(n int, p pairs, side int) {
	for _, f := range []*float64{s.RequestsPerSecond, s.OutputTokensPerSecond} {
		if f != nil {
			*f /= float64(n)
		}
	}
	s.Samples = map[string][]float64{}
	for _, m := range Latencies {
		xs := slices.Clone(p.values[m][side])
		slices.Sort(xs)
		s.Samples[m] = thin(xs, maxSamples)
	}
}

func sum(a, b *float64) *float64 {
	if b == nil {
		return a
	}
	v := *b
	if a != nil {
		v += *a
	}
	return &v
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// thin keeps n evenly spaced values of sorted xs, the first and last among them.
func thin(xs []float64, n int) []float64 {
	if len(xs) <= n {
		return xs
	}
	out := make([]float64, n)
	for i := range n {
		out[i] = xs[i*(len(xs)-1)/(n-1)]
	}
	return out
}

// pairs holds the requests that succeeded on both sides: for each latency
// metric the two sides' values, where the metric applies to both, and the
// round of each.
type pairs struct {
	round  []int
	values map[string][2][]float64
	// own holds, per metric and side, how far llmprobe's own delay may have
	// moved each value: down to value − own[0], up to value + own[1].
	own     map[string][2][][2]float64
	rounds  map[string][]int
	quality qualityPairs
}

// key is a request's place in the plan: its arrival and its turn.
type key struct{ index, turn int }

// add pairs round k's requests: request i of the baseline with request i
// of the candidate.
func (p *pairs) add(k int, base, cand report.Run) {
	if p.values == nil {
		p.values, p.own, p.rounds = map[string][2][]float64{}, map[string][2][][2]float64{}, map[string][]int{}
	}
	byKey := make(map[key]*prober.Result, len(base.Results))
	for i, r := range base.Results {
		byKey[keyOf(base, i)] = r
	}
	for i, c := range cand.Results {
		b, ok := byKey[keyOf(cand, i)]
		if !ok || b.Outcome != prober.OutcomeSuccess || c.Outcome != prober.OutcomeSuccess {
			continue
		}
		p.round = append(p.round, k)
		p.quality.add(k, b, c)
		for _, m := range Latencies {
			bv, bok := latency(b, m)
			cv, cok := latency(c, m)
			if !bok || !cok {
				continue
			}
			v, o := p.values[m], p.own[m]
			v[0], v[1] = append(v[0], bv), append(v[1], cv)
			o[0], o[1] = append(o[0], ownDelay(b, m)), append(o[1], ownDelay(c, m))
			p.values[m], p.own[m], p.rounds[m] = v, o, append(p.rounds[m], k)
		}
	}
}

// keyOf is the place of run's i-th result; a run without Index holds its
// results in plan order from 0.
func keyOf(run report.Run, i int) key {
	n := i
	if run.Index != nil {
		n = run.Index[i]
	}
	return key{n, run.Results[i].Turn}
}

// metric gives the two sides' values of metric m and each pair's round.
func (p pairs) metric(m string) (base, cand []float64, strata []int) {
	return p.values[m][0], p.values[m][1], p.rounds[m]
}

// ownDelay is how far llmprobe's own delay may have moved r's metric m, in
// seconds: the value less [0] is the lowest it could truly be, plus [1]
// the highest. A latency counted from the planned time holds its dispatch
// delay, exactly, which the target never saw, and up to its read side; a
// gap's mean (TPOT, ITL) moves either way by the read side spread over its
// gaps, the dispatch delay cancelling.
func ownDelay(r *prober.Result, m string) [2]float64 {
	dispatch := r.DispatchDelay.Seconds()
	switch m {
	case "tpot":
		d := r.OwnDelay(config.ObjectiveTPOT).Seconds()
		return [2]float64{d, d}
	case "itl":
		if len(r.ITL) == 0 {
			return [2]float64{}
		}
		d := max(r.ReadDelayFirst, r.ReadDelayLast).Seconds() / float64(len(r.ITL))
		return [2]float64{d, d}
	case "e2e":
		return [2]float64{r.OwnDelay(config.ObjectiveE2E).Seconds(), -dispatch}
	}
	return [2]float64{r.OwnDelay(config.ObjectiveTTFT).Seconds(), -dispatch}
}

// withoutOwnDelay gives metric m's two sides at their extremes once each
// pair's own delay is taken off: low, where the candidate is as fast and
// the baseline as slow as the delay allows, and high, the reverse; ok is
// false when no value could move.
func (p pairs) withoutOwnDelay(m string) (low, high [2][]float64, ok bool) {
	v, o := p.values[m], p.own[m]
	for s := range 2 {
		low[s], high[s] = make([]float64, len(v[s])), make([]float64, len(v[s]))
	}
	for i := range v[0] {
		b, c, ob, oc := v[0][i], v[1][i], o[0][i], o[1][i]
		ok = ok || ob != [2]float64{} || oc != [2]float64{}
		// A value never falls to 0 or below: the target took some time.
		low[0][i], low[1][i] = b+ob[1], max(c-oc[0], c*1e-3)
		high[0][i], high[1][i] = max(b-ob[0], b*1e-3), c+oc[1]
	}
	return low, high, ok
}

// latency is a successful request's metric m in seconds; false where it
// does not apply (no token, one token, no gap) or is 0.
func latency(r *prober.Result, m string) (float64, bool) {
	var v float64
	switch m {
	case "ttft":
		if r.FirstTokenSeen() {
			v = r.TTFT.Seconds()
		}
	case "tpot":
		if r.OutputTokens > 1 && r.FirstTokenSeen() {
			v = r.TPOT.Seconds()
		}
	case "itl":
		var total time.Duration
		for _, d := range r.ITL {
			total += d
		}
		if len(r.ITL) > 0 {
			v = total.Seconds() / float64(len(r.ITL))
		}
	case "e2e":
		v = r.E2E.Seconds()
	}
	return v, v > 0 && !math.IsInf(v, 0)
}

// decided is what the comparison's verdict needs of s.
func (s Side) decided() decide.Side {
	return decide.Side{Target: s.Target, Aborted: s.Aborted}
}
