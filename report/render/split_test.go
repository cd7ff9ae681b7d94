package render_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// A merged report's table names its shards and says which figures come
// from a subset.
func TestMergedSaysWhatIsApproximate(t *testing.T) {
	want := "itl: figures from 20 of 48 samples (shard 0/2 kept 10 of 24, shard 1/2 kept 10 of 24; a shard keeps at most 10)"
	merged := &report.Report{Burst: "b", Merged: &report.Merged{Shards: []report.MergedShard{{ID: "b-1"}, {Index: 1, ID: "b-2"}}, Approximate: []string{want}}}
	var text strings.Builder
	render.Text(&text, merged)
	if !strings.Contains(text.String(), "approximate: "+want) || !strings.Contains(text.String(), "merged from 2 shards") {
		t.Errorf("the table does not say the ITL figures are approximate:\n%s", text.String())
	}
}
