package prober

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// The ending rule on every API of tokens, streamed and not: an engine's
// abort fails with engine_abort; a content filter's ending and a refusal
// arrive (success) but are not good, each with its quality reason; a
// plain stop is a good answer.
func TestEndingRuleOnEveryAPI(t *testing.T) {
	chatStream := func(delta, finish string) string {
		return fmt.Sprintf(`data: {"choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":%q}]}`+"\n\ndata: [DONE]\n\n", delta, finish)
	}
	completionsStream := func(finish string) string {
		return fmt.Sprintf(`data: {"choices":[{"index":0,"text":" a","finish_reason":null}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"text":"","finish_reason":%q}]}`+"\n\ndata: [DONE]\n\n", finish)
	}
	chatWhole := func(message, finish string) string {
		return fmt.Sprintf(`{"choices":[{"index":0,"message":%s,"finish_reason":%q}]}`, message, finish)
	}
	responsesStream := func(delta, final string) string {
		return "event: " + delta + "\ndata: {\"type\":\"" + delta + "\",\"delta\":\" no\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0}\n\n" + final
	}
	filtered := "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"}}}\n\n"
	responsesWhole := func(part, status string) string {
		return fmt.Sprintf(`{"status":%q,"output":[{"type":"message","content":[%s]}]}`, status, part)
	}
	off := false
	type ending struct {
		want    Outcome
		reason  string // the failure's, or the quality's
		good    bool
		quality string
	}
	var (
		answer   = ending{OutcomeSuccess, "", true, ""}
		abort    = ending{OutcomeStreamError, reasonEngineAbort, false, ""}
		filter   = ending{OutcomeSuccess, "", false, "ended by the engine's content filter"}
		refusal  = ending{OutcomeSuccess, "", false, "the model refused"}
		sse      = "text/event-stream"
		jsonType = "application/json"
	)
	for _, c := range []struct {
		name        string
		api         config.API
		stream      *bool
		contentType string
		body        string
		want        ending
	}{
		{"chat stop", config.APIChat, nil, sse, chatStream(`{"content":"a"}`, "stop"), answer},
		{"chat abort", config.APIChat, nil, sse, chatStream(`{"content":"a"}`, "abort"), abort},
		{"chat abort before a token", config.APIChat, nil, sse, chatStream(`{}`, "abort"), abort},
		{"chat content_filter", config.APIChat, nil, sse, chatStream(`{"content":"a"}`, "content_filter"), filter},
		{"chat refusal only", config.APIChat, nil, sse, chatStream(`{"refusal":"I can't help with that."}`, "stop"), refusal},
		{"completions abort", config.APICompletions, nil, sse, completionsStream("abort"), abort},
		{"completions content_filter", config.APICompletions, nil, sse, completionsStream("content_filter"), filter},
		{"unstreamed chat abort", config.APIChat, &off, jsonType, chatWhole(`{"content":"a"}`, "abort"), abort},
		{"unstreamed chat content_filter", config.APIChat, &off, jsonType, chatWhole(`{"content":"a"}`, "content_filter"), filter},
		{"unstreamed chat refusal", config.APIChat, &off, jsonType, chatWhole(`{"content":null,"refusal":"I can't help with that."}`, "stop"), refusal},
		{"responses refusal", config.APIResponses, nil, sse, responsesStream("response.refusal.delta", completedEvent(1)), refusal},
		{"responses content filter", config.APIResponses, nil, sse, responsesStream("response.output_text.delta", filtered), filter},
		{"unstreamed responses refusal", config.APIResponses, &off, jsonType, responsesWhole(`{"type":"refusal","refusal":"no"}`, "completed"), refusal},
		{"unstreamed responses cancelled", config.APIResponses, &off, jsonType, responsesWhole(`{"type":"output_text","text":"a"}`, "cancelled"), abort},
	} {
		h := startHeld(t, cannedAnswer{status: 200, contentType: c.contentType, body: c.body}, 0)
		s := testkit.Scenario()
		s.Stream = c.stream
		res := probeOnce(t, testkit.Target(h.srv.URL, c.api), s)
		quality := ""
		if res.Quality != nil && !res.Quality.Passed {
			quality = res.Quality.Reason
		}
		got := ending{res.Outcome, res.Reason, res.Good, quality}
		if got != c.want {
			t.Errorf("%s: %+v (%s), want %+v\n%s", c.name, got, res.Error, c.want, logOf(res))
		}
		if c.want.reason == reasonEngineAbort && !strings.Contains(res.Error, "the engine aborted the request") {
			t.Errorf("%s: error %q", c.name, res.Error)
		}
	}
}
