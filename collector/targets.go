package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/target"
)

var (
	targetInfoDesc = prometheus.NewDesc(namespace+"_target_info",
		"What each target last said about itself (/v1/models, version endpoint, Server header); always 1. Kept while the target is down.",
		[]string{"target", "model", "engine", "engine_version", "server"}, nil)
	targetConfirmedDesc = prometheus.NewDesc(namespace+"_target_info_last_confirmed_timestamp_seconds",
		"When the target last answered /v1/models, confirming target_info.", []string{"target"}, nil)
	targetUpDesc = prometheus.NewDesc(namespace+"_target_up",
		"Whether the last request to the target (any scenario, canary or burst) succeeded.", []string{"target"}, nil)
	targetStatusDesc = prometheus.NewDesc(namespace+"_target_http_status_code",
		"HTTP status of the last request to the target; 0 when no response arrived.", []string{"target"}, nil)
	targetPhaseDesc = prometheus.NewDesc(namespace+"_target_phase_duration_seconds",
		"Phases of the last request to the target: resolve, connect, tls (0 when a connection was reused), first_byte (request written to first response byte), first_token (first byte to first output token), done (first token to end of stream).",
		[]string{"target", "phase"}, nil)
	targetCertDesc = prometheus.NewDesc(namespace+"_target_tls_cert_expiry_timestamp_seconds",
		"Earliest NotAfter of the certificate chain of the last response over TLS.", []string{"target"}, nil)
	targetDimensionDesc = prometheus.NewDesc(namespace+"_target_embedding_dimension",
		"Vector length of the last successful embeddings answer of the target; absent before one.", []string{"target"}, nil)
)

// Targets exports what each target said about itself and how its last
// request went. Every label value was sanitised and bounded by the prober.
type Targets struct {
	set *target.Set
}

// NewTargets reads the set on every scrape; it never calls the network.
func NewTargets(set *target.Set) *Targets {
	return &Targets{set: set}
}

// Describe implements prometheus.Collector.
func (t *Targets) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{targetInfoDesc, targetConfirmedDesc, targetUpDesc, targetStatusDesc, targetPhaseDesc, targetCertDesc, targetDimensionDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (t *Targets) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, c := range t.set.Clients() {
		name := c.Target().Name
		if info := c.Info(); !info.Confirmed.IsZero() {
			gauge(targetInfoDesc, 1, name, c.Model(), info.Engine, info.EngineVersion, info.Server)
			gauge(targetConfirmedDesc, float64(info.Confirmed.UnixNano())/1e9, name)
		}
		st := t.set.State(name)
		r := st.Last
		if r == nil {
			continue
		}
		if st.Dimension > 0 {
			gauge(targetDimensionDesc, float64(st.Dimension), name)
		}
		gauge(targetUpDesc, boolValue(st.Up), name)
		gauge(targetStatusDesc, float64(r.HTTPStatus), name)
		// The network phases are there whenever a request was tried, so a
		// dead target shows how far it got; the later ones once reached.
		tm := r.Timings
		gauge(targetPhaseDesc, tm.DNS.Seconds(), name, "resolve")
		gauge(targetPhaseDesc, tm.Connect.Seconds(), name, "connect")
		gauge(targetPhaseDesc, tm.TLS.Seconds(), name, "tls")
		if tm.TTFB > 0 {
			gauge(targetPhaseDesc, tm.FirstByte.Seconds(), name, "first_byte")
		}
		if r.FirstTokenSeen() {
			gauge(targetPhaseDesc, (r.TTFT - tm.TTFB).Seconds(), name, "first_token")
			gauge(targetPhaseDesc, (r.E2E - r.TTFT).Seconds(), name, "done")
		}
		if !st.CertExpiry.IsZero() {
			gauge(targetCertDesc, float64(st.CertExpiry.Unix()), name)
		}
	}
}
