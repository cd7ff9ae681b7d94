package history

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// TrendMinutes is how far back a trend reaches: one bucket per minute.
const TrendMinutes = 60

// tailKept is how many of a minute's largest latencies a Tail keeps: its
// p99 is exact up to 1,501 samples a minute (a canary every 100 ms, the
// shortest interval config allows, gives 600), and an upper bound past it.
const tailKept = 16

// P99Needs is the fewest samples a p99 stands on (BRIEF's rule): 368.
var P99Needs = stats.MinSamples(0.99)

// Trend is one canary pair's last hour in one-minute buckets: the largest
// TTFT and TPOT samples of each minute's successful requests, and how many
// requests were good among those judged. Its memory is fixed: 60 buckets
// of two Tails and two counts, about 19 KiB, whatever the probe rate.
type Trend struct {
	minutes [TrendMinutes]minute
}

type minute struct {
	start                   int64 // Unix minute the bucket holds; buckets are reused round the clock
	used                    bool
	ttft, tpot              Tail
	good, succeeded, judged int
}

// Observe adds a canary result to the bucket of the minute it was due. A
// result older than what its bucket now holds (due over an hour before the
// newest) is dropped.
func (t *Trend) Observe(r *prober.Result) {
	m := unixMinute(r.Sched)
	b := t.bucket(m)
	switch {
	case b.used && b.start > m:
		return
	case !b.used || b.start < m:
		*b = minute{start: m, used: true}
	}
	b.judged++
	if r.Outcome != prober.OutcomeSuccess {
		return
	}
	b.succeeded++
	if r.Good {
		b.good++
	}
	if r.Unstreamed || !r.FirstTokenSeen() {
		return // no TTFT, no TPOT: they do not apply
	}
	b.ttft.add(r.TTFT.Seconds())
	if r.OutputTokens > 1 {
		b.tpot.add(r.TPOT.Seconds())
	}
}

// unixMinute is the minute of t since 1970, rounded down.
func unixMinute(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

// bucket is minute m's bucket, which also held m−60, m−120, ….
func (t *Trend) bucket(m int64) *minute {
	return &t.minutes[((m%TrendMinutes)+TrendMinutes)%TrendMinutes]
}

// Point is one minute of a trend.
type Point struct {
	Start      time.Time // the minute's start
	TTFT, TPOT Tail      // successful requests' latencies, in seconds
	// Good of Judged requests were good (succeeded and met every
	// objective); Succeeded succeeded.
	Good, Succeeded, Judged int
}

// Points returns the TrendMinutes minutes up to now's, oldest first; a
// minute without results has Judged 0.
func (t *Trend) Points(now time.Time) []Point {
	last := unixMinute(now)
	out := make([]Point, TrendMinutes)
	for i := range out {
		m := last - TrendMinutes + 1 + int64(i)
		out[i].Start = time.Unix(m*60, 0)
		if b := t.bucket(m); b.used && b.start == m {
			out[i].TTFT, out[i].TPOT = b.ttft, b.tpot
			out[i].Good, out[i].Succeeded, out[i].Judged = b.good, b.succeeded, b.judged
		}
	}
	return out
}

// Tail is a minute's sample count and its largest values, ascending:
// enough for the max and, from enough samples, the p99, in fixed memory.
type Tail struct {
	n    int
	top  [tailKept]float64
	kept int
}

func (t *Tail) add(v float64) {
	t.n++
	if t.kept == tailKept {
		if v <= t.top[0] {
			return
		}
		// Drop the smallest: shift down the kept values below v.
		i := 0
		for i+1 < tailKept && t.top[i+1] < v {
			t.top[i] = t.top[i+1]
			i++
		}
		t.top[i] = v
		return
	}
	i := t.kept
	t.kept++
	for i > 0 && t.top[i-1] > v {
		t.top[i] = t.top[i-1]
		i--
	}
	t.top[i] = v
}

// Count is how many samples the minute had.
func (t Tail) Count() int { return t.n }

// Max is the largest sample; NaN without samples.
func (t Tail) Max() float64 {
	if t.n == 0 {
		return math.NaN()
	}
	return t.top[t.kept-1]
}

// Kind says what a Tail's figure is.
type Kind int

const (
	// KindNone: no samples, no figure.
	KindNone Kind = iota
	// KindMax: fewer samples than a p99 needs (368): the figure is the
	// minute's max, which is what a p99 of so few samples would be close to.
	KindMax
	// KindP99: the minute's exact p99 (stats.Quantile's definition).
	KindP99
	// KindP99AtMost: more samples than the kept tail covers; the p99 is at
	// most the figure.
	KindP99AtMost
)

// Figure is the minute's p99 where enough samples stand behind it, else
// its max, and which of them it is.
func (t Tail) Figure() (seconds float64, kind Kind) {
	switch {
	case t.n == 0:
		return math.NaN(), KindNone
	case t.n < P99Needs:
		return t.Max(), KindMax
	}
	// stats.Quantile interpolates between ranks lo and lo+1 of the sorted
	// samples; the kept values are ranks n-kept … n-1.
	pos := 0.99 * float64(t.n-1)
	lo := int(math.Floor(pos))
	first := t.n - t.kept
	if lo < first {
		return t.top[0], KindP99AtMost
	}
	hi := min(lo+1, t.n-1)
	a, b := t.top[lo-first], t.top[hi-first]
	return a + (b-a)*(pos-float64(lo)), KindP99
}
