// When a scheduled burst's runs start: every's grid on the wall clock or at's
// times of day, each start fixed in advance, so a run that overruns misses
// starts instead of shifting the later ones.

package plan

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"
)

const day = 24 * time.Hour

// Cadence numbers a burst's planned starts: start k is a pure function of
// k, so the rhythm holds whatever the runs do.
type Cadence struct {
	every, phase, jitter time.Duration
	seed                 uint64
	at                   []time.Duration // times of day after midnight UTC, ascending
}

// Cadence is the burst's cadence, nil when its schedule has neither every
// nor at. With every, start k is k × every after the Unix epoch, plus a
// phase from the burst's name (so bursts of one period do not all start
// together, and restarts and reloads keep the rhythm), plus that start's
// own jitter, drawn from seed, below the configured jitter.
func (b *Burst) Cadence(seed uint64) *Cadence {
	s := b.Schedule
	switch {
	case s.Every > 0:
		h := fnv.New64a()
		_, _ = h.Write([]byte(b.Name))
		every := s.Every.Std()
		return &Cadence{every: every, phase: time.Duration(h.Sum64() % uint64(every)), jitter: s.Jitter.Std(), seed: seed}
	case len(s.At) > 0:
		c := &Cadence{}
		for _, hhmm := range s.At { // validated: HH:MM, UTC
			if t, err := time.Parse("15:04", hhmm); err == nil {
				c.at = append(c.at, time.Duration(t.Hour())*time.Hour+time.Duration(t.Minute())*time.Minute)
			}
		}
		slices.Sort(c.at)
		c.at = slices.Compact(c.at)
		if len(c.at) == 0 {
			return nil
		}
		return c
	}
	return nil
}

// Start is when start k is planned.
func (c *Cadence) Start(k int64) time.Time {
	if c.every == 0 {
		n := int64(len(c.at))
		d := floorDiv(k, n)
		return time.Unix(0, 0).UTC().Add(time.Duration(d) * day).Add(c.at[k-d*n])
	}
	t := time.Unix(0, 0).UTC().Add(c.phase + time.Duration(k)*c.every)
	if c.jitter > 0 {
		t = t.Add(time.Duration(rand.New(rand.NewPCG(c.seed, uint64(k))).Int64N(int64(c.jitter))))
	}
	return t
}

// From is the first start planned at or after t.
func (c *Cadence) From(t time.Time) int64 {
	var k int64
	if c.every == 0 {
		k = floorDiv(t.Sub(time.Unix(0, 0)).Nanoseconds(), int64(day)) * int64(len(c.at))
	} else {
		// The grid instant at or before t: its start, jittered, may still
		// be ahead; the one before it is not.
		k = floorDiv(t.Sub(time.Unix(0, 0)).Nanoseconds()-int64(c.phase), int64(c.every))
	}
	for c.Start(k).Before(t) {
		k++
	}
	return k
}

// floorDiv is a / b rounded down, for instants before the epoch too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
