package daemon

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/plan"
)

// The demo gates only what its own bursts can show: --config.check would
// say nothing of it.
func TestDemoGatesWhatItsBurstsCanShow(t *testing.T) {
	p, err := plan.Parse([]byte(strings.ReplaceAll(demoConfig, demoURLPlaceholder, "http://127.0.0.1:1")), "demo.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range p.Bursts {
		if w := b.Unsettled(); len(w) > 0 {
			t.Errorf("the demo: %q", w)
		}
	}
}
