package plan

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/shard"
)

// traceBurst loads a one-burst configuration replaying file, its trace
// read as the load reads it.
func traceBurst(t testing.TB, file, extra string) config.Burst {
	return traceBurstAt(t, file, 1, extra)
}

func traceBurstAt(t testing.TB, file string, speedup float64, extra string) config.Burst {
	t.Helper()
	p, err := Parse([]byte(testkit.TraceConfig(file, speedup, extra)), t.Name()+".yml")
	if err != nil {
		t.Fatal(err)
	}
	return p.Bursts[0].Burst
}

// The replayed schedule is the file's: every offset divided by the
// speedup, every length as written, in order, warmup first.
func TestTracePlanIsTheFile(t *testing.T) {
	for _, tc := range []struct {
		file string
		rows func(testing.TB, string) []testkit.TraceRow
	}{
		{"../replay/testdata/azure_sample.csv", testkit.AzureRows},
		{"../replay/testdata/mooncake_sample.jsonl", testkit.MooncakeRows},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			const speedup = 2.5
			rows := tc.rows(t, tc.file)
			b := traceBurst(t, tc.file, fmt.Sprintf("    requests: %d\n    warmup: {requests: 2}\n", len(rows)-2))
			b.Arrival.Speedup = speedup
			got := slices.Collect(arrivalsOf(b, 0))
			if len(got) != len(rows) {
				t.Fatalf("%d arrivals, want the file's %d", len(got), len(rows))
			}
			for i, a := range got {
				w := rows[i]
				want := Arrival{At: time.Duration(float64(w.At) / speedup), Warmup: i < 2, Index: i,
					Input: int32(w.Input), Output: int32(w.Output)}
				if len(w.Blocks) > 0 {
					want.Blocks = packBlocks(w.Blocks)
				}
				if a != want || len(a.BlockIDs()) != len(w.Blocks) {
					t.Errorf("arrival %d: %+v, want %+v", i, a, want)
				}
			}
		})
	}
}

// A duration cuts the trace by time after speedup, and the load counted
// the same cut: the plan and the configuration's bound agree.
func TestTraceDurationCut(t *testing.T) {
	b := traceBurst(t, "../replay/testdata/mooncake_sample.jsonl", "    duration: 2s\n")
	b2 := traceBurstAt(t, "../replay/testdata/mooncake_sample.jsonl", 4, "    duration: 2s\n")
	for _, tc := range []struct {
		b    config.Burst
		want int
	}{{b, 3}, {b2, 6}} { // 0 0 1520 | 3052 ms; at 4x 0 0 380 763 875 1750.125 | 2499.875
		got := slices.Collect(arrivalsOf(tc.b, 0))
		_, planned := requestsOf(tc.b, 0)
		if len(got) != tc.want || planned != tc.want {
			t.Errorf("speedup %g: %d arrivals, %d planned at load, want %d", tc.b.Arrival.Speedup, len(got), planned, tc.want)
		}
	}
}

// A split trace burst shards as any other: the shards' union is the plan.
func TestTraceShards(t *testing.T) {
	b := traceBurst(t, "../replay/testdata/azure_sample.csv", "    requests: 10\n")
	whole := slices.Collect(arrivalsOf(b, 0))
	var union []Arrival
	for i := range 3 {
		union = append(union, slices.Collect(shareOf(b, 0, shard.Shard{Index: i, Count: 3}, nil))...)
	}
	slices.SortFunc(union, func(x, y Arrival) int { return x.Index - y.Index })
	if !slices.Equal(union, whole) {
		t.Errorf("shards' union %v\nwant the plan %v", union, whole)
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
	b := traceBurst(t, path, fmt.Sprintf("    requests: %d\n", lines))
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := live()
	var peak uint64
	n := 0
	for a := range arrivalsOf(b, 0) {
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
	bu := traceBurst(b, path, fmt.Sprintf("    requests: %d\n", b.N))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for range arrivalsOf(bu, 0) {
		n++
	}
	if n != b.N {
		b.Fatalf("%d arrivals, want %d", n, b.N)
	}
}
