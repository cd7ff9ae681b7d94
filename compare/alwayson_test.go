package compare

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// seen counts results by target and traffic, and requests in flight.
type seen struct {
	mu       sync.Mutex
	results  map[string]int
	inFlight int
}

func (s *seen) Observe(r *prober.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[r.Target+"/"+r.Traffic]++
}
func (s *seen) Started(string, string, string)  { s.mu.Lock(); s.inFlight++; s.mu.Unlock() }
func (s *seen) Finished(string, string, string) { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }

// Two real sims, the candidate's decode 40 % slower, compared every 100 ms:
// the comparison fails on TPOT's median; a comparison of the baseline with
// an identical sim never fails; one whose candidate refuses
// connections counts its pairs as failed and shows no figure.
func TestRunnerAgainstSims(t *testing.T) {
	// Each comparison has a baseline of its own: a sim shared by three
	// would serve three streams where its candidate serves one.
	// Decode steps of 40 ms: a few milliseconds of a busy CI machine stay
	// a small part of every token gap.
	steps := func(slowdown float64) func(*sim.Config) {
		return func(c *sim.Config) { c.DecodeBase = time.Duration(slowdown * float64(40*time.Millisecond)) }
	}
	base1, _ := testkit.StartSim(t, steps(1))
	base2, _ := testkit.StartSim(t, steps(1))
	base3, _ := testkit.StartSim(t, steps(1))
	same, _ := testkit.StartSim(t, steps(1))
	slow, _ := testkit.StartSim(t, steps(1.4))
	dead, _ := testkit.StartSim(t, nil)
	dead.Close()
	cfg := testkit.Config(t, fmt.Sprintf(`targets:
  - {name: base1, url: %q, model: m, timeout: 5s}
  - {name: base2, url: %q, model: m, timeout: 5s}
  - {name: base3, url: %q, model: m, timeout: 5s}
  - {name: same, url: %q, model: m, timeout: 5s}
  - {name: slow, url: %q, model: m, timeout: 5s}
  - {name: dead, url: %q, model: m, timeout: 5s}
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 8}
canary: {interval: 100ms}
comparisons:
  - {name: slower, baseline: base1, candidate: slow, window: 20s, min_pairs: 20}
  - {name: identical, baseline: base2, candidate: same, window: 20s, min_pairs: 20}
  - {name: down, baseline: base3, candidate: dead, window: 20s, min_pairs: 20}
`, base1.URL, base2.URL, base3.URL, same.URL, slow.URL, dead.URL))
	clients := map[string]*prober.Client{}
	for _, target := range cfg.Targets {
		c, err := prober.NewClient(target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		clients[target.Name] = c
	}
	obs := &seen{results: map[string]int{}}
	r := NewAlwaysOn(context.Background(), log.NewNopLogger(), obs, obs)
	r.every = 0 // every pair
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r)
	r.Apply(plan.Of(cfg), clients)
	defer r.Stop()

	gauge := func(name, comparison, metric string) (float64, bool) {
		return value(t, reg, name, map[string]string{"comparison": comparison, "metric": metric, "percentile": "p50"})
	}
	testkit.WaitUntil(t, "the slower candidate failed and 40 pairs in the identical comparison's epoch", 40*time.Second, func() bool {
		d, _ := value(t, reg, "llmprobe_comparison_decision", map[string]string{"comparison": "slower"})
		b, _ := value(t, reg, "llmprobe_comparison_pairs", map[string]string{"comparison": "identical"})
		return d == -1 && b >= 40
	})
	if v, _ := value(t, reg, "llmprobe_comparison_metric_decision", map[string]string{"comparison": "slower", "metric": "tpot"}); v != -1 {
		ratio, _ := gauge("llmprobe_comparison_ratio", "slower", "tpot")
		t.Errorf("40 %% slower decode: tpot decision %g, ratio %.3f", v, ratio)
	}
	if lo, _ := gauge("llmprobe_comparison_ratio_lower", "slower", "tpot"); lo <= 1.1 {
		t.Errorf("40 %% slower decode failed with the interval's lower end at %.3f, inside the tolerance", lo)
	}
	for _, metric := range []string{"ttft", "tpot", "itl", "e2e"} {
		if v, _ := value(t, reg, "llmprobe_comparison_metric_decision", map[string]string{"comparison": "identical", "metric": metric}); v == -1 {
			ratio, _ := gauge("llmprobe_comparison_ratio", "identical", metric)
			t.Errorf("identical sims: %s failed, ratio %.3f", metric, ratio)
		}
	}
	if _, ok := gauge("llmprobe_comparison_ratio", "down", "e2e"); ok {
		t.Error("a comparison whose candidate never answers has a ratio")
	}
	if d, _ := value(t, reg, "llmprobe_comparison_decision", map[string]string{"comparison": "down"}); d != 0 {
		t.Errorf("a comparison with no measured pair decided %g", d)
	}
	if n, _ := value(t, reg, "llmprobe_comparison_pairs_total", map[string]string{"comparison": "down", "result": "candidate_failed"}); n == 0 {
		t.Error("the failed pairs are not counted")
	}
	lines := strings.Join(r.Lines(), "\n")
	t.Log(lines)
	if !strings.Contains(lines, "slower, scenario s: candidate slow (") || !strings.Contains(lines, ": fail — ") || !strings.Contains(lines, "worse beyond 10 %, decided") {
		t.Errorf("landing lines:\n%s", lines)
	}
	obs.mu.Lock()
	if obs.results["slow/comparison"] == 0 || obs.results["base1/comparison"] == 0 {
		t.Errorf("results observed: %v", obs.results)
	}
	obs.mu.Unlock()

	// A reload without the comparisons stops them and their series go.
	cfg.Comparisons = nil
	r.Apply(plan.Of(cfg), clients)
	if n := testutil.CollectAndCount(r); n != 0 {
		t.Errorf("%d series after the comparisons were removed", n)
	}
}

// value is the series of family name whose labels hold want, from reg.
func value(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if l[k] != v {
					continue series
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
