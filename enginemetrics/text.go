package enginemetrics

import (
	"fmt"
	"strings"
)

// HasBuckets reports whether any figure has percentiles from histogram
// buckets (llama.cpp's counters give means only).
func (w *Window) HasBuckets() bool {
	for _, f := range w.Figures {
		if len(f.Quantiles) > 0 {
			return true
		}
	}
	return false
}

// Resolution is the sentence under the figures: what they rest on.
func (w *Window) Resolution() string {
	if w.HasBuckets() {
		return "server percentiles are estimates from the engine's buckets, shown as the bucket each falls in; means are exact (sums and counts)"
	}
	return "the engine exports counters, no histograms: its figures are means (exact: sums and counts), no percentiles"
}

// CountText is the count with what it counts: "92 requests", "6528 tokens".
func (f Figure) CountText() string {
	if f.Count == nil {
		return "n/a"
	}
	return strings.TrimSpace(fmt.Sprintf("%.0f %s", *f.Count, f.Unit))
}

// GaugesText says each gauge before → after and, where it was read during
// the run, its range there.
func (w *Window) GaugesText() string {
	var gs []string
	for _, g := range w.Gauges {
		if g.NA != "" {
			continue
		}
		s := fmt.Sprintf("%s %s → %s", g.Metric, gaugeText(g.Before), gaugeText(g.After))
		if g.Samples > 0 {
			s += fmt.Sprintf(" (during the run: min %.3g, mean %.3g, max %.3g over %d reads)", *g.Min, *g.Mean, *g.Max, g.Samples)
		}
		gs = append(gs, s)
	}
	return strings.Join(gs, ", ")
}

func gaugeText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", *v)
}
