package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/shard"
)

// Past its bound a shard keeps an evenly spaced subset of its ITL samples,
// says how many there were, and the merged report says its ITL figures come
// from a subset.
func TestShardITLBound(t *testing.T) {
	defer func(n int) { maxShardITL = n }(maxShardITL)
	maxShardITL = 10
	origin := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	b := config.DefaultBurst
	b.Name, b.Target, b.Requests = "b", "t", 6
	var parts []Part
	for sh := range 2 {
		run := Run{Rate: 1, Planned: 3, Shard: shard.Shard{Index: sh, Count: 2}, Origin: origin, NotSent: map[string]int{}}
		for i := range 3 {
			n := 2*i + sh
			res := &prober.Result{Sched: origin.Add(time.Duration(n) * time.Second), Outcome: prober.OutcomeSuccess, OutputTokens: 9, OutputChunks: 9,
				TTFT: 10 * time.Millisecond, E2E: 90 * time.Millisecond, TPOT: 10 * time.Millisecond}
			for k := range 8 {
				res.ITL = append(res.ITL, time.Duration(n*8+k)*time.Millisecond)
			}
			run.Results, run.Index = append(run.Results, res), append(run.Index, n)
		}
		run.Start, run.End = run.Results[0].Sched, run.Results[2].Sched.Add(90*time.Millisecond)
		rep := Build(b, run, Meta{})
		if rep.Shard.ITLCount != 24 || len(rep.Shard.ITL) != 10 || rep.Latency["itl"].Count != 24 {
			t.Fatalf("shard %d kept %d of %d ITL samples, its own summary has %d", sh, len(rep.Shard.ITL), rep.Shard.ITLCount, rep.Latency["itl"].Count)
		}
		parts = append(parts, Part{Name: "s" + string(rune('0'+sh)), Report: rep})
	}
	merged, err := Merge(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "itl: figures from 20 of 48 samples (shard 0/2 kept 10 of 24, shard 1/2 kept 10 of 24; a shard keeps at most 10)"
	if merged.Latency["itl"].Count != 20 || len(merged.Merged.Approximate) != 1 || merged.Merged.Approximate[0] != want {
		t.Errorf("merged itl %+v, approximate %q", merged.Latency["itl"], merged.Merged.Approximate)
	}
	var text strings.Builder
	merged.WriteText(&text)
	if !strings.Contains(text.String(), "approximate: "+want) || !strings.Contains(text.String(), "merged from 2 shards") {
		t.Errorf("the table does not say the ITL figures are approximate:\n%s", text.String())
	}
}
