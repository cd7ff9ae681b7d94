package burst

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/stats"
)

// The runtime's histograms as TailOf reads them: bucket i holds
// [Buckets[i], Buckets[i+1]), the first from -Inf, the last to +Inf.
var buckets = []float64{math.Inf(-1), 0, 0.001, 0.002, 0.004, 0.008, 140737.488355328, math.Inf(1)}

func hist(counts ...uint64) *metrics.Float64Histogram {
	c := make([]uint64, len(buckets)-1)
	copy(c, counts)
	return &metrics.Float64Histogram{Counts: c, Buckets: buckets}
}

func TestTailOf(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name          string
		before, after *metrics.Float64Histogram
		want          stats.Tail
	}{
		{"nothing new is n/a, not 0", hist(0, 5, 2), hist(0, 5, 2), stats.Tail{}},
		{"one sample: its bucket's upper bound", hist(), hist(0, 0, 1), stats.Tail{Count: 1, P99: f(0.002), Max: f(0.002)}},
		{"only the run's samples count", hist(0, 1000, 0, 0, 7), hist(0, 1099, 0, 0, 8), stats.Tail{Count: 100, P99: f(0.001), Max: f(0.008)}},
		{"p99 is the nearest rank", hist(), hist(0, 98, 0, 2), stats.Tail{Count: 100, P99: f(0.004), Max: f(0.004)}},
		{"zero-length waits", hist(), hist(0, 3), stats.Tail{Count: 3, P99: f(0.001), Max: f(0.001)}},
		{"the open top bucket counts as its lower edge", hist(), hist(0, 1, 0, 0, 0, 0, 1), stats.Tail{Count: 2, P99: f(140737.488355328), Max: f(140737.488355328)}},
		{"a count that seems to fall adds nothing", hist(0, 10, 5), hist(0, 12, 3), stats.Tail{Count: 2, P99: f(0.001), Max: f(0.001)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SelfMeasureTail(tc.before, tc.after)
			if got.Count != tc.want.Count || !sameFigure(got.P99, tc.want.P99) || !sameFigure(got.Max, tc.want.Max) {
				t.Errorf("got count %d p99 %v max %v, want count %d p99 %v max %v", got.Count, show(got.P99), show(got.Max), tc.want.Count, show(tc.want.P99), show(tc.want.Max))
			}
		})
	}
}

func sameFigure(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(v *float64) any {
	if v == nil {
		return "n/a"
	}
	return *v
}

// The self-probe records its reads while it runs.
func TestSelfProbeRecords(t *testing.T) {
	w := startSelfProbe(&throttleSampler{})
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // let it send a number of times
	}
	tail := w.stop()
	if tail.Count == 0 || tail.P99 == nil || tail.Max == nil || *tail.Max < *tail.P99 || *tail.P99 < 0 {
		t.Fatalf("self-probe read delay %+v after 100ms of sampling", tail)
	}
}

// A request's read-side bound is the worst the timeline saw while it was
// in flight, and one slot past its end; a GC pause whose end was lost
// bounds every request.
func TestTimelineBoundsEachRequest(t *testing.T) {
	start := time.Now()
	l := newTimeline(start)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	l.note(at(15), 0.003)
	l.note(at(100), 0.020)
	for _, c := range []struct {
		from, to int
		want     time.Duration
	}{
		{0, 50, 3 * time.Millisecond},
		{90, 95, 20 * time.Millisecond}, // read just past its end
		{200, 300, 0},
		{30, 40, 0},
	} {
		if got := l.max(at(c.from), at(c.to)).Round(time.Microsecond); got != c.want {
			t.Errorf("in flight %d to %d ms: %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if got := l.around(at(100)).Round(time.Microsecond); got != 20*time.Millisecond {
		t.Errorf("a stamp at 100 ms: %v, want 20ms", got)
	}
	if got := l.around(at(50)); got != 0 {
		t.Errorf("a stamp at 50 ms: %v, want 0", got)
	}
	l.unknownGC = 0.001
	if got := l.max(at(200), at(300)).Round(time.Microsecond); got != time.Millisecond {
		t.Errorf("with a pause of unknown end: %v, want 1ms", got)
	}
}
