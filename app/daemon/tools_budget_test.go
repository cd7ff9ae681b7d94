package daemon

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// A scenario with tools adds its time to the first tool-call delta to its
// pairs' budget, as docs/metrics.md says: TTFT's classic grid without a
// threshold (24 series), or 1 native only; a scenario without tools adds
// none of it.
func TestToolCallSeriesBudget(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "(TTFT's 20 buckets with no threshold: 24 series, 1 native only)"; !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/metrics.md does not say %q", want)
	}
	srv, _ := testkit.StartSim(t, nil)
	for _, c := range []struct {
		nativeOnly bool
		want       float64
	}{{false, 24}, {true, 1}} {
		path := testkit.ConfigFile(t, fmt.Sprintf(`targets: [{name: sim, url: %q, model: m}]
scenarios:
  - {name: plain, prompt_tokens: 16, output_tokens: 4}
  - name: tools
    prompt_tokens: 16
    output_tokens: 32
    tools: [{function: {name: get_weather, parameters: {type: object, required: [city], properties: {city: {type: string}}}}}]
    tool_choice: required
canary: {interval: 100ms}
`, srv.URL))
		d := New(Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5, NativeHistogramsOnly: c.nativeOnly})
		if err := d.reload(); err != nil {
			t.Fatal(err)
		}
		const family = "llmprobe_time_to_first_tool_call_seconds"
		var got seriesCount
		testkit.WaitUntil(t, "both scenarios' canaries and the tool-call family", 10*time.Second, func() bool {
			got = countSeries(scrapeFamilies(t, d.routes()), c.nativeOnly)
			return got.pairs == 2 && got.perPair[family] > 0
		})
		d.stop()
		// Per pair over two pairs: the tools pair has it all, the plain one none.
		if n := 2 * got.perPair[family]; n != c.want {
			t.Errorf("native only %v: %s has %g series on the tools pair, want %g", c.nativeOnly, family, n, c.want)
		}
	}
}
