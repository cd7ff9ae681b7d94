package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// Requests that called a tool get the first tool-call histogram (TTFT's
// grid); a series none of whose requests called one has no line of it. A
// failed tool-call check counts as a failed quality check.
func TestToolCallSeries(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	cfg, err := config.Parse([]byte(`targets: [{name: a, url: "http://x:1"}, {name: b, url: "http://y:1"}]
scenarios:
  - name: s
    tools: [{function: {name: f}}]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	p.Configure(cfg)
	p.Observe(successResult("a"))
	for i, why := range []string{"", "tool call f: arguments are not JSON: unexpected end of JSON input"} {
		r := successResult("b")
		r.TTFTool = time.Duration(i+1) * 100 * time.Millisecond
		r.Quality = &prober.QualityResult{Passed: why == "", Reason: why}
		p.Observe(r)
	}
	h := histogramOf(t, reg, "llmprobe_time_to_first_tool_call_seconds", map[string]string{"target": "b"})
	if h.GetSampleCount() != 2 || h.GetSampleSum() < 0.3-1e-9 || h.GetSampleSum() > 0.3+1e-9 || len(upperBounds(h)) != len(ttftGrid.bounds) {
		t.Errorf("tool-call histogram: %d samples, sum %g, buckets %v; want 2, 0.3 and TTFT's grid", h.GetSampleCount(), h.GetSampleSum(), upperBounds(h))
	}
	if m := findMetric(t, reg, "llmprobe_time_to_first_tool_call_seconds", map[string]string{"target": "a"}); m != nil {
		t.Error("target a, which never called a tool, has a tool-call series")
	}
	want := `
# HELP llmprobe_quality_checks_total Answer quality checks of successful requests.
# TYPE llmprobe_quality_checks_total counter
llmprobe_quality_checks_total{model="m",result="failed",scenario="s",target="b",traffic="canary"} 1
llmprobe_quality_checks_total{model="m",result="passed",scenario="s",target="b",traffic="canary"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "llmprobe_quality_checks_total"); err != nil {
		t.Error(err)
	}
}
