package burst

import (
	"math"
	"runtime/metrics"

	"github.com/llmprobe/llmprobe/report"
)

// The runtime's histograms behind the read side of a run's error bound:
// how long a runnable goroutine waited to run, and stop-the-world GC pauses.
// Both are cumulative since the process started.
const (
	schedLatencyMetric = "/sched/latencies:seconds"
	gcPauseMetric      = "/sched/pauses/total/gc:seconds"
)

// selfMeasure holds the runtime's histograms as they were when a run
// started; done takes the difference at its end, so the figures are that
// run's alone. They are the whole process's: whatever else llmprobe does
// meanwhile delays the prober's goroutines too.
type selfMeasure struct{ start []metrics.Sample }

func readRuntime() []metrics.Sample {
	s := []metrics.Sample{{Name: schedLatencyMetric}, {Name: gcPauseMetric}}
	metrics.Read(s)
	return s
}

func startSelfMeasure() selfMeasure { return selfMeasure{start: readRuntime()} }

// done gives the run's scheduling latencies and GC pauses, or nil where
// this runtime lacks either histogram.
func (s selfMeasure) done() *report.RuntimeDelays {
	end := readRuntime()
	var tails [2]report.Tail
	for i := range tails {
		if s.start[i].Value.Kind() != metrics.KindFloat64Histogram || end[i].Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		tails[i] = tailOf(s.start[i].Value.Float64Histogram(), end[i].Value.Float64Histogram())
	}
	return &report.RuntimeDelays{SchedLatency: tails[0], GCPause: tails[1]}
}

// tailOf is the p99 (nearest rank) and max of the samples a cumulative
// histogram gained from before to after, each the upper bound of its
// bucket, so never under the truth. A sample in the open top bucket counts
// as its finite lower edge (about 39 hours for the runtime's histograms),
// which passes any objective. Without new samples both are null.
func tailOf(before, after *metrics.Float64Histogram) report.Tail {
	delta := make([]uint64, len(after.Counts))
	var total uint64
	for i, c := range after.Counts {
		var was uint64
		if i < len(before.Counts) {
			was = before.Counts[i]
		}
		if c > was { // a count never falls; if it seemed to, nothing was added
			delta[i] = c - was
			total += delta[i]
		}
	}
	if total == 0 {
		return report.Tail{}
	}
	// Bucket i holds [Buckets[i], Buckets[i+1]).
	upper := func(i int) *float64 {
		v := after.Buckets[i+1]
		if math.IsInf(v, 1) {
			v = after.Buckets[i]
		}
		return &v
	}
	t := report.Tail{Count: total}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i, c := range delta {
		if c == 0 {
			continue
		}
		seen += c
		if t.P99 == nil && seen >= rank {
			t.P99 = upper(i)
		}
		t.Max = upper(i)
	}
	return t
}
