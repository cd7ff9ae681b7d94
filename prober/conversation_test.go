package prober

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

// recordBodies serves the sim behind a proxy that keeps each request body.
func recordBodies(t *testing.T, api config.API) (config.Target, func() []map[string]any) {
	t.Helper()
	simSrv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Answer = "fine thanks and you" })
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if json.Unmarshal(raw, &body) == nil && r.Method == http.MethodPost {
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		testkit.Proxy(w, r, simSrv.URL)
	}))
	t.Cleanup(srv.Close)
	return testkit.Target(srv.URL, api), func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

// converse holds one conversation of turns on target: every turn sent.
func converse(t *testing.T, target config.Target, turns int) []*Result {
	t.Helper()
	c := newClient(t, target)
	s := conversationScenario(turns)
	var results []*Result
	first := Request{Scenario: s, Traffic: TrafficCanary, Sched: time.Now()}
	left, why := Converse(context.Background(), first, prompt.NewBuilder(s, prompt.Source{}, 1).Session(7), func(r Request) *Result { return c.Do(context.Background(), r) }, func(r *Result) { results = append(results, r) })
	if left != 0 || why != "" || len(results) != turns {
		t.Fatalf("%d turns not sent (%q), %d results", left, why, len(results))
	}
	return results
}

func conversationScenario(turns int) config.Scenario {
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 4}
	s.Conversation = &config.Conversation{Turns: turns, FollowupTokens: config.Distribution{Kind: config.DistFixed, Value: 5}, ThinkTime: config.Duration(30 * time.Millisecond)}
	return s
}

// Each turn sends the whole history, with the answer the server gave, then
// its new user message; every result knows its turn, and each later turn is
// due its think time after the answer before it.
func TestConverseSendsHistory(t *testing.T) {
	target, bodies := recordBodies(t, config.APIChat)
	results := converse(t, target, 3)
	for i, res := range results {
		if res.Outcome != OutcomeSuccess || res.Turn != i+1 {
			t.Fatalf("result %d: turn %d, %s %s", i, res.Turn, res.Outcome, res.Error)
		}
		if i > 0 {
			gap := res.Sched.Sub(results[i-1].Sched.Add(results[i-1].E2E))
			if gap < 30*time.Millisecond {
				t.Errorf("turn %d was due %s after turn %d's answer, want the 30ms think time", i+1, gap, i)
			}
		}
	}
	if l := logOf(results[2]); !strings.Contains(l, "conversation turn 3: 4 earlier messages") {
		t.Errorf("turn 3's log does not say its turn:\n%s", l)
	}
	got := bodies()
	if len(got) != 3 {
		t.Fatalf("%d bodies recorded, want 3", len(got))
	}
	var roles, contents []string
	for _, m := range got[2]["messages"].([]any) {
		msg := m.(map[string]any)
		roles = append(roles, msg["role"].(string))
		contents = append(contents, msg["content"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		t.Fatalf("turn 3 sent roles %v, want the whole history then a user message", roles)
	}
	first1 := got[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	if contents[0] != first1 {
		t.Errorf("turn 3's first message %q is not turn 1's %q", contents[0], first1)
	}
	if contents[1] != results[0].Answer || !strings.Contains(contents[1], "fine") {
		t.Errorf("turn 3 sent the first answer as %q; the server answered %q", contents[1], results[0].Answer)
	}
	if n := len(strings.Fields(contents[4])); n != 5 {
		t.Errorf("turn 3's new message has %d words, want followup_tokens 5", n)
	}
	// The server's count of the prompt grows turn by turn.
	if !(results[0].PromptTokensReported < results[1].PromptTokensReported && results[1].PromptTokensReported < results[2].PromptTokensReported) {
		t.Errorf("prompt tokens by turn %d, %d, %d: the history does not grow", results[0].PromptTokensReported, results[1].PromptTokensReported, results[2].PromptTokensReported)
	}
}

// On the completions API a conversation is one text whose every turn starts
// with the turn before it, so a prefix cache can serve it.
func TestConverseCompletionsPrefix(t *testing.T) {
	target, bodies := recordBodies(t, config.APICompletions)
	c := newClient(t, target)
	s := conversationScenario(2)
	first := Request{Scenario: s, Traffic: TrafficCanary, Sched: time.Now()}
	Converse(context.Background(), first, prompt.NewBuilder(s, prompt.Source{}, 1).Session(1), func(r Request) *Result { return c.Do(context.Background(), r) }, func(*Result) {})
	got := bodies()
	if len(got) != 2 {
		t.Fatalf("%d bodies, want 2", len(got))
	}
	p1, p2 := got[0]["prompt"].(string), got[1]["prompt"].(string)
	if !strings.HasPrefix(p2, p1+"\n\n") || !strings.Contains(p2, "fine thanks") {
		t.Errorf("turn 2's prompt %q does not start with turn 1's %q and carry its answer", p2, p1)
	}
}

// A session stopped between turns (shutdown, the brake) says how many turns
// were left and leaves the reason to its caller.
func TestConverseStopsBetweenTurns(t *testing.T) {
	target, _ := recordBodies(t, config.APIChat)
	c := newClient(t, target)
	s := conversationScenario(4)
	s.Conversation.ThinkTime = config.Duration(time.Hour)
	wait, cancel := context.WithCancel(context.Background())
	n := 0
	left, why := Converse(wait, Request{Scenario: s, Sched: time.Now()}, prompt.NewBuilder(s, prompt.Source{}, 1).Session(1),
		func(r Request) *Result { return c.Do(context.Background(), r) }, func(*Result) { n++; cancel() })
	if n != 1 || left != 3 || why != "" {
		t.Errorf("%d results, %d left (%q): want 1 sent and 3 left, reason for the caller", n, left, why)
	}
}

// The server's count of cached prompt tokens is read from its usage; a
// count past the prompt is not believed, and none means not reported.
func TestCachedPromptTokens(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefixCacheTokens = 1 << 16 })
	c := newClient(t, testkit.Target(srv.URL, config.APIChat))
	s := conversationScenario(2)
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	var results []*Result
	Converse(context.Background(), Request{Scenario: s, Sched: time.Now()}, prompt.NewBuilder(s, prompt.Source{}, 1).Session(1),
		func(r Request) *Result { return c.Do(context.Background(), r) }, func(r *Result) { results = append(results, r) })
	if len(results) != 2 || !results[0].CachedReported || results[0].CachedPromptTokens != 0 || !results[1].CachedReported || results[1].CachedPromptTokens < 64 {
		for _, r := range results {
			t.Logf("turn %d: cached %d (reported %v) of %d", r.Turn, r.CachedPromptTokens, r.CachedReported, r.PromptTokensReported)
		}
		t.Fatal("want turn 1 with 0 cached tokens and turn 2 with its first message's 64 and more")
	}
	for _, tc := range []struct {
		details  string
		reported bool
	}{{`,"prompt_tokens_details":{"cached_tokens":999}`, false}, {`,"prompt_tokens_details":{"cached_tokens":-1}`, false}, {`,"prompt_tokens_details":null`, false}, {``, false}, {`,"prompt_tokens_details":{"cached_tokens":8}`, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n"+
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
				`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1`+tc.details+`}}`+"\n\n"+"data: [DONE]\n\n")
		}))
		res := newClient(t, testkit.Target(srv.URL, config.APIChat)).Do(context.Background(), Request{Scenario: testkit.Scenario(), Prompt: prompt.Prompt{Text: "x"}, MaxTokens: 4, Sched: time.Now()})
		srv.Close()
		if res.Outcome != OutcomeSuccess || res.CachedReported != tc.reported {
			t.Errorf("usage details %q: %s, cached %d reported %v, want reported %v", tc.details, res.Outcome, res.CachedPromptTokens, res.CachedReported, tc.reported)
		}
	}
}

// A turn llmprobe itself cancelled (shutdown, a reload) did not fail: the
// turns left carry the caller's reason, not the target's.
func TestConverseCancelledTurn(t *testing.T) {
	target, _ := recordBodies(t, config.APIChat)
	c := newClient(t, target)
	s := conversationScenario(3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got []*Result
	left, why := Converse(context.Background(), Request{Scenario: s, Sched: time.Now()}, prompt.NewBuilder(s, prompt.Source{}, 1).Session(1),
		func(r Request) *Result { return c.Do(ctx, r) }, func(r *Result) { got = append(got, r) })
	if len(got) != 1 || got[0].Outcome != OutcomeCancelled || left != 2 || why != "" {
		t.Errorf("%d results (%v), %d left with reason %q: want one cancelled, 2 left, no reason", len(got), got[0].Outcome, left, why)
	}
}
