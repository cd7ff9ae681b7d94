package compare

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// paired makes n pairs over two rounds: the baseline's values spread like
// latencies (lognormal around 50 ms), the candidate's each the baseline's
// times factor(round) and a little noise of its own.
func paired(n int, factor func(round int) float64) (base, cand []float64, strata []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		k := i % 2
		b := 0.05 * math.Exp(0.3*rng.NormFloat64())
		base = append(base, b)
		cand = append(cand, b*factor(k)*math.Exp(0.02*rng.NormFloat64()))
		strata = append(strata, k)
	}
	return base, cand, strata
}

func constant(f float64) func(int) float64 { return func(int) float64 { return f } }

func TestMedianShiftVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		factor func(int) float64
		want   Verdict
	}{
		{"worse", 100, constant(1.4), Worse},
		{"better", 100, constant(0.7), Better},
		{"same", 100, constant(1), NoDifference},
		// Significant, but inside the 10 % tolerance.
		{"within tolerance", 100, constant(1.05), NoDifference},
		{"too few", 5, constant(2), TooFew},
		// Pooled it looks 25 % worse; one round says better.
		{"rounds disagree", 100, func(k int) float64 { return []float64{1.7, 0.95}[k] }, Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand, strata := paired(tc.n, tc.factor)
			m := MedianShift("tpot", base, cand, strata, 2, DefaultTolerance)
			if m.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q: %+v", m.Verdict, tc.want, m)
			}
			if len(m.Rounds) != 2 || m.Estimate == nil || m.Pairs != tc.n {
				t.Fatalf("rounds %v, estimate %v, pairs %d", m.Rounds, m.Estimate, m.Pairs)
			}
			if tc.want == TooFew {
				if m.Lower != nil || m.Needs != stats.MinSamples(0.5) {
					t.Errorf("a too-few metric has an interval %v or needs %d", m.Lower, m.Needs)
				}
				return
			}
			if *m.Lower > *m.Estimate || *m.Estimate > *m.Upper {
				t.Errorf("estimate %g outside its interval [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
			}
		})
	}
	base, cand, strata := paired(100, constant(1.4))
	m := MedianShift("tpot", base, cand, strata, 2, DefaultTolerance)
	if *m.Lower < 1.35 || *m.Upper > 1.45 || *m.P > 0.001 {
		t.Errorf("a 40 %% slower candidate: ratio %g [%g, %g], p %g", *m.Estimate, *m.Lower, *m.Upper, *m.P)
	}
	// A tolerance of 50 % (the burst's max_regression) takes the verdict.
	if m := MedianShift("tpot", base, cand, strata, 2, 0.5); m.Verdict != NoDifference {
		t.Errorf("40 %% worse within a 50 %% tolerance: %q", m.Verdict)
	}
}

func TestTailRatioVerdicts(t *testing.T) {
	base, cand, strata := paired(400, constant(1.5))
	m := TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance)
	if m.Verdict != Worse || m.Quantile != "p99" || m.Method != MethodBootstrap || *m.Lower <= 1 {
		t.Errorf("p99 of 400 pairs, 50 %% worse: %+v", m)
	}
	base, cand, strata = paired(400, constant(1))
	if m := TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance); m.Verdict != NoDifference {
		t.Errorf("p99 of the same: %q", m.Verdict)
	}
	base, cand, strata = paired(100, constant(3))
	m = TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance)
	if m.Verdict != TooFew || m.Needs != 368 || m.Estimate == nil || m.Lower != nil {
		t.Errorf("p99 of 100 pairs: %+v", m)
	}
}

func TestGoodputVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand int // good of 100 per round
		want       Verdict
	}{
		{"worse", 95, 60, Worse},
		{"better", 60, 95, Better},
		{"same", 90, 90, NoDifference},
		{"a little worse", 95, 92, NoDifference},
	} {
		good, judged := [][2]int{{tc.base, tc.cand}, {tc.base, tc.cand}}, [][2]int{{100, 100}, {100, 100}}
		m := Goodput(good, judged, DefaultTolerance)
		if m.Verdict != tc.want {
			t.Errorf("%s: %q, want %q: %+v", tc.name, m.Verdict, tc.want, m)
		}
	}
	good, judged := [][2]int{{95, 40}, {60, 95}}, [][2]int{{100, 100}, {100, 100}}
	if m := Goodput(good, judged, DefaultTolerance); m.Verdict == Worse || m.Verdict == Better {
		t.Errorf("rounds pointing both ways: %q", m.Verdict)
	}
}

func TestJudge(t *testing.T) {
	margin := math.Log1p(0.1)
	for _, tc := range []struct {
		est, lo, hi float64
		rounds      []float64
		want        Verdict
	}{
		{0.3, 0.2, 0.4, []float64{0.3, 0.25}, Worse},
		{-0.3, -0.4, -0.2, []float64{-0.3, -0.25}, Better},
		{0.3, -0.01, 0.6, []float64{0.3, 0.25}, NoDifference},   // the interval reaches 1
		{0.05, 0.01, 0.09, []float64{0.05, 0.05}, NoDifference}, // within tolerance
		{0.3, 0.2, 0.4, []float64{0.6, -0.01}, Inconclusive},
		{0.3, 0.2, 0.4, []float64{0.6, 0}, Inconclusive},
		{0.3, 0.2, 0.4, []float64{0.6, math.NaN()}, Worse}, // a round without pairs says nothing
	} {
		if got := Judge(tc.est, tc.lo, tc.hi, margin, tc.rounds); got != tc.want {
			t.Errorf("Judge(%g [%g, %g], rounds %v) = %q, want %q", tc.est, tc.lo, tc.hi, tc.rounds, got, tc.want)
		}
	}
}

// run makes a run of n successful requests in plan order, each taking
// the latencies of the request before slow times f(i).
func run(id string, n int, f func(i int) float64, saturated bool) Run {
	r := report.Run{NotSent: map[string]int{}}
	for i := range n {
		s := f(i)
		res := &prober.Result{Outcome: prober.OutcomeSuccess, Good: true, OutputTokens: 5, OutputChunks: 5,
			TTFT: time.Duration(s * 20e6), TPOT: time.Duration(s * 10e6), E2E: time.Duration(s * 60e6),
			ITL: []time.Duration{time.Duration(s * 10e6), time.Duration(s * 10e6)}}
		r.Add(i, res)
	}
	r.Close(time.Now())
	rep := &report.Report{ID: id, Requests: n, Outcomes: map[prober.Outcome]int{prober.OutcomeSuccess: n}, ClientSaturated: saturated}
	return Run{Report: rep, Measured: r}
}

func TestAnalyze(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]float64, 80)
	for i := range noise {
		noise[i] = math.Exp(0.3 * rng.NormFloat64())
	}
	slow := func(i int) float64 { return 1.4 * noise[i] }
	same := func(i int) float64 { return noise[i] }
	b := config.Burst{Name: "b", Seed: 7, MaxRegression: []config.MaxRegression{{Metric: "ttft", Quantile: "p50", MaxIncrease: 0.5}}}
	rounds := []Round{{run("a1", 80, same, false), run("b1", 80, slow, false)}, {run("a2", 80, same, false), run("b2", 80, slow, false)}}
	c := Analyze(b, Side{Target: "a"}, Side{Target: "b"}, []string{"baseline", "candidate", "candidate", "baseline"}, rounds)
	if c.Verdict != Worse || c.Pairs != 160 || c.Rounds != 2 {
		t.Fatalf("verdict %q, pairs %d, rounds %d: %v", c.Verdict, c.Pairs, c.Rounds, c.Reasons)
	}
	verdicts := map[string]Verdict{}
	for _, m := range c.Metrics {
		verdicts[m.Name()] = m.Verdict
	}
	want := map[string]Verdict{"ttft p50": NoDifference, "tpot p50": Worse, "itl p50": Worse, "e2e p50": Worse, "tpot p99": TooFew, "goodput": NoDifference}
	for name, v := range want {
		if verdicts[name] != v {
			t.Errorf("%s: %q, want %q", name, verdicts[name], v)
		}
	}
	if len(c.Baseline.Samples["tpot"]) != 160 || c.Candidate.Good != 160 || len(c.Candidate.Reports) != 2 {
		t.Errorf("candidate side: %+v", c.Candidate)
	}

	rounds[1].Candidate = run("b2", 80, slow, true)
	if c := Analyze(b, Side{Target: "a"}, Side{Target: "b"}, nil, rounds); c.Verdict != Inconclusive || len(c.Reasons) != 1 {
		t.Errorf("a saturated client: %q %v", c.Verdict, c.Reasons)
	}
	rounds = []Round{{run("a1", 80, same, false), run("b1", 80, same, false)}, {run("a2", 80, same, false), run("b2", 80, same, false)}}
	if c := Analyze(b, Side{}, Side{}, nil, rounds); c.Verdict != NoDifference {
		t.Errorf("the same twice: %q %v", c.Verdict, c.Reasons)
	}
	rounds = []Round{{run("a1", 3, same, false), run("b1", 3, slow, false)}}
	if c := Analyze(b, Side{}, Side{}, nil, rounds); c.Verdict != Inconclusive {
		t.Errorf("3 pairs: %q %v", c.Verdict, c.Reasons)
	}
	rounds = []Round{{run("a1", 0, same, false), run("b1", 5, slow, false)}}
	if c := Analyze(b, Side{}, Side{}, nil, rounds); c.Verdict != NotMeasured {
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
	rounds := []Round{{pooled("a1", 60, 1), pooled("b1", 60, 1.5)}, {pooled("a2", 60, 1), pooled("b2", 60, 1.5)}}
	c := Analyze(config.Burst{Name: "b"}, Side{Target: "a"}, Side{Target: "b"}, nil, rounds)
	if c.Verdict != Worse {
		t.Errorf("verdict %q %v, want worse on e2e", c.Verdict, c.Reasons)
	}
	for _, m := range c.Metrics {
		tokenTime := m.Metric == "ttft" || m.Metric == "tpot" || m.Metric == "itl"
		if tokenTime != (m.Verdict == NotApplicable) {
			t.Errorf("%s: %q", m.Name(), m.Verdict)
		}
	}
}
