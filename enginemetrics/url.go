package enginemetrics

import (
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// URL is where t's engine metrics are read: the configured URL, or the
// target's server root with the family's usual path; "" when t names no
// engine_metrics.
func URL(t config.Target) string {
	e := t.EngineMetrics
	if e == nil {
		return ""
	}
	if e.URL != "" {
		return e.URL
	}
	path := "/metrics"
	if e.Family == config.EngineFamilyTRTLLM {
		path = "/prometheus/metrics" // trtllm-serve's /metrics is JSON iteration stats
	}
	return strings.TrimSuffix(strings.TrimSuffix(t.URL, "/"), "/v1") + path
}
