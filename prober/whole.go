package prober

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
)

// Reasons of a failed unstreamed answer.
const (
	ReasonAnswerNotJSON   = "answer_not_json"
	ReasonAnswerNoChoices = "answer_no_choices"
	ReasonUnaskedStream   = "unasked_event_stream"
	ReasonAnswerTooLarge  = "answer_too_large"
	ReasonErrorInAnswer   = "error_in_answer"
)

// WholeReasons lists every reason ReadWhole's problems carry.
var WholeReasons = []string{ReasonAnswerNotJSON, ReasonAnswerNoChoices, ReasonUnaskedStream, ReasonAnswerTooLarge, ReasonErrorInAnswer}

// WholeLimit bounds the body of an unstreamed answer of maxTokens output
// tokens: 64 KiB, and 128 bytes a token, room for JSON escapes, reasoning
// and an engine's extra objects (logprobs without top candidates).
func WholeLimit(maxTokens int) int64 { return 64<<10 + 128*int64(max(maxTokens, 1)) }

// Bounds of the tool calls an unstreamed answer keeps.
const (
	MaxToolCalls    = 64
	maxToolArgBytes = 64<<10 + 1<<10
)

// WholeAnswer is what an unstreamed answer says: its texts, kept to the bound
// ReadWhole was given, its tool calls, how it finished and its usage.
type WholeAnswer struct {
	Content, Reasoning string
	ToolCalls          []WholeToolCall
	FinishReason       string
	// Usage is nil when the answer reported none; TextTokens is then what
	// its texts and tool-call arguments come to by prompt.EstimateTokens,
	// counted before any was cut, and ReasoningTextTokens the reasoning's
	// share of it.
	Usage                           *Usage
	TextTokens, ReasoningTextTokens int
	// The engine's own timings of the request, raw (see ParseVLLMMetrics).
	Metrics, Timings json.RawMessage
}

// WholeToolCall is one function call of an answer: its name and the arguments
// the model wrote, as they came.
type WholeToolCall struct {
	Name, Arguments string
	// Cut: the arguments ran past what is kept, so they are not all here.
	Cut bool
}

// ReadWhole reads the unstreamed answer to a request of api from r: at
// most limit bytes, each text kept to keep bytes. An answer that is not
// one of api's shape, or says it failed, is a *pooling.Problem with its
// reason; an error reading r is returned as it is.
func ReadWhole(api config.API, r io.Reader, limit int64, keep int) (*WholeAnswer, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, &AnswerProblem{Reason: ReasonAnswerTooLarge, Text: fmt.Sprintf("the answer is over %d bytes, the bound for its max_tokens", limit)}
	}
	if t := bytes.TrimSpace(raw); bytes.HasPrefix(t, []byte("data:")) || bytes.HasPrefix(t, []byte("event:")) {
		return nil, &AnswerProblem{Reason: ReasonUnaskedStream, Text: "an event stream came for a request with stream: false: " + Truncate(string(t), 64)}
	}
	w := &WholeAnswer{}
	if api == config.APIResponses {
		err = w.readResponse(raw)
	} else {
		err = w.readChoices(raw)
	}
	if err != nil {
		return nil, err
	}
	w.cut(keep)
	return w, nil
}

// choicesAnswer is an unstreamed chat or completions answer.
type choicesAnswer struct {
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Metrics json.RawMessage `json:"metrics"`
	Timings json.RawMessage `json:"timings"`
}

func (w *WholeAnswer) readChoices(raw []byte) error {
	var a choicesAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return notJSON(raw, err)
	}
	if len(a.Error) > 0 && !bytes.Equal(a.Error, []byte("null")) {
		return &AnswerProblem{Reason: ReasonErrorInAnswer, Text: "error in the answer: " + Truncate(string(a.Error), maxMessage)}
	}
	if len(a.Choices) == 0 {
		return &AnswerProblem{Reason: ReasonAnswerNoChoices, Text: "the answer has no choices: " + Truncate(string(raw), 64)}
	}
	c := a.Choices[0]
	w.Content, w.FinishReason = c.Text, c.FinishReason
	if m := c.Message; m != nil {
		if m.Content != nil {
			w.Content = *m.Content
		}
		// vLLM writes both names for one text (vllm#33635): read it once.
		w.Reasoning = cmp.Or(m.ReasoningContent, m.Reasoning)
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, WholeToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	w.Usage, w.Metrics, w.Timings = usageOrNil(a.Usage), a.Metrics, a.Timings
	return nil
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
	responseObject
}

func (w *WholeAnswer) readResponse(raw []byte) error {
	var a responseAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return notJSON(raw, err)
	}
	switch a.Status {
	case "":
		return &AnswerProblem{Reason: ReasonAnswerNoChoices, Text: "the answer is no response object (no status): " + Truncate(string(raw), 64)}
	case "completed", "incomplete", "failed":
	default: // queued, in_progress, cancelled: no answer
		return &AnswerProblem{Reason: ReasonErrorInAnswer, Text: "response status " + Truncate(fmt.Sprintf("%q", a.Status), 64)}
	}
	var text, reasoning strings.Builder
	for _, item := range a.Output {
		switch item.Type {
		case "message":
			for _, p := range item.Content {
				text.WriteString(p.Text + p.Refusal)
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
			w.ToolCalls = append(w.ToolCalls, WholeToolCall{Name: item.Name, Arguments: item.Arguments})
		}
	}
	w.Content, w.Reasoning = text.String(), reasoning.String()
	// The stream's final event reads the same response: its status, usage
	// and failure, with max_output_tokens the length asked for.
	ev := responsesEvent{Type: "response." + a.Status, Response: &a.responseObject}
	var c Chunk
	if _, err := ev.final(&c); err != nil {
		return &AnswerProblem{Reason: ReasonErrorInAnswer, Text: Truncate(err.Error(), maxMessage)}
	}
	if len(c.Choices) > 0 {
		w.FinishReason = c.Choices[0].FinishReason
	}
	w.Usage = usageOrNil(c.Usage)
	return nil
}

func notJSON(raw []byte, err error) error {
	return &AnswerProblem{Reason: ReasonAnswerNotJSON, Text: fmt.Sprintf("the answer is not JSON: %v: %s", err, Truncate(string(raw), 64))}
}

// usageOrNil is u, or nil when it counts nothing (a zeroed usage object).
func usageOrNil(u *Usage) *Usage {
	if u == nil || (u.CompletionTokens <= 0 && u.PromptTokens <= 0) {
		return nil
	}
	return u
}

// cut estimates the texts' tokens while they are whole, then keeps keep
// bytes of each text, at most MaxToolCalls calls, and a bounded part of
// each call's arguments.
func (w *WholeAnswer) cut(keep int) {
	estimate := func(s string) int {
		if s == "" {
			return 0
		}
		return prompt.EstimateTokens(s)
	}
	w.ReasoningTextTokens = estimate(w.Reasoning)
	w.TextTokens = estimate(w.Content) + w.ReasoningTextTokens
	for _, tc := range w.ToolCalls {
		w.TextTokens += estimate(tc.Arguments)
	}
	w.Content, w.Reasoning = Truncate(w.Content, keep), Truncate(w.Reasoning, keep)
	if len(w.ToolCalls) > MaxToolCalls {
		w.ToolCalls = w.ToolCalls[:MaxToolCalls]
	}
	for i := range w.ToolCalls {
		tc := &w.ToolCalls[i]
		tc.Cut = len(tc.Arguments) > maxToolArgBytes
		tc.Name, tc.Arguments = Truncate(tc.Name, 256), Truncate(tc.Arguments, maxToolArgBytes)
	}
}
