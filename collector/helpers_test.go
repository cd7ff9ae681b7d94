package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// findMetric gathers g and returns the first series of name whose labels
// include labels, or nil.
func findMetric(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			return m
		}
	}
	return nil
}

// registeredProbe is a probe with classic buckets in a pedantic registry.
func registeredProbe() (*Probe, *prometheus.Registry) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	return p, reg
}
