package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/plan"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// run makes a run of n successful requests in plan order, each taking
// the latencies of the request before slow times f(i), and llmprobe's own
// read side adding up to own to each.
func run(id string, n int, f func(i int) float64, own time.Duration) Run {
	r := report.Run{NotSent: map[string]int{}}
	for i := range n {
		s := f(i)
		res := &prober.Result{Outcome: prober.OutcomeSuccess, Good: true, OutputTokens: 5, OutputChunks: 5,
			TTFT: time.Duration(s * 20e6), TPOT: time.Duration(s * 10e6), E2E: time.Duration(s * 60e6),
			ITL: []time.Duration{time.Duration(s * 10e6), time.Duration(s * 10e6)}, ReadDelay: own, ReadDelayFirst: own, ReadDelayLast: own}
		r.Add(i, res)
	}
	r.Close(time.Now())
	rep := &report.Report{ID: id, Requests: n, Outcomes: map[prober.Outcome]int{prober.OutcomeSuccess: n}, ClientSaturated: own > 0}
	return Run{Report: rep, Measured: r}
}

func TestAnalyze(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise, jitter := make([]float64, 200), make([]float64, 200)
	for i := range noise {
		noise[i], jitter[i] = math.Exp(0.3*rng.NormFloat64()), math.Exp(0.02*rng.NormFloat64())
	}
	// The baseline's requests, and the candidate's: as slow, with a noise
	// of their own, or 40 % slower.
	base := func(i int) float64 { return noise[i] }
	same := func(i int) float64 { return noise[i] * jitter[i] }
	slow := func(i int) float64 { return 1.4 * same(i) }
	b := config.Burst{Name: "b", Seed: 7, MaxRegression: []config.MaxRegression{
		{Metric: "ttft", Quantile: "p50", MaxIncrease: 0.5}, {Metric: "tpot", Quantile: "p90", MaxIncrease: 0.2}}}
	rounds := make([]Round, 6)
	for k := range rounds {
		rounds[k] = Round{run("a", 200, base, 0), run("b", 200, slow, 0)}
	}
	c := Analyze(plan.BurstOf(b), Side{Target: "a"}, Side{Target: "b"}, []string{"baseline", "candidate", "candidate", "baseline"}, rounds)
	if c.Verdict != decide.Worse || c.Pairs != 1200 || c.Rounds != 6 {
		t.Fatalf("verdict %q, pairs %d, rounds %d: %v", c.Verdict, c.Pairs, c.Rounds, c.Reasons)
	}
	type got struct {
		verdict decide.Verdict
		judged  bool
	}
	verdicts := map[string]got{}
	for _, m := range c.Metrics {
		verdicts[m.Name()] = got{m.Verdict, m.Judged}
	}
	want := map[string]got{
		"ttft p50": {decide.Within, true}, // 40 % within its 50 %
		"tpot p50": {decide.Worse, true}, "itl p50": {decide.Worse, true}, "e2e p50": {decide.Worse, true},
		// The tail max_regression names is judged; p99 is printed only.
		"tpot p90": {decide.Worse, true}, "tpot p99": {decide.TooFew, false}, // 200 a round, "ttft p90": {},
		"goodput": {decide.Within, true},
	}
	for name, v := range want {
		if verdicts[name] != v {
			t.Errorf("%s: %+v, want %+v", name, verdicts[name], v)
		}
	}
	if len(c.Baseline.Samples["tpot"]) != 1000 || c.Candidate.Good != 1200 || len(c.Candidate.Reports) != 6 {
		t.Errorf("candidate side: %+v", c.Candidate)
	}

	// llmprobe's own delay counts pair by pair: 2 ms of read side on the
	// candidate leaves a 40 % slower decode worse; 40 ms, as much as the
	// latencies themselves, could explain any difference.
	for k := range rounds {
		rounds[k].Candidate = run("b", 200, slow, 2*time.Millisecond)
	}
	if c := Analyze(plan.BurstOf(b), Side{Target: "a"}, Side{Target: "b"}, nil, rounds); c.Verdict != decide.Worse {
		t.Errorf("a little own delay: %q %v", c.Verdict, c.Reasons)
	}
	for k := range rounds {
		rounds[k].Candidate = run("b", 200, slow, 40*time.Millisecond)
	}
	c = Analyze(plan.BurstOf(b), Side{Target: "a"}, Side{Target: "b"}, nil, rounds)
	tpot := c.Metrics[slices.IndexFunc(c.Metrics, func(m decide.Metric) bool { return m.Name() == "tpot p50" })]
	if c.Verdict != decide.NotEnough || !tpot.OwnDelayDecides || tpot.WithoutOwnDelay == nil || !slices.ContainsFunc(c.Reasons, func(r string) bool {
		return strings.HasPrefix(r, "tpot p50: llmprobe's own delay could change it: taken off each pair, the interval could reach from ")
	}) {
		t.Errorf("own delay as large as the latencies: %q %v; tpot %+v", c.Verdict, c.Reasons, tpot)
	}
	for k := range rounds {
		rounds[k] = Round{run("a", 200, base, 0), run("b", 200, same, 0)}
	}
	if c := Analyze(plan.BurstOf(b), Side{}, Side{}, nil, rounds); c.Verdict != decide.Within {
		t.Errorf("the same six times: %q %v", c.Verdict, c.Reasons)
	}
	rounds = []Round{{run("a1", 3, base, 0), run("b1", 3, slow, 0)}}
	if c := Analyze(plan.BurstOf(b), Side{}, Side{}, nil, rounds); c.Verdict != decide.NotEnough {
		t.Errorf("3 pairs: %q %v", c.Verdict, c.Reasons)
	}
	rounds = []Round{{run("a1", 0, base, 0), run("b1", 5, slow, 0)}}
	if c := Analyze(plan.BurstOf(b), Side{}, Side{}, nil, rounds); c.Verdict != decide.NotMeasured {
		t.Errorf("nothing paired: %q %v", c.Verdict, c.Reasons)
	}
}

// Answers without token times (embeddings, rerank, unstreamed): TTFT, TPOT
// and ITL are n/a, not "too few" (more pairs would not help), and e2e alone
// decides.
func TestAnalyzeWithoutTokenTimes(t *testing.T) {
	pooled := func(id string, n int, slow float64) Run {
		r := report.Run{NotSent: map[string]int{}}
		for i := range n {
			r.Add(i, &prober.Result{Outcome: prober.OutcomeSuccess, Good: true, E2E: time.Duration(slow * float64(50+i%7) * 1e6)})
		}
		r.Close(time.Now())
		return Run{Report: &report.Report{ID: id, Requests: n, Outcomes: map[prober.Outcome]int{prober.OutcomeSuccess: n}}, Measured: r}
	}
	rounds := make([]Round, 4)
	for k := range rounds {
		rounds[k] = Round{pooled("a", 200, 1), pooled("b", 200, 1.5)}
	}
	c := Analyze(plan.BurstOf(config.Burst{Name: "b"}), Side{Target: "a"}, Side{Target: "b"}, nil, rounds)
	if c.Verdict != decide.Worse {
		t.Errorf("verdict %q %v, want worse on e2e", c.Verdict, c.Reasons)
	}
	for _, m := range c.Metrics {
		tokenTime := m.Metric == "ttft" || m.Metric == "tpot" || m.Metric == "itl"
		if tokenTime != (m.Verdict == decide.NotApplicable) {
			t.Errorf("%s: %q", m.Name(), m.Verdict)
		}
	}
}
