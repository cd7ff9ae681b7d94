package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// checked makes n pairs over two rounds: the baseline passes with
// base(round), the candidate's answer to the same line passes with
// cand(round) where the baseline's passed and failOK where it failed.
func checked(n int, base, cand func(round int) float64, failOK float64) (passed [][2]bool, strata []int) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		k := i % 2
		b := rng.Float64() < base(k)
		c := rng.Float64() < cand(k)
		if !b {
			c = rng.Float64() < failOK
		}
		passed, strata = append(passed, [2]bool{b, c}), append(strata, k)
	}
	return passed, strata
}

func TestQualityVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		base, cand func(int) float64
		failOK     float64
		want       Verdict
	}{
		{"worse", 400, constant(0.95), constant(0.8), 0.1, Worse},
		{"better", 400, constant(0.8), constant(1), 0.9, Better},
		{"same", 400, constant(0.95), constant(1), 0, NoDifference},
		// A drop of about a point, significant on 4000 pairs, within the
		// 2-point tolerance.
		{"within tolerance", 4000, constant(0.95), constant(0.99), 0, NoDifference},
		// 40 pairs could not show a 2-point drop: too few, not "no difference".
		{"too few", 40, constant(0.95), constant(0.99), 0, TooFew},
		// 20 points worse on 40 pairs is shown whatever their number.
		{"worse on few pairs", 40, constant(1), constant(0.7), 0, Worse},
		{"rounds disagree", 400, constant(0.9), func(k int) float64 { return []float64{0.6, 1}[k] }, []float64{0.2}[0], Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			passed, strata := checked(tc.n, tc.base, tc.cand, tc.failOK)
			m := Quality(passed, strata, 2, QualityTolerance)
			if m.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q: estimate %v [%v, %v] p %v", m.Verdict, tc.want, *m.Estimate, *m.Lower, *m.Upper, *m.P)
			}
			if m.Method != MethodMcNemar || m.Pairs != tc.n || m.Needs != 300 || len(m.Rounds) != 2 {
				t.Errorf("method %s, pairs %d, needs %d, rounds %v", m.Method, m.Pairs, m.Needs, m.Rounds)
			}
			if *m.Lower > *m.Estimate || *m.Estimate > *m.Upper {
				t.Errorf("estimate %g outside its interval [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
			}
			if tc.name == "within tolerance" && !m.SignificantlyWorse() {
				t.Errorf("a significant drop within the tolerance is not SignificantlyWorse: %+v", m)
			}
		})
	}
	if m := Quality(nil, nil, 2, QualityTolerance); m.Verdict != TooFew || m.Estimate != nil {
		t.Errorf("no checked pairs: %+v", m)
	}
}

// withQuality makes run's answers pass their checks where passes(i) says.
func withQuality(r Run, passes func(i int) bool) Run {
	for i, res := range r.Measured.Results {
		res.Quality = &prober.QualityResult{Passed: passes(i)}
		res.Good = res.Good && res.Quality.Passed
	}
	return r
}

// A candidate faster on every latency whose answers are worse is never
// called better: worse beyond the tolerance, no significant difference
// within it; with answers as good it is better.
func TestFasterButWorseAnswersIsNotBetter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]float64, 400)
	for i := range noise {
		noise[i] = math.Exp(0.3 * rng.NormFloat64())
	}
	slow := func(i int) float64 { return noise[i] }
	fast := func(i int) float64 { return 0.6 * noise[i] }
	b := func() []Round {
		return []Round{{run("a1", 400, slow, false), run("b1", 400, fast, false)}, {run("a2", 400, slow, false), run("b2", 400, fast, false)}}
	}
	all := func(int) bool { return true }
	for _, tc := range []struct {
		name          string
		cand          func(i int) bool
		want, quality Verdict
	}{
		{"as good answers", all, Better, NoDifference},
		{"one answer in 5 wrong", func(i int) bool { return i%5 != 0 }, Worse, Worse},
		{"one answer in 80 wrong", func(i int) bool { return i%80 != 7 }, NoDifference, NoDifference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := b()
			for k := range rounds {
				rounds[k].Baseline = withQuality(rounds[k].Baseline, all)
				rounds[k].Candidate = withQuality(rounds[k].Candidate, tc.cand)
			}
			c := Analyze(config.Burst{Name: "b"}, Side{Target: "slow"}, Side{Target: "fast"}, nil, rounds)
			q := c.Metrics[len(c.Metrics)-1]
			if c.Verdict != tc.want || q.Metric != "quality" || q.Verdict != tc.quality {
				t.Fatalf("verdict %q (quality %q), want %q (quality %q): %v", c.Verdict, q.Verdict, tc.want, tc.quality, c.Reasons)
			}
			if c.Candidate.QualityChecked != 800 || c.Baseline.QualityPassed != 800 {
				t.Errorf("candidate checked %d, baseline passed %d, want 800 each", c.Candidate.QualityChecked, c.Baseline.QualityPassed)
			}
			// A saturated client leaves the latencies undecided, not the answers.
			rounds[1].Candidate.Report.ClientSaturated = true
			want := Inconclusive
			if tc.quality == Worse {
				want = Worse
			}
			if c := Analyze(config.Burst{Name: "b"}, Side{Target: "slow"}, Side{Target: "fast"}, nil, rounds); c.Verdict != want {
				t.Errorf("with a saturated client: %q, want %q: %v", c.Verdict, want, c.Reasons)
			}
		})
	}
}
