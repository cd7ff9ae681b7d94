package collector

import "github.com/prometheus/client_golang/prometheus"

// Histograms returns a collector of p's histogram families alone, and p
// collects the rest from then on: registered in a registry of its own, the
// histograms are gathered at once with the rest, each registry processing
// its metrics in one goroutine.
func (p *Probe) Histograms() prometheus.Collector {
	p.mu.Lock()
	p.split = true
	p.mu.Unlock()
	return probeHistograms{p}
}

type probeHistograms struct{ p *Probe }

func (h probeHistograms) Describe(ch chan<- *prometheus.Desc) {
	h.p.mu.RLock()
	hists := h.p.hists
	h.p.mu.RUnlock()
	for _, v := range hists {
		v.Describe(ch)
	}
}

func (h probeHistograms) Collect(ch chan<- prometheus.Metric) {
	h.p.mu.RLock()
	hists := h.p.hists
	h.p.mu.RUnlock()
	for _, v := range hists {
		h.p.written.collect(v, ch)
	}
}
