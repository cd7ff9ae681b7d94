package burst

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/sim"
)

// traceBurst loads a one-burst configuration replaying file, its trace
// read as the load reads it.
func traceBurst(t testing.TB, file, extra string) (config.Burst, []config.Scenario) {
	t.Helper()
	cfg, err := plan.Parse([]byte(testkit.TraceConfig(file, 1, extra)), t.Name()+".yml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cfg.Burst("b")
	return b.Burst, b.ScenarioConfigs()
}

// Against the sim: each request asks for the trace's lengths, clamped to
// the scenario's maxima, and the report counts the clamps.
func TestTraceReplayAgainstSim(t *testing.T) {
	c, _ := serialSim(t, 64)
	// The trace ends before the hour; 12 s of trace at 20x take 0.6 s.
	b, scenarios := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    duration: 1h\n")
	b.Arrival.Speedup = 20
	var lastDone, lastTotal atomic.Int64
	progress := func(done, total int) { lastDone.Store(int64(done)); lastTotal.Store(int64(total)) }
	rep, err := Runner{Client: c, Progress: progress}.Run(context.Background(), plan.BurstOf(b, scenarios...))
	if err != nil {
		t.Fatal(err)
	}
	if lastDone.Load() != 8 || lastTotal.Load() != 8 {
		t.Errorf("progress ended at %d of %d, want 8 of the trace's 8", lastDone.Load(), lastTotal.Load())
	}
	want := report.TraceReplay{File: "../replay/testdata/mooncake_sample.jsonl", Format: "mooncake", Speedup: 20, Records: 8, ClampedPrompt: 1, ClampedOutput: 2}
	if rep.Trace == nil || *rep.Trace != want {
		t.Fatalf("trace facts %+v, want %+v", rep.Trace, want)
	}
	if rep.Requests != 8 {
		t.Fatalf("%d requests, want 8", rep.Requests)
	}
	rows := testkit.MooncakeRows(t, "../replay/testdata/mooncake_sample.jsonl")
	pb := plan.BurstOf(b, scenarios...)
	run := Runner{Client: c}.runRate(context.Background(), pb, pb.Rates()[0])
	for i, res := range run.Results {
		w := rows[run.Index[i]]
		if res.PromptTokensRequested != min(w.Input, 4000) || res.OutputTokens != min(w.Output, 100) {
			t.Errorf("request %d: prompt %d, output %d tokens; the trace says %d and %d, clamped to 4000 and 100",
				run.Index[i], res.PromptTokensRequested, res.OutputTokens, w.Input, w.Output)
		}
	}
}

// A trace burst split over shards sends what one runner sends, prompts and
// lengths included, and the merged report counts the same replay.
func TestTraceShardRunnersMerge(t *testing.T) {
	c, sent := recordingSim(t)
	b, scenarios := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    requests: 6\n    warmup: {requests: 2}\n")
	b.Arrival.Speedup = 40
	whole, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, scenarios...))
	if err != nil {
		t.Fatal(err)
	}
	alone := sent()
	start := time.Now().Add(300 * time.Millisecond)
	parts := make([]report.ShardReport, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := Runner{Client: c, Shard: shard.Shard{Index: i, Count: 2}, Start: start}.Run(context.Background(), plan.BurstOf(b, scenarios...))
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
	merged, err := mergeShards(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Trace == nil || *merged.Trace != *whole.Trace || whole.Trace.Records != 8 {
		t.Errorf("merged trace facts %+v, one runner's %+v (8 records)", merged.Trace, whole.Trace)
	}
	var text strings.Builder
	render.Text(&text, merged)
	if want := "trace ../replay/testdata/mooncake_sample.jsonl (mooncake, speedup 40): 8 records replayed; 1 prompts and 2 outputs clamped"; !strings.Contains(text.String(), want) {
		t.Errorf("report text lacks %q:\n%s", want, text.String())
	}
}

// Mooncake's hash ids name shared prefixes: replayed against an engine with
// a prefix cache, a record finds cached exactly the blocks an earlier record
// with the same leading ids sent, and one with new ids finds none.
func TestTraceSharedBlocksHitTheCache(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.MaxBatch, c.MaxQueue, c.PrefixCacheTokens = 64, 1000, 1<<20
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = time.Millisecond, 0, time.Millisecond, 0
	})
	c, err := prober.NewClient(testkit.Target(srv.URL, config.APICompletions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, scenarios := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    duration: 1h\n")
	b.Arrival.Speedup = 20
	pb := plan.BurstOf(b, scenarios...)
	run := Runner{Client: c}.runRate(context.Background(), pb, pb.Rates()[0])
	cached := map[int]int{}
	for i, res := range run.Results {
		if res.Outcome != prober.OutcomeSuccess || !res.CachedReported {
			t.Fatalf("line %d: %s %s, cached tokens reported: %v", run.Index[i]+1, res.Outcome, res.Error, res.CachedReported)
		}
		cached[run.Index[i]+1] = res.CachedPromptTokens
	}
	// Lines 1 and 2 arrive together and share block 0: whichever the
	// engine admitted second found it.
	if first, second := min(cached[1], cached[2]), max(cached[1], cached[2]); first != 0 || second != 512 {
		t.Errorf("lines 1 and 2 found %d and %d tokens cached, want 0 and 512 (block 0)", cached[1], cached[2])
	}
	for line, want := range map[int]int{3: 0, 4: 1024, 5: 0, 6: 1024, 7: 0, 8: 512} {
		if cached[line] != want {
			t.Errorf("line %d found %d tokens cached, want %d", line, cached[line], want)
		}
	}
}
