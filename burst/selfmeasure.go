// The client's own delays around a burst run (runtime scheduling latency, GC
// pauses, a reader's wake-up delay), sampled for the run's error bound and, on a
// timeline, for each request's own bound.

package burst

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// The runtime's histograms behind the read side of a run's error bound:
// how long a runnable goroutine waited to run, and stop-the-world GC pauses.
// Both are cumulative since the process started.
const (
	schedLatencyMetric = "/sched/latencies:seconds"
	gcPauseMetric      = "/sched/pauses/total/gc:seconds"
)

// SelfMeasure holds the runtime's histograms as they were when a run started;
// Done takes the difference at its end, so the figures are that run's
// alone. They are the whole process's: whatever else llmprobe does
// meanwhile delays the prober's goroutines too.
type SelfMeasure struct {
	start []metrics.Sample
	gcs   int64 // GC cycles before the run
	probe *selfProbe
}

func readRuntime() []metrics.Sample {
	s := []metrics.Sample{{Name: schedLatencyMetric}, {Name: gcPauseMetric}}
	metrics.Read(s)
	return s
}

// StartSelfMeasure begins sampling; call Done once, at the run's end.
func StartSelfMeasure() SelfMeasure { return startSelfMeasure("/") }

// startSelfMeasure samples the cgroup found under cgroupRoot (a fixture's
// directory in tests).
func startSelfMeasure(cgroupRoot string) SelfMeasure {
	var gc debug.GCStats
	debug.ReadGCStats(&gc)
	return SelfMeasure{start: readRuntime(), gcs: gc.NumGC, probe: startSelfProbe(newThrottleSampler(cgroupRoot))}
}

// Done gives the run's scheduling latencies, GC pauses and CPU
// throttling, or nil where this runtime lacks either histogram, and sets
// each result's ReadDelay (the largest delay of the read side seen while
// it was in flight, plus the throttling over its flight) and marks the
// misses it may explain.
func (s SelfMeasure) Done(results []*prober.Result) *stats.RuntimeDelays {
	end := readRuntime()
	read := s.probe.stop()
	line := s.probe.line
	line.addPauses(s.gcs)
	for _, res := range results {
		send, last := res.Sched.Add(res.DispatchDelay), res.Sched.Add(res.E2E)
		// A quota's pause stops the reader and the probe alike, so the
		// probe's lateness may hold part of it too: the sum over-bounds.
		res.Throttled = line.throttledIn(send, last)
		res.ReadDelay = line.max(send, last) + res.Throttled
		if res.FirstTokenSeen() {
			first := res.Sched.Add(res.TTFT)
			res.ReadDelayFirst = line.around(first) + line.throttledIn(send, first)
		}
		res.ReadDelayLast = line.around(last) + res.Throttled
		res.MarkOwnDelayMisses()
	}
	var tails [2]stats.Tail
	for i := range tails {
		if s.start[i].Value.Kind() != metrics.KindFloat64Histogram || end[i].Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		tails[i] = SelfMeasureTail(s.start[i].Value.Float64Histogram(), end[i].Value.Float64Histogram())
	}
	return &stats.RuntimeDelays{SchedLatency: tails[0], GCPause: tails[1], ReadDelay: read, Throttled: s.probe.throttle.total()}
}

// SelfMeasureTail is the p99 (nearest rank) and max of the samples a cumulative
// histogram gained from before to after, each the upper bound of its
// bucket, so never under the truth. A sample in the open top bucket counts
// as its finite lower edge (about 39 hours for the runtime's histograms),
// which passes any objective. Without new samples both are null.
func SelfMeasureTail(before, after *metrics.Float64Histogram) stats.Tail {
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
		return stats.Tail{}
	}
	// Bucket i holds [Buckets[i], Buckets[i+1]).
	upper := func(i int) *float64 {
		v := after.Buckets[i+1]
		if math.IsInf(v, 1) {
			v = after.Buckets[i]
		}
		return &v
	}
	t := stats.Tail{Count: total}
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

// selfProbePeriod is how often the self-probe samples: often enough to
// land in a host's busy spells, at one wake-up and one read a period.
const selfProbePeriod = 2 * time.Millisecond

// selfProbe measures the read side as the prober's streams live it: a
// kernel timer expires every selfProbePeriod, and a goroutine, woken by the
// runtime's network poller like every stream reader, reads it and records
// how late it woke. A host busy with other processes, goroutines queued
// behind a burst of chunks, GC, a process held off its CPUs: whatever
// delays a token's read delays this one. (A loopback TCP connection
// written on a ticker cost half as much again on an idle process.)
type selfProbe struct {
	beat     *clock.Beat // nil where the kernel offers no timer to read
	done     chan stats.Tail
	line     *timeline
	throttle *throttleSampler
}

// selfProbeBuckets are the probe's histogram bounds: 1 µs to about 17 s,
// 10% apart, so a figure is never more than 10% over the truth.
var selfProbeBuckets = func() []float64 {
	b := []float64{0}
	for v := 1e-6; v < 20; v *= 1.1 {
		b = append(b, v)
	}
	return append(b, math.Inf(1))
}()

// startSelfProbe starts the probe; without a kernel timer it records
// nothing, and its part of the bound is n/a.
func startSelfProbe(throttle *throttleSampler) *selfProbe {
	p := &selfProbe{done: make(chan stats.Tail, 1), line: newTimeline(time.Now()), throttle: throttle}
	beat, err := clock.NewBeat(selfProbePeriod)
	if err != nil {
		p.done <- stats.Tail{}
		return p
	}
	p.beat = beat
	go p.run()
	return p
}

// run reads the beat until it stops. Expiries taken late together are a
// sample each, as a stream's chunks queued behind one stall are: the
// earliest waited longest, each later one a period less.
func (p *selfProbe) run() {
	h := &metrics.Float64Histogram{Buckets: selfProbeBuckets, Counts: make([]uint64, len(selfProbeBuckets)-1)}
	sampled := time.Now()
	for {
		at, expiries, late, err := p.beat.Wait()
		if err != nil {
			break
		}
		if at.Sub(sampled) >= timelineSlot {
			p.throttle.sample(at, p.line)
			sampled = at
		}
		p.line.note(at, late.Seconds())
		for range expiries {
			took := late.Seconds()
			i := sort.Search(len(selfProbeBuckets), func(i int) bool { return selfProbeBuckets[i] > took }) - 1
			h.Counts[min(max(i, 0), len(h.Counts)-1)]++
			if late -= selfProbePeriod; late < 0 {
				break
			}
		}
	}
	p.done <- SelfMeasureTail(&metrics.Float64Histogram{Buckets: selfProbeBuckets}, h)
}

// stop ends the probe and gives what it saw.
func (p *selfProbe) stop() stats.Tail {
	if p.beat != nil {
		_ = p.beat.Close()
	}
	read := <-p.done
	p.throttle.sample(time.Now(), p.line) // the reader has ended: no other sampler
	p.throttle.close()
	return read
}

// timelineSlot is the timeline's resolution: a request's bound takes every
// slot its flight touches, and one more.
const timelineSlot = 10 * time.Millisecond

// maxTimelineSlots bounds a timeline's memory (4 MiB, 11.6 hours); a run
// longer than that shares its last slot.
const maxTimelineSlots = 1 << 22

// timeline keeps, for each slot of a run, the largest delay of the client's
// read side seen in it: a self-probe sample's read delay, a GC pause.
// Where no probe ran (no kernel timer) it holds the GC pauses alone, as the
// report's bound says of its read side.
type timeline struct {
	mu    sync.Mutex // the probe notes while requests ask
	start time.Time
	slots []float32 // seconds
	// throttled is the CPU throttling noted in each slot, apart from the
	// largest delays: it adds up over a request's flight. It grows only
	// to the last throttled slot.
	throttled []time.Duration
	// unknownGC is the longest GC pause of the run whose end was not
	// recorded (the runtime keeps the last 256): every request may have met it.
	unknownGC float64
}

func newTimeline(start time.Time) *timeline { return &timeline{start: start} }

// slot is the slot of t, clamped to the timeline.
func (l *timeline) slot(t time.Time) int {
	i := int(t.Sub(l.start) / timelineSlot)
	return min(max(i, 0), maxTimelineSlots-1)
}

// note records a delay of seconds seen at t.
func (l *timeline) note(t time.Time, seconds float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.slot(t)
	if i >= len(l.slots) {
		l.slots = append(l.slots, make([]float32, i+1-len(l.slots))...)
	}
	l.slots[i] = max(l.slots[i], float32(seconds))
}

// addPauses notes the GC pauses of the cycles after the first gcs, each at
// its end.
func (l *timeline) addPauses(gcs int64) {
	var gc debug.GCStats
	debug.ReadGCStats(&gc)
	n := int(gc.NumGC - gcs)
	for i := range min(n, len(gc.Pause), len(gc.PauseEnd)) {
		if gc.PauseEnd[i].Before(l.start) {
			break
		}
		l.note(gc.PauseEnd[i], gc.Pause[i].Seconds())
	}
	if n > len(gc.Pause) {
		for _, p := range gc.Pause {
			l.unknownGC = max(l.unknownGC, p.Seconds())
		}
	}
}

// around is the largest delay that could have moved a stamp taken at t: a
// stall delays a read and the self-probe's sample alike, and both are
// noted when the stall ends, so the slots beside t hold it.
func (l *timeline) around(t time.Time) time.Duration {
	return l.max(t.Add(-timelineSlot), t)
}

// max is the largest delay seen from from to to, and a slot past it (a
// delayed read ends after the stamp it delayed).
func (l *timeline) max(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	worst := l.unknownGC
	for i := l.slot(from); i <= l.slot(to)+1 && i < len(l.slots); i++ {
		worst = max(worst, float64(l.slots[i]))
	}
	return time.Duration(worst * float64(time.Second))
}
