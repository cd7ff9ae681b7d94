package report_test

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
)

// Past its bound a shard keeps an evenly spaced subset of its ITL samples
// and says how many there were; its own summary has them all. (The merged
// report saying its ITL figures come from a subset is shard's test.)
func TestShardITLBound(t *testing.T) {
	defer func(n int) { *report.MaxShardITL = n }(*report.MaxShardITL)
	*report.MaxShardITL = 10
	b, runs := reporttest.ShardRuns(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	for shard, run := range runs {
		rep := report.Build(b, run, report.Meta{})
		if rep.Shard.ITLCount != 24 || len(rep.Shard.ITL) != 10 || rep.Latency["itl"].Count != 24 {
			t.Fatalf("shard %d kept %d of %d ITL samples, its own summary has %d", shard, len(rep.Shard.ITL), rep.Shard.ITLCount, rep.Latency["itl"].Count)
		}
		if want := run.Results[1].ITL[4].Nanoseconds(); rep.Shard.ITL[5] != want {
			t.Errorf("shard %d: ITL sample 5 of the kept 10 is %d ns, want the evenly spaced %d ns", shard, rep.Shard.ITL[5], want)
		}
	}
}
