package burst

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/sim"
)

// traceBurst loads a one-burst configuration replaying file.
func traceBurst(t testing.TB, file, extra string) (config.Burst, []config.Scenario) {
	return traceBurstAt(t, file, 1, extra)
}

func traceBurstAt(t testing.TB, file string, speedup float64, extra string) (config.Burst, []config.Scenario) {
	t.Helper()
	cfg := testkit.Config(t, fmt.Sprintf(`
targets: [{name: t, url: "http://127.0.0.1:1"}]
scenarios:
  - name: s
    prompt_tokens: {distribution: uniform, min: 1, max: 4000}
    output_tokens: {distribution: uniform, min: 1, max: 100}
    slo: {ttft: 5s, target_ratio: 0.9}
limits: {max_planned_requests: 1000000, max_burst_memory: 4GiB}
bursts:
  - name: b
    target: t
    scenarios: [{scenario: s}]
    max_concurrency: 16
    arrival: {process: trace, file: %q, speedup: %g}
%s`, file, speedup, extra))
	b, _ := cfg.Burst("b")
	return b, cfg.ScenariosOf(b)
}

type traceRow struct {
	at            time.Duration
	input, output int
	blocks        []int64 // hash ids, nil for none
}

// The trace files read here with the standard library alone, not the replay package.
func azureRows(t *testing.T, path string) []traceRow {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []traceRow
	var t0 time.Time
	for i, r := range recs[1:] {
		ts, err := time.Parse("2006-01-02 15:04:05.0000000", r[0])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t0 = ts
		}
		in, _ := strconv.Atoi(r[1])
		o, _ := strconv.Atoi(r[2])
		out = append(out, traceRow{at: ts.Sub(t0), input: in, output: o})
	}
	return out
}

func mooncakeRows(t *testing.T, path string) []traceRow {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []traceRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct {
			Timestamp float64 `json:"timestamp"`
			In        int     `json:"input_length"`
			Out       int     `json:"output_length"`
			IDs       []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		r := traceRow{at: time.Duration(m.Timestamp * 1e6), input: m.In, output: m.Out}
		r.blocks = m.IDs
		out = append(out, r)
	}
	return out
}

// The replayed schedule is the file's: every offset divided by the
// speedup, every length as written, in order, warmup first.
func TestTracePlanIsTheFile(t *testing.T) {
	for _, tc := range []struct {
		file string
		rows func(*testing.T, string) []traceRow
	}{
		{"../replay/testdata/azure_sample.csv", azureRows},
		{"../replay/testdata/mooncake_sample.jsonl", mooncakeRows},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			const speedup = 2.5
			rows := tc.rows(t, tc.file)
			b, _ := traceBurst(t, tc.file, fmt.Sprintf("    requests: %d\n    warmup: {requests: 2}\n", len(rows)-2))
			b.Arrival.Speedup = speedup
			got := slices.Collect(Plan(b, 0))
			if len(got) != len(rows) {
				t.Fatalf("%d arrivals, want the file's %d", len(got), len(rows))
			}
			for i, a := range got {
				w := rows[i]
				want := Arrival{At: time.Duration(float64(w.at) / speedup), Warmup: i < 2, Index: i,
					Input: int32(w.input), Output: int32(w.output)}
				if len(w.blocks) > 0 {
					want.Blocks = packBlocks(w.blocks)
				}
				if a != want || len(a.BlockIDs()) != len(w.blocks) {
					t.Errorf("arrival %d: %+v, want %+v", i, a, want)
				}
			}
		})
	}
}

// A duration cuts the trace by time after speedup, and the load counted
// the same cut: the plan and the configuration's bound agree.
func TestTraceDurationCut(t *testing.T) {
	b, _ := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    duration: 2s\n")
	b2, _ := traceBurstAt(t, "../replay/testdata/mooncake_sample.jsonl", 4, "    duration: 2s\n")
	for _, tc := range []struct {
		b    config.Burst
		want int
	}{{b, 3}, {b2, 6}} { // 0 0 1520 | 3052 ms; at 4x 0 0 380 763 875 1750.125 | 2499.875
		got := slices.Collect(Plan(tc.b, 0))
		_, planned := tc.b.PlannedRequests(0)
		if len(got) != tc.want || planned != tc.want {
			t.Errorf("speedup %g: %d arrivals, %d planned at load, want %d", tc.b.Arrival.SpeedupOrOne(), len(got), planned, tc.want)
		}
	}
}

// A split trace burst shards as any other: the shards' union is the plan.
func TestTraceShards(t *testing.T) {
	b, _ := traceBurst(t, "../replay/testdata/azure_sample.csv", "    requests: 10\n")
	whole := slices.Collect(Plan(b, 0))
	var union []Arrival
	for i := range 3 {
		union = append(union, slices.Collect(ShardPlan(b, 0, shard.Shard{Index: i, Count: 3}))...)
	}
	slices.SortFunc(union, func(x, y Arrival) int { return x.Index - y.Index })
	if !slices.Equal(union, whole) {
		t.Errorf("shards' union %v\nwant the plan %v", union, whole)
	}
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
	rep, err := Runner{Client: c, Progress: progress}.Run(context.Background(), b, scenarios)
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
	rows := mooncakeRows(t, "../replay/testdata/mooncake_sample.jsonl")
	run := Runner{Client: c}.runRate(context.Background(), b, scenarios, b.Rates()[0])
	for i, res := range run.Results {
		w := rows[run.Index[i]]
		if res.PromptTokensRequested != min(w.input, 4000) || res.OutputTokens != min(w.output, 100) {
			t.Errorf("request %d: prompt %d, output %d tokens; the trace says %d and %d, clamped to 4000 and 100",
				run.Index[i], res.PromptTokensRequested, res.OutputTokens, w.input, w.output)
		}
	}
}

// Replaying a trace of 200,000 lines holds no more of it than a
// line: the live heap after the plan has gone through it is where it
// started, within a wide margin far below the file's size.
func TestTraceReplayHeapFlat(t *testing.T) {
	const lines = 200_000
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range lines {
		fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d, %d]}`+"\n", i*2, 100+i%900, 1+i%300, i%7, i, i+1)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	b, _ := traceBurst(t, path, fmt.Sprintf("    requests: %d\n", lines))
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := live()
	var peak uint64
	n := 0
	for a := range Plan(b, 0) {
		n++
		if a.Index%20_000 == 0 {
			peak = max(peak, live())
		}
	}
	t.Logf("%d arrivals from a %d MiB trace; live heap %d KiB before, at most %d KiB during", n, st.Size()>>20, base>>10, peak>>10)
	if n != lines {
		t.Fatalf("%d arrivals, want %d", n, lines)
	}
	if grew := int64(peak) - int64(base); grew > 4<<20 {
		t.Errorf("the live heap grew by %d KiB while replaying a %d MiB trace; it should hold a line", grew>>10, st.Size()>>20)
	}
}

// BenchmarkTracePlan reports the bytes a replayed arrival allocates (all
// of it garbage by the next line) and the rate the plan reads at.
func BenchmarkTracePlan(b *testing.B) {
	path := filepath.Join(b.TempDir(), "t.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range b.N {
		fmt.Fprintf(w, `{"timestamp": %d, "input_length": 700, "output_length": 20, "hash_ids": [0, %d, %d]}`+"\n", i, i, i+1)
	}
	_ = w.Flush()
	_ = f.Close()
	bu, _ := traceBurst(b, path, fmt.Sprintf("    requests: %d\n", b.N))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for range Plan(bu, 0) {
		n++
	}
	if n != b.N {
		b.Fatalf("%d arrivals, want %d", n, b.N)
	}
}

// A trace burst split over shards sends what one runner sends, prompts and
// lengths included, and the merged report counts the same replay.
func TestTraceShardRunnersMerge(t *testing.T) {
	c, sent := recordingSim(t)
	b, scenarios := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    requests: 6\n    warmup: {requests: 2}\n")
	b.Arrival.Speedup = 40
	whole, err := Runner{Client: c}.Run(context.Background(), b, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	alone := sent()
	start := time.Now().Add(300 * time.Millisecond)
	parts := make([]report.Part, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := Runner{Client: c, Shard: shard.Shard{Index: i, Count: 2}, Start: start}.Run(context.Background(), b, scenarios)
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
	merged, err := report.Merge(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Trace == nil || *merged.Trace != *whole.Trace || whole.Trace.Records != 8 {
		t.Errorf("merged trace facts %+v, one runner's %+v (8 records)", merged.Trace, whole.Trace)
	}
	var text strings.Builder
	merged.WriteText(&text)
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
	run := Runner{Client: c}.runRate(context.Background(), b, scenarios, b.Rates()[0])
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
