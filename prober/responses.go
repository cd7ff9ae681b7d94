package prober

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
)

// responses is the Responses API (/v1/responses): the prompt is the input,
// a string for one turn and the message list for a conversation's later
// turns; a stream is typed events, read into the chat chunk each stands
// for, and must end with response.completed; an unstreamed answer is the
// response object.
type responses struct{}

func (responses) path(dialect) string { return "/v1/responses" }

func (responses) traits() traits { return traits{tokens: true, final: "response.completed"} }

func (responses) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	return textBody(textRequest(config.APIResponses, model, r, extra), r)
}

// fields sets the Responses API's own fields: the output cap, the tools
// and format in its flat shape, and the prompt as input.
func (responses) fields(body map[string]any, r BodyRequest, content string) {
	structuredFields(body, &r.Structured, true)
	body["max_output_tokens"] = r.MaxTokens
	if len(r.History) == 0 {
		body["input"] = content
		return
	}
	body["input"] = messages(r.History, content)
}

func (responses) event(ev sse.Event, c *streamChunk) (bool, string, error) {
	return typedEvent(readResponsesEvent, ev, c)
}

// typedEvent reads one event of an API of typed events (the Responses and
// Messages APIs) with read: a failure the server reported is
// error_in_stream, anything else that is no event malformed.
func typedEvent(read func(name string, data []byte, c *streamChunk) (bool, error), ev sse.Event, c *streamChunk) (bool, string, error) {
	done, err := read(ev.Name, ev.Data, c)
	var failure *serverFailure
	switch {
	case errors.As(err, &failure):
		return false, reasonErrorInStream, err
	case err != nil:
		return false, reasonMalformed, fmt.Errorf("malformed event: %v: %s", err, truncate(string(ev.Data), 128))
	}
	return done, "", nil
}

func (responses) whole(body io.Reader, _ http.Header, r Request, keep int, _ dialect) (*answer, error) {
	return readText(body, r.MaxTokens, keep, readResponse)
}

// serverFailure is a failure the server reported inside a stream: a
// Responses API response.failed, response.incomplete or error event.
type serverFailure struct{ Event, Message string }

func (f *serverFailure) Error() string {
	if f.Message == "" {
		return f.Event + " event"
	}
	return f.Event + " event: " + f.Message
}

// responsesEvent is the part of a Responses API stream event llmprobe reads:
// one shape for every type, decoded once.
type responsesEvent struct {
	Type     string          `json:"type"`
	Delta    string          `json:"delta"`
	Message  string          `json:"message"`
	Code     any             `json:"code"`
	Response *responseObject `json:"response"`
	// llama.cpp's own timings of the request, beside response.completed's
	// response (as on its chat chunks).
	Timings json.RawMessage `json:"timings"`
}

// responseObject is the part of a Responses API response object llmprobe
// reads, in a stream's final event or as an unstreamed answer.
type responseObject struct {
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// readResponsesEvent reads one event of a streamed Responses API answer into the
// chat chunk it stands for, so one stream reader measures both: output text
// and refusal deltas are content, reasoning deltas reasoning, function-call
// argument deltas tool calls, and the final response's usage the usage.
// final is true for the event that ends the stream. A failure the server
// reported is a *ServerFailure; anything else that is no event is an error.
// name is the SSE event name, used when data has no type.
func readResponsesEvent(name string, data []byte, c *streamChunk) (final bool, err error) {
	var ev responsesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, err
	}
	if ev.Type == "" {
		ev.Type = name
	}
	*c = streamChunk{}
	switch ev.Type {
	case "response.output_text.delta":
		c.delta().Content = ev.Delta
	case "response.refusal.delta":
		c.delta().Refusal = ev.Delta
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		c.delta().Reasoning = ev.Delta
	case "response.function_call_arguments.delta":
		if ev.Delta != "" {
			c.delta().ToolCalls = []json.RawMessage{data}
		}
	case "response.output_item.added", "response.output_item.done", "response.function_call_arguments.done":
		c.ToolItems = []json.RawMessage{data}
	case "error":
		msg := ev.Message
		if ev.Code != nil {
			msg = strings.TrimSpace(fmt.Sprintf("%v: %s", ev.Code, msg))
		}
		return false, &serverFailure{Event: ev.Type, Message: truncate(msg, maxMessage)}
	case "response.failed", "response.incomplete", "response.completed":
		c.Timings = ev.Timings
		return ev.final(c)
	}
	return false, nil
}

// final reads the event that ends the stream. A response cut short by
// max_output_tokens ends as a chat answer with finish_reason "length" does:
// that is the length llmprobe asked for, not a failure.
func (ev *responsesEvent) final(c *streamChunk) (bool, error) {
	r := ev.Response
	if r == nil {
		return false, errors.New(ev.Type + " event without its response")
	}
	reason := ""
	if d := r.IncompleteDetails; d != nil {
		reason = d.Reason
	}
	switch {
	case ev.Type == "response.failed":
		msg := "no error given"
		if e := r.Error; e != nil {
			msg = strings.TrimPrefix(e.Code+": "+e.Message, ": ")
		}
		return false, &serverFailure{Event: ev.Type, Message: truncate(msg, maxMessage)}
	case ev.Type == "response.incomplete" && reason != "max_output_tokens" && reason != endingContentFilter:
		return false, &serverFailure{Event: ev.Type, Message: "reason " + truncate(fmt.Sprintf("%q", reason), maxMessage)}
	}
	c.Choices = []choice{{FinishReason: r.Status}}
	if reason != "" {
		c.Choices[0].FinishReason = r.Status + " (" + reason + ")"
	}
	if u := r.Usage; u != nil {
		c.Usage = &usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
		if d := u.OutputTokensDetails; d != nil {
			c.Usage.ReasoningTokens = d.ReasoningTokens
		}
		if d := u.InputTokensDetails; d != nil && d.CachedTokens != nil {
			c.Usage.PromptTokensDetails = &promptDetails{CachedTokens: d.CachedTokens}
		}
	}
	return true, nil
}

// delta is the chunk's one choice's delta, made on first use.
func (c *streamChunk) delta() *choiceDelta {
	if len(c.Choices) == 0 {
		c.Choices = []choice{{}}
	}
	return &c.Choices[0].Delta
}

// responseAnswer is an unstreamed Responses API answer: the response
// object a stream's response.completed event carries.
type responseAnswer struct {
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"output"`
	Model string `json:"model"`
	responseObject
}

// readResponse reads an unstreamed Responses API answer.
func readResponse(raw []byte, w *answer) error {
	var a responseAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return notJSON(raw, err)
	}
	switch a.Status {
	case "":
		return &answerProblem{Reason: reasonAnswerNoChoices, Text: "the answer is no response object (no status): " + truncate(string(raw), 64)}
	case "completed", "incomplete", "failed":
	case "cancelled":
		return &answerProblem{Reason: reasonEngineAbort, Text: `response status "cancelled": the engine aborted the request`}
	default: // queued, in_progress: no answer
		return &answerProblem{Reason: reasonErrorInAnswer, Text: "response status " + truncate(fmt.Sprintf("%q", a.Status), 64)}
	}
	w.Model = truncate(a.Model, 128)
	var text, refusal, reasoning strings.Builder
	for _, item := range a.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				text.WriteString(p.Text)
				refusal.WriteString(p.Refusal)
			}
		case "reasoning":
			for _, p := range item.Content {
				reasoning.WriteString(p.Text)
			}
			if len(item.Content) == 0 {
				for _, p := range item.Summary {
					reasoning.WriteString(p.Text)
				}
			}
		case "function_call":
			w.ToolCalls = append(w.ToolCalls, wholeToolCall{Name: item.Name, Arguments: item.Arguments})
		}
	}
	w.Content, w.Refusal, w.Reasoning = text.String(), refusal.String(), reasoning.String()
	// The stream's final event reads the same response: its status, usage
	// and failure, with max_output_tokens the length asked for.
	ev := responsesEvent{Type: "response." + a.Status, Response: &a.responseObject}
	var c streamChunk
	if _, err := ev.final(&c); err != nil {
		return &answerProblem{Reason: reasonErrorInAnswer, Text: truncate(err.Error(), maxMessage)}
	}
	if len(c.Choices) > 0 {
		w.FinishReason = c.Choices[0].FinishReason
	}
	w.usage = usageOrNil(c.Usage)
	return nil
}
