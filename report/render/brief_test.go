package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report/render"
)

// The gate's text starts with the verdict and why; Brief leaves the
// details to Text, and Markdown folds them away.
func TestBriefIsTopDown(t *testing.T) {
	_, after := reporttest.GoldenPair(t)
	var brief, text, md bytes.Buffer
	render.Brief(&brief, after)
	render.Text(&text, after)
	if err := render.Markdown(&md, after); err != nil {
		t.Fatal(err)
	}
	first := "gate: FAILED — slo_ttft 70.0% < 90%, regression_ttft_p50 +48.7% > +10%\n"
	for name, out := range map[string]string{"brief": brief.String(), "text": text.String()} {
		if !strings.HasPrefix(out, first) {
			t.Errorf("%s does not start with %q:\n%s", name, first, out)
		}
	}
	details := []string{"95% intervals of the percentiles", "client error bound", "\nTTFT split", "dispatch_delay", "p99.9"}
	for _, d := range details {
		if strings.Contains(brief.String(), d) || !strings.Contains(text.String(), d) {
			t.Errorf("%q: in the brief %v, in the text %v", d, strings.Contains(brief.String(), d), strings.Contains(text.String(), d))
		}
	}
	if n := strings.Count(brief.String(), "\n"); n > 20 {
		t.Errorf("the brief has %d lines:\n%s", n, brief.String())
	}
	m := md.String()
	fold := strings.Index(m, "<details>")
	if fold < 0 || strings.Index(m, "client error bound") < fold || strings.Index(m, "| ttft |") > fold || !strings.Contains(m, "**slo_ttft 70.0% &lt; 90%") {
		t.Errorf("the summary does not fold its details or say why it failed:\n%s", m)
	}
}
