package report

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/llmprobe/llmprobe/stats"
)

// Summary holds exact statistics of a sample, in seconds. Without samples
// every figure is n/a: JSON null, not 0.
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
}

// MarshalJSON writes null figures for an empty sample.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	if s.Count > 0 {
		return json.Marshal(plain(s))
	}
	return []byte(`{"count":0,"mean":null,"min":null,"max":null,"p50":null,"p90":null,"p95":null,"p99":null,"p99.9":null}`), nil
}

// Summarize computes exact percentiles (linear interpolation between closest
// ranks). It sorts xs in place.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Summary{
		Count: len(xs), Mean: sum / float64(len(xs)), Min: xs[0], Max: xs[len(xs)-1],
		P50: stats.Quantile(xs, 0.5), P90: stats.Quantile(xs, 0.9), P95: stats.Quantile(xs, 0.95), P99: stats.Quantile(xs, 0.99), P999: stats.Quantile(xs, 0.999),
	}
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
