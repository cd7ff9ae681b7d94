package render_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/shard"
)

// The by-turn table: by scenario and turn, successful requests' TTFT and
// tokens, cancelled requests left out, n/a where the server reported no
// cached tokens; the same after a split burst's shards are merged.
func TestTurnsAndTheirShards(t *testing.T) {
	origin := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	b := config.DefaultBurst
	b.Name, b.Target, b.Requests = "b", "t", 4
	turnResult := func(session, turn int, outcome prober.Outcome, ttft time.Duration, cached int) *prober.Result {
		r := &prober.Result{Scenario: "chat", Turn: turn, Sched: origin.Add(time.Duration(session)*time.Second + time.Duration(turn)*100*time.Millisecond),
			Outcome: outcome, TTFT: ttft, E2E: 2 * ttft, OutputTokens: 4, OutputChunks: 4, PromptTokensReported: 100 * turn}
		if cached >= 0 {
			r.CachedPromptTokens, r.CachedReported = cached, true
		}
		return r
	}
	var parts []report.ShardReport
	var all []*prober.Result
	for session := range 2 { // shard i runs session i
		run := report.Run{Rate: 1, Planned: 4, Shard: shard.Shard{Index: session, Count: 2}, Origin: origin, NotSent: map[string]int{}}
		results := []*prober.Result{
			turnResult(session, 1, prober.OutcomeSuccess, 200*time.Millisecond, 0),
			turnResult(session, 2, prober.OutcomeSuccess, 50*time.Millisecond, 96),
		}
		if session == 1 {
			results[1].CachedReported = false // this server said nothing of its cache
			results = append(results, turnResult(session, 3, prober.OutcomeCancelled, 0, -1))
		} else {
			results = append(results, turnResult(session, 3, prober.OutcomeTimeout, 0, -1))
		}
		for _, r := range results {
			run.Results, run.Index = append(run.Results, r), append(run.Index, session)
		}
		all = append(all, results...)
		run.Start, run.End = results[0].Sched, results[len(results)-1].Sched.Add(time.Second)
		parts = append(parts, report.ShardReport{Name: "s" + string(rune('0'+session)), Report: report.Build(b, run, report.Meta{})})
	}
	single := report.Build(b, report.Run{Rate: 1, Planned: 8, Results: all, NotSent: map[string]int{}, Start: origin, End: origin.Add(3 * time.Second)}, report.Meta{})
	merged, err := mergeShards(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*report.Report{"single": single, "merged": merged} {
		if len(rep.Turns) != 3 {
			t.Fatalf("%s: %d turn rows, want 3: %+v", name, len(rep.Turns), rep.Turns)
		}
		one, two, three := rep.Turns[0], rep.Turns[1], rep.Turns[2]
		if one.Turn != 1 || one.Requests != 2 || one.Succeeded != 2 || one.TTFT.P50 != 0.2 || *one.PromptTokens != 100 || *one.CachedTokens != 0 {
			t.Errorf("%s: turn 1 = %+v", name, one)
		}
		if two.Turn != 2 || two.TTFT.P50 != 0.05 || *two.PromptTokens != 200 || two.CachedTokens == nil || *two.CachedTokens != 96 {
			t.Errorf("%s: turn 2 = %+v (cached over the one request that reported it)", name, two)
		}
		if three.Turn != 3 || three.Requests != 1 || three.Succeeded != 0 || three.TTFT.Count != 0 || three.PromptTokens != nil || three.CachedTokens != nil {
			t.Errorf("%s: turn 3 = %+v, want 1 sent (the cancelled one left out), none successful, figures n/a", name, three)
		}
		var text, md strings.Builder
		render.Text(&text, rep)
		if err := render.Markdown(&md, rep); err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{text.String(), md.String()} {
			if !strings.Contains(out, "TTFT by turn") || !strings.Contains(out, "0/1") || !strings.Contains(out, "n/a") {
				t.Errorf("%s: the by-turn table is missing or lacks its n/a:\n%s", name, out)
			}
		}
	}
	want := &report.PromptCache{Requests: 3, PromptTokens: 400, CachedTokens: 96, HitRatio: 0.24}
	if !reflect.DeepEqual(single.PromptCache, want) || !reflect.DeepEqual(merged.PromptCache, want) {
		t.Errorf("prompt cache single %+v, merged %+v, want %+v", single.PromptCache, merged.PromptCache, want)
	}
	var text strings.Builder
	render.Text(&text, single)
	if line := "prefix cache: 24.0% of prompt tokens served from the engine's cache (96 of 400, its usage over 3 of 4 successful requests)"; !strings.Contains(text.String(), line) {
		t.Errorf("the text report lacks %q:\n%s", line, text.String())
	}
	if !reflect.DeepEqual(single.Turns, merged.Turns) {
		t.Errorf("merged turns differ from a single run's:\n%+v\n%+v", merged.Turns, single.Turns)
	}
	// Reports of bursts without conversations have no table.
	text.Reset()
	plain := report.Build(b, report.Run{Rate: 1, Results: []*prober.Result{{Sched: origin, Outcome: prober.OutcomeSuccess, TTFT: time.Millisecond, OutputChunks: 1}}, NotSent: map[string]int{}, Start: origin, End: origin.Add(time.Second)}, report.Meta{})
	render.Text(&text, plain)
	if plain.Turns != nil || strings.Contains(text.String(), "by turn") || plain.PromptCache != nil || !strings.Contains(text.String(), "prefix cache: n/a") {
		t.Errorf("a burst without conversations has a turn table: %+v", plain.Turns)
	}
}

// mergeShards is llmprobe report merge's merge: the shards' report, judged
// by the one pipeline against baseline.
func mergeShards(parts []report.ShardReport, baseline *report.Report) (*report.Report, error) {
	merged, b, err := report.MergeShards(parts)
	if err != nil {
		return nil, err
	}
	return merged, burst.Pipeline{Baseline: baseline}.Finish(merged, b.MaxRegression, 0, nil)
}
