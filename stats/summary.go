package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Percentiles are the quantiles a Summary holds, by name.
var Percentiles = []struct {
	Name string
	Q    float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}}

// Summary holds exact statistics of a sample, in seconds, each percentile
// with its 95 % interval from order statistics. Without samples every
// figure is n/a: JSON null, not 0.
type Summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	// Intervals holds each percentile's interval by name; absent in
	// reports written before llmprobe computed them.
	Intervals map[string]Interval `json:"intervals,omitempty"`
	// TooFew names the percentiles from fewer samples than MinSamples
	// asks: their interval has no upper end.
	TooFew []string `json:"too_few,omitempty"`
	// Effective names the percentiles whose samples, in the order they
	// came, are worth fewer independent ones (EffectiveQuantileN), and
	// what: their interval and the too-few rule are at that worth.
	Effective map[string]int `json:"effective_n,omitempty"`
}

// Interval is a 95 % interval; an end no order statistic bounds is null.
type Interval struct {
	Lo *float64 `json:"lo"`
	Hi *float64 `json:"hi"`
}

// MarshalJSON writes null figures for an empty sample.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	if s.Count > 0 {
		return json.Marshal(plain(s))
	}
	return []byte(`{"count":0,"mean":null,"min":null,"max":null,"p50":null,"p90":null,"p95":null,"p99":null,"p99.9":null}`), nil
}

// Summarize computes exact percentiles (linear interpolation between
// closest ranks) and their intervals. It sorts xs in place.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	s := Summary{
		Count: len(xs), Mean: sum / float64(len(xs)), Min: xs[0], Max: xs[len(xs)-1],
		P50: Quantile(xs, 0.5), P90: Quantile(xs, 0.9), P95: Quantile(xs, 0.95), P99: Quantile(xs, 0.99), P999: Quantile(xs, 0.999),
		Intervals: map[string]Interval{},
	}
	for _, p := range Percentiles {
		lo, hi, loOK, hiOK := QuantileInterval(xs, p.Q)
		s.Intervals[p.Name] = Interval{Lo: figure(lo, loOK), Hi: figure(hi, hiOK)}
		if s.Count < MinSamples(p.Q) {
			s.TooFew = append(s.TooFew, p.Name)
		}
	}
	return s
}

// SummarizeInOrder is Summarize of samples in the order they came (one
// run's requests, arrival by arrival), each percentile's interval and
// too-few rule taken at what the samples are worth as independent draws
// for it: requests that queue together are slow together.
func SummarizeInOrder(inOrder []float64) Summary {
	sorted := slices.Clone(inOrder)
	s := Summarize(sorted)
	if s.Count == 0 {
		return s
	}
	s.TooFew = nil
	for _, p := range Percentiles {
		eff := EffectiveQuantileN(inOrder, s.Quantile(p.Name))
		if eff < s.Count {
			lo, hi, loOK, hiOK := QuantileIntervalAt(sorted, p.Q, eff)
			s.Intervals[p.Name] = Interval{Lo: figure(lo, loOK), Hi: figure(hi, hiOK)}
			if s.Effective == nil {
				s.Effective = map[string]int{}
			}
			s.Effective[p.Name] = eff
		}
		if s.Worth(p.Name) < MinSamples(p.Q) {
			s.TooFew = append(s.TooFew, p.Name)
		}
	}
	return s
}

// Worth is what the named percentile's samples are worth as independent
// draws: Count, or fewer where Effective says so.
func (s Summary) Worth(name string) int {
	if eff, ok := s.Effective[name]; ok && eff < s.Count {
		return eff
	}
	return s.Count
}

// Measured returns the named quantile, or nil without samples.
func (s Summary) Measured(name string) *float64 { return figure(s.Quantile(name), s.Count > 0) }

// Quantile returns the named quantile (p50, p90, p95, p99, p99.9).
func (s Summary) Quantile(name string) float64 {
	switch name {
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p95":
		return s.P95
	case "p99":
		return s.P99
	case "p99.9":
		return s.P999
	}
	return math.NaN()
}

// IsTooFew says the named percentile rests on fewer samples than it needs;
// from the count, so a report older than TooFew answers too.
func (s Summary) IsTooFew(name string) bool {
	need := Needs(name)
	return s.Count > 0 && need > 0 && s.Worth(name) < need
}

// TooFewText says why the named percentile is too few ("p99 from 20
// samples: too few, needs 368"; "p99 from 400 samples worth 210
// independent: too few, needs 368"), or "" when it is not.
func (s Summary) TooFewText(name string) string {
	if !s.IsTooFew(name) {
		return ""
	}
	if w := s.Worth(name); w < s.Count {
		return fmt.Sprintf("%s from %d samples worth %d independent: too few, needs %d", name, s.Count, w, Needs(name))
	}
	return fmt.Sprintf("%s from %d samples: too few, needs %d", name, s.Count, Needs(name))
}

// Needs is MinSamples of the named percentile, 0 for another name.
func Needs(name string) int {
	for _, p := range Percentiles {
		if p.Name == name {
			return MinSamples(p.Q)
		}
	}
	return 0
}

// figure is v, or nil (n/a) when !ok.
func figure(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// WilsonOf is the Wilson interval of k in n, or nil for n = 0.
func WilsonOf(k, n int) *Interval { return WilsonOfAt(k, n, n) }

// WilsonOfAt is WilsonAt as an Interval, or nil for n = 0.
func WilsonOfAt(k, n, eff int) *Interval {
	lo, hi, ok := WilsonAt(k, n, eff)
	if !ok {
		return nil
	}
	return &Interval{Lo: &lo, Hi: &hi}
}

// Text is the interval as "lo–hi", each end scaled by scale in format;
// an end nothing bounds is −∞ or ∞.
func (i Interval) Text(format string, scale float64) string {
	lo, hi := "−∞", "∞"
	if i.Lo != nil {
		lo = fmt.Sprintf(format, scale**i.Lo)
	}
	if i.Hi != nil {
		hi = fmt.Sprintf(format, scale**i.Hi)
	}
	return lo + "–" + hi
}
