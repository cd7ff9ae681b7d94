package web

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/report"
)

// A shard's report page says it is one share of a split burst; a merged
// one names its shards and what is not exact.
func TestReportPageSaysItIsSplit(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	shard := recordedReport(t)
	shard.Shard = &report.ShardPart{Index: 1, Count: 3, Start: start, PerShard: "max_concurrency applied to this shard alone"}
	merged := recordedReport(t)
	merged.Merged = &report.Merged{Start: start, Shards: []report.MergedShard{{ID: "b-1"}, {ID: "b-2"}}, Approximate: []string{"itl: figures from 10 of 20 samples"}}
	for _, tc := range []struct {
		rep  *report.Report
		want string
	}{
		{shard, "shard 1/3 of a burst split over replicas, offsets from 2026-11-23 09:00:00.000 UTC: max_concurrency applied to this shard alone"},
		{merged, "merged from 2 shards (b-1, b-2), offsets from 2026-11-23 09:00:00.000 UTC; approximate: itl: figures from 10 of 20 samples"},
	} {
		var page strings.Builder
		if err := WriteReport(&page, tc.rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page.String(), tc.want) {
			t.Errorf("the page lacks %q", tc.want)
		}
	}
}
