package burst

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/sim"
)

// The shards of a split burst make up exactly the single-process plan:
// every arrival once, at the same offset, with the same scenario, warmup
// thinned like the rest; each shard gets its share to within one.
func TestShardPlansMakeUpThePlan(t *testing.T) {
	for _, tc := range []struct {
		process    string
		burstiness float64
		shards     int
	}{
		{config.ArrivalPoisson, 1, 3},
		{config.ArrivalConstant, 1, 2},
		{config.ArrivalGamma, 0.25, 5},
		{config.ArrivalPoisson, 1, 1},
	} {
		b := testBurst(tc.process, 40, tc.burstiness)
		b.Requests, b.Duration = 0, config.Duration(20*time.Second)
		b.Warmup = config.Warmup{Duration: config.Duration(2 * time.Second)}
		b.Scenarios = []config.WeightedScenario{{Scenario: "a", Weight: 3}, {Scenario: "b", Weight: 1}}
		whole := slices.Collect(Plan(b, 40))
		var union []Arrival
		for i := range tc.shards {
			share := slices.Collect(ShardPlan(b, 40, shard.Shard{Index: i, Count: tc.shards}))
			if n := len(whole) / tc.shards; len(share) < n || len(share) > n+1 {
				t.Errorf("%s, shard %d/%d: %d of %d arrivals", tc.process, i, tc.shards, len(share), len(whole))
			}
			for _, a := range share {
				if a.Index%tc.shards != i {
					t.Fatalf("%s: shard %d/%d has arrival %d", tc.process, i, tc.shards, a.Index)
				}
			}
			union = append(union, share...)
		}
		slices.SortFunc(union, func(x, y Arrival) int { return cmp.Compare(x.Index, y.Index) })
		if !slices.Equal(union, whole) {
			t.Errorf("%s over %d shards: the union is not the plan", tc.process, tc.shards)
		}
		for i, a := range whole {
			if a.Index != i {
				t.Fatalf("arrival %d has index %d", i, a.Index)
			}
		}
		if !slices.ContainsFunc(whole, func(a Arrival) bool { return a.Warmup }) {
			t.Error("the plan has no warmup")
		}
	}
	// The zero shard is the whole plan.
	b := testBurst(config.ArrivalPoisson, 40, 1)
	if !slices.Equal(slices.Collect(ShardPlan(b, 40, shard.Shard{})), slices.Collect(Plan(b, 40))) {
		t.Error("the zero shard is not the plan")
	}
}

// recordingSim is the simulated engine behind a server that keeps the body
// of every completion request it gets.
func recordingSim(t *testing.T) (*prober.Client, func() [][]byte) {
	t.Helper()
	e, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost { // not the target-info GETs each run makes
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		e.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); e.Close() })
	target := testkit.Target(srv.URL, config.APICompletions)
	target.Model = "sim-model"
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(bodies)
		bodies = nil
		slices.SortFunc(out, bytes.Compare)
		return out
	}
}

// Three runners, each with its shard and the shared start, send exactly the
// requests one runner sends alone, prompts and nonces included (so the
// shards never share a prefix-cache entry the single run would not), each
// due at its planned offset; their merged report counts what the single
// run counts.
func TestShardRunnersSendTheWholeBurst(t *testing.T) {
	c, sent := recordingSim(t)
	b := burstOf(config.ArrivalPoisson, 30, 0)
	b.Duration, b.Requests, b.Warmup = 0, 30, config.Warmup{Requests: 3}
	scenarios := []config.Scenario{burstScenario()}
	whole, err := Runner{Client: c}.Run(context.Background(), b, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	alone := sent()

	start := time.Now().Add(300 * time.Millisecond)
	parts := make([]report.Part, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := Runner{Client: c, Shard: shard.Shard{Index: i, Count: 3}, Start: start}.Run(context.Background(), b, scenarios)
			if err != nil {
				t.Error(err)
			}
			parts[i] = report.Part{Name: rep.ID, Report: rep}
		}()
	}
	wg.Wait()
	if split := sent(); !slices.EqualFunc(split, alone, bytes.Equal) {
		t.Errorf("the shards sent %d requests, one runner %d, and they differ", len(split), len(alone))
	}
	planned := map[int]time.Duration{}
	for a := range Plan(b, 30) {
		planned[a.Index] = a.At
	}
	for _, p := range parts {
		for _, q := range p.Report.Shard.Requests {
			if time.Duration(q.At) != planned[q.N] {
				t.Errorf("%s: request %d due at +%s, planned at +%s", p.Name, q.N, time.Duration(q.At), planned[q.N])
			}
		}
	}
	merged, err := report.Merge(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged.PlannedRequests != whole.PlannedRequests || merged.Requests != whole.Requests || merged.WarmupRequests != whole.WarmupRequests ||
		merged.Latency["itl"].Count != whole.Latency["itl"].Count {
		t.Errorf("merged: planned %d, sent %d, warmup %d, itl %d; one runner: %d, %d, %d, %d", merged.PlannedRequests, merged.Requests, merged.WarmupRequests,
			merged.Latency["itl"].Count, whole.PlannedRequests, whole.Requests, whole.WarmupRequests, whole.Latency["itl"].Count)
	}
}
