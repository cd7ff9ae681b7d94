package burst

import (
	"bytes"
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
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/sim"
)

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
	whole, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, scenarios...))
	if err != nil {
		t.Fatal(err)
	}
	alone := sent()

	start := time.Now().Add(300 * time.Millisecond)
	parts := make([]report.ShardReport, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := Runner{Client: c, Shard: shard.Shard{Index: i, Count: 3}, Start: start}.Run(context.Background(), plan.BurstOf(b, scenarios...))
			if err != nil {
				t.Error(err)
			}
			parts[i] = report.ShardReport{Name: rep.ID, Report: rep}
		}()
	}
	wg.Wait()
	if split := sent(); !slices.EqualFunc(split, alone, bytes.Equal) {
		t.Errorf("the shards sent %d requests, one runner %d, and they differ", len(split), len(alone))
	}
	planned := map[int]time.Duration{}
	for a := range plan.BurstOf(b, scenarios...).Arrivals(30) {
		planned[a.Index] = a.At
	}
	for _, p := range parts {
		for _, q := range p.Report.Shard.Requests {
			if time.Duration(q.At) != planned[q.N] {
				t.Errorf("%s: request %d due at +%s, planned at +%s", p.Name, q.N, time.Duration(q.At), planned[q.N])
			}
		}
	}
	merged, err := mergeShards(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged.PlannedRequests != whole.PlannedRequests || merged.Requests != whole.Requests || merged.WarmupRequests != whole.WarmupRequests ||
		merged.Latency["itl"].Count != whole.Latency["itl"].Count {
		t.Errorf("merged: planned %d, sent %d, warmup %d, itl %d; one runner: %d, %d, %d, %d", merged.PlannedRequests, merged.Requests, merged.WarmupRequests,
			merged.Latency["itl"].Count, whole.PlannedRequests, whole.Requests, whole.WarmupRequests, whole.Latency["itl"].Count)
	}
}

// mergeShards is llmprobe report merge's merge: the shards' report, judged
// by the one pipeline against baseline.
func mergeShards(parts []report.ShardReport, baseline *report.Report) (*report.Report, error) {
	merged, b, err := report.MergeShards(parts)
	if err != nil {
		return nil, err
	}
	return merged, Pipeline{Baseline: baseline}.Finish(merged, b.MaxRegression, 0, nil)
}
