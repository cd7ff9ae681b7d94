package collector

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestProbeHistogramsSplit: split, the probe collects every family but the
// histograms and Histograms the histograms alone: together, the families
// and series of the probe whole.
func TestProbeHistogramsSplit(t *testing.T) {
	whole, wholeReg := registeredProbe()
	split, rest := registeredProbe()
	hists := prometheus.NewPedanticRegistry()
	hists.MustRegister(split.Histograms())
	for _, p := range []*Probe{whole, split} {
		p.Configure(testConfig(t, "300ms"))
		p.Observe(successResult("a"))
	}
	series := func(reg prometheus.Gatherer) map[string]int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, mf := range mfs {
			out[mf.GetName()] = len(mf.GetMetric())
		}
		return out
	}
	want, gotRest, gotHists := series(wholeReg), series(rest), series(hists)
	got := maps.Clone(gotRest)
	for name, n := range gotHists {
		if _, ok := got[name]; ok {
			t.Errorf("%s collected by both", name)
		}
		got[name] = n
	}
	if !maps.Equal(got, want) {
		t.Errorf("split: %v, whole: %v", got, want)
	}
	mfs, _ := hists.Gather()
	if len(mfs) == 0 || slices.ContainsFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetType() != dto.MetricType_HISTOGRAM }) {
		t.Errorf("Histograms collected %d families, not all histograms", len(mfs))
	}
}
