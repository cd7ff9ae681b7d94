package compare

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/plan"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// withQuality makes run's answers pass their checks where passes(i) says.
func withQuality(r Run, passes func(i int) bool) Run {
	for i, res := range r.Measured.Results {
		res.Quality = &prober.QualityResult{Passed: passes(i)}
		res.Good = res.Good && res.Quality.Passed
	}
	return r
}

// A candidate faster on every latency whose answers are worse is never
// called better: worse beyond the tolerance, within tolerance when
// significantly worse inside it; with answers as good it is better.
func TestFasterButWorseAnswersIsNotBetter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise, jitter := make([]float64, 400), make([]float64, 400)
	for i := range noise {
		noise[i], jitter[i] = math.Exp(0.3*rng.NormFloat64()), math.Exp(0.02*rng.NormFloat64())
	}
	slow := func(i int) float64 { return noise[i] }
	fast := func(i int) float64 { return 0.6 * noise[i] * jitter[i] }
	b := func() []Round {
		rounds := make([]Round, 4)
		for k := range rounds {
			rounds[k] = Round{run("a", 400, slow, 0), run("b", 400, fast, 0)}
		}
		return rounds
	}
	all := func(int) bool { return true }
	for _, tc := range []struct {
		name          string
		cand          func(i int) bool
		want, quality decide.Verdict
	}{
		{"as good answers", all, decide.Better, decide.Within},
		{"one answer in 5 wrong", func(i int) bool { return i%5 != 0 }, decide.Worse, decide.Worse},
		// Significantly worse answers, within the tolerance: not better.
		{"one answer in 160 wrong", func(i int) bool { return i%160 != 7 }, decide.Within, decide.Within},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := b()
			for k := range rounds {
				rounds[k].Baseline = withQuality(rounds[k].Baseline, all)
				rounds[k].Candidate = withQuality(rounds[k].Candidate, tc.cand)
			}
			c := Analyze(plan.BurstOf(config.Burst{Name: "b"}), Side{Target: "slow"}, Side{Target: "fast"}, nil, rounds)
			q := c.Metrics[len(c.Metrics)-1]
			if c.Verdict != tc.want || q.Metric != "quality" || q.Verdict != tc.quality {
				t.Fatalf("verdict %q (quality %q), want %q (quality %q): %v", c.Verdict, q.Verdict, tc.want, tc.quality, c.Reasons)
			}
			if c.Candidate.QualityChecked != 1600 || c.Baseline.QualityPassed != 1600 {
				t.Errorf("candidate checked %d, baseline passed %d, want 1600 each", c.Candidate.QualityChecked, c.Baseline.QualityPassed)
			}
			// llmprobe's own delay as large as the latencies leaves them
			// undecided, not the answers.
			for _, res := range rounds[1].Candidate.Measured.Results {
				res.ReadDelay, res.ReadDelayFirst, res.ReadDelayLast = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
			}
			want := decide.NotEnough
			if tc.quality == decide.Worse {
				want = decide.Worse
			}
			if c := Analyze(plan.BurstOf(config.Burst{Name: "b"}), Side{Target: "slow"}, Side{Target: "fast"}, nil, rounds); c.Verdict != want {
				t.Errorf("with a saturated client: %q, want %q: %v", c.Verdict, want, c.Reasons)
			}
		})
	}
}
