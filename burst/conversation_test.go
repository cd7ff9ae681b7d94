package burst

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/sim"
)

// conversationRun runs 4 three-turn sessions, one a second (they do not
// overlap, so no prefill is shared), against a sim whose prefill costs
// 0.1 ms a token, with or without its prefix cache. Turn 1 sends 1,000
// tokens; each later turn adds an answer and 500 tokens.
func conversationRun(t *testing.T, cacheTokens int, mutate func(*sim.Config)) *report.Report {
	t.Helper()
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.MaxBatch, c.PrefixCacheTokens = 64, cacheTokens
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 5*time.Millisecond, 100*time.Microsecond, 2*time.Millisecond, 0
		if mutate != nil {
			mutate(c)
		}
	})
	c, err := prober.NewClient(testkit.Target(srv.URL, config.APIChat))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 1000}
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 20}
	s.Conversation = &config.Conversation{Turns: 3, FollowupTokens: config.Distribution{Kind: config.DistFixed, Value: 500}, ThinkTime: config.Duration(20 * time.Millisecond)}
	b := burstOf(config.ArrivalConstant, 1, 0)
	b.Requests = 4
	var last [2]int // progress counts requests, every turn
	progress := func(done, total int) { last = [2]int{done, total} }
	rep, err := Runner{Client: c, Progress: progress}.Run(context.Background(), plan.BurstOf(b, s))
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, rep)
	if last[0] != rep.Requests || last[1] != 12 {
		t.Errorf("progress ended at %d of %d, want %d sent of 12 planned", last[0], last[1], rep.Requests)
	}
	return rep
}

func turnTTFT(t *testing.T, rep *report.Report) (p50 [3]float64) {
	t.Helper()
	if len(rep.Turns) != 3 {
		t.Fatalf("report has %d turn rows, want 3: %+v", len(rep.Turns), rep.Turns)
	}
	for i, row := range rep.Turns {
		if row.Turn != i+1 || row.Scenario != "s" || row.Requests != 4 || row.Succeeded != 4 {
			t.Fatalf("turn row %d = %+v, want turn %d of scenario s with 4 of 4 requests", i, row, i+1)
		}
		p50[i] = row.TTFT.P50
	}
	return p50
}

// The acceptance test of prefix caching: with the cache, TTFT falls from
// turn 1 to turn 2 although the prompt grew by half; without, it rises.
func TestConversationTTFTByTurnShowsPrefixCache(t *testing.T) {
	cached := conversationRun(t, 1<<20, nil)
	uncached := conversationRun(t, 0, nil)
	with, without := turnTTFT(t, cached), turnTTFT(t, uncached)
	t.Logf("TTFT p50 by turn with the cache %.1f / %.1f / %.1f ms, without %.1f / %.1f / %.1f ms",
		with[0]*1e3, with[1]*1e3, with[2]*1e3, without[0]*1e3, without[1]*1e3, without[2]*1e3)
	if !(with[1] < with[0]) {
		t.Errorf("with the prefix cache, turn 2's TTFT p50 %.1f ms is not below turn 1's %.1f ms", with[1]*1e3, with[0]*1e3)
	}
	if without[1] < without[0] {
		t.Errorf("without a prefix cache, turn 2's TTFT p50 %.1f ms fell below turn 1's %.1f ms", without[1]*1e3, without[0]*1e3)
	}
	// The server's usage says what the cache served: nothing on turn 1,
	// most of the history after; nothing at all without a cache (n/a).
	if c := cached.Turns[0].CachedTokens; c == nil || *c != 0 {
		t.Errorf("turn 1's cached tokens = %v, want 0", c)
	}
	if c := cached.Turns[1].CachedTokens; c == nil || *c < 900 {
		t.Errorf("turn 2's cached tokens = %v, want most of turn 1's 1,000-token prompt", c)
	}
	if c := uncached.Turns[1].CachedTokens; c != nil {
		t.Errorf("without a cache the server reports none, yet cached tokens = %v", *c)
	}
	if p := cached.Turns[1].PromptTokens; p == nil || *p < 1500 {
		t.Errorf("turn 2's prompt tokens = %v, want the whole history (> 1,500)", p)
	}
	// The gate's heading says what the figures show, and only that.
	for _, tc := range []struct {
		rep  *report.Report
		want string
	}{
		{cached, "Conversations, TTFT by turn (cached tokens grew from turn 2: the prefix cache serves the history):"},
		{uncached, "Conversations, TTFT by turn (the engine reported no cached tokens; TTFT rose with the history: the prefix cache does not serve it):"},
	} {
		var text strings.Builder
		render.Text(&text, tc.rep)
		if !strings.Contains(text.String(), tc.want) {
			t.Errorf("the gate's text does not say\n  %s\n%s", tc.want, text.String())
		}
	}
}

// A turn that fails ends its session: the turns left are not sent, with
// the reason, and every planned request is accounted for.
func TestConversationFailedTurnEndsSession(t *testing.T) {
	rep := conversationRun(t, 0, func(c *sim.Config) { c.Faults.ErrorRate = 1 })
	if rep.PlannedRequests != 12 || rep.Requests != 4 {
		t.Errorf("planned %d, sent %d: want 12 planned (4 sessions of 3 turns), 4 sent", rep.PlannedRequests, rep.Requests)
	}
	found := false
	for _, n := range rep.NotSent {
		if n.Reason == prober.ReasonEarlierTurnFailed && n.Count == 8 {
			found = true
		}
	}
	if !found {
		t.Errorf("not sent = %+v, want 8 with reason %q", rep.NotSent, prober.ReasonEarlierTurnFailed)
	}
}

type collect struct {
	mu      sync.Mutex
	results []*prober.Result
}

func (c *collect) Observe(r *prober.Result) {
	c.mu.Lock()
	c.results = append(c.results, r)
	c.mu.Unlock()
}

// Sessions arrive open loop: a session starts at its planned time while
// earlier sessions are still between their turns.
func TestConversationSessionsOverlap(t *testing.T) {
	c := simClient(t, config.APIChat)
	s := testkit.Scenario()
	// Follow-ups as long as the first message, as the load fills them in.
	s.Conversation = &config.Conversation{Turns: 3, FollowupTokens: s.PromptTokens, ThinkTime: config.Duration(200 * time.Millisecond)}
	b := burstOf(config.ArrivalConstant, 20, 0)
	b.Requests = 5
	seen := &collect{}
	rep, err := Runner{Client: c, Observer: seen}.Run(context.Background(), plan.BurstOf(b, s))
	if err != nil {
		t.Fatal(err)
	}
	accounted(t, rep)
	var firsts, lasts []time.Time
	for _, r := range seen.results {
		switch r.Turn {
		case 1:
			firsts = append(firsts, r.Sched)
		case 3:
			lasts = append(lasts, r.Sched)
		}
	}
	if len(firsts) != 5 || len(lasts) != 5 {
		t.Fatalf("%d first and %d last turns, want 5 each", len(firsts), len(lasts))
	}
	slices.SortFunc(firsts, time.Time.Compare)
	slices.SortFunc(lasts, time.Time.Compare)
	// Every session started before the first one's last turn: all five
	// were in flight at once, as their arrivals (50 ms apart) said.
	if !firsts[4].Before(lasts[0]) {
		t.Errorf("the last session started at +%s, after the first one's last turn at +%s: sessions ran one after another", firsts[4].Sub(firsts[0]), lasts[0].Sub(firsts[0]))
	}
	if gap := firsts[4].Sub(firsts[0]); gap != 200*time.Millisecond {
		t.Errorf("sessions 1 and 5 were due %s apart, want their planned 200ms", gap)
	}
}
