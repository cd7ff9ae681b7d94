package prober

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"

	"github.com/llmprobe/llmprobe/prompt"
)

// Reasons of a failed unstreamed answer.
const (
	reasonAnswerNotJSON   = "answer_not_json"
	reasonAnswerNoChoices = "answer_no_choices"
	reasonUnaskedStream   = "unasked_event_stream"
	reasonAnswerTooLarge  = "answer_too_large"
	reasonErrorInAnswer   = "error_in_answer"
)

// wholeReasons lists every reason an unstreamed answer's problems carry.
var wholeReasons = []string{reasonAnswerNotJSON, reasonAnswerNoChoices, reasonUnaskedStream, reasonAnswerTooLarge, reasonErrorInAnswer}

// WholeLimit bounds the body of an unstreamed answer of maxTokens output
// tokens: 64 KiB, and 128 bytes a token, room for JSON escapes, reasoning
// and an engine's extra objects (logprobs without top candidates).
func WholeLimit(maxTokens int) int64 { return 64<<10 + 128*int64(max(maxTokens, 1)) }

// Bounds of the tool calls an unstreamed answer keeps.
const (
	maxToolCalls    = 64
	maxToolArgBytes = 64<<10 + 1<<10
)

// wholeToolCall is one function call of an answer: its name and the arguments
// the model wrote, as they came.
type wholeToolCall struct {
	Name, Arguments string
	// Cut: the arguments ran past what is kept, so they are not all here.
	Cut bool
}

// readText reads the unstreamed answer to a request of maxTokens output
// tokens from r: at most WholeLimit(maxTokens) bytes, read by parse, each
// text then kept to keep bytes. An answer that is not of the API's shape,
// or says it failed, is an *AnswerProblem with its reason; an error reading
// r is returned as it is.
func readText(r io.Reader, maxTokens, keep int, parse func(raw []byte, a *answer) error) (*answer, error) {
	limit := WholeLimit(maxTokens)
	raw, err := readValue(r, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, &answerProblem{Reason: reasonAnswerTooLarge, Text: fmt.Sprintf("the answer is over %d bytes, the bound for its max_tokens", limit)}
	}
	if t := bytes.TrimSpace(raw); bytes.HasPrefix(t, []byte("data:")) || bytes.HasPrefix(t, []byte("event:")) {
		return nil, &answerProblem{Reason: reasonUnaskedStream, Text: "an event stream came for a request with stream: false: " + truncate(string(t), 64)}
	}
	a := &answer{}
	if err := parse(raw, a); err != nil {
		return nil, err
	}
	a.cut(keep)
	return a, nil
}

// choicesAnswer is an unstreamed chat or completions answer.
type choicesAnswer struct {
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Content          *string `json:"content"`
			Refusal          *string `json:"refusal"`
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
	Model   string          `json:"model"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Metrics json.RawMessage `json:"metrics"`
	Timings json.RawMessage `json:"timings"`
}

// readChoices reads an unstreamed chat or completions answer.
func readChoices(raw []byte, w *answer) error {
	var a choicesAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return notJSON(raw, err)
	}
	if len(a.Error) > 0 && !bytes.Equal(a.Error, []byte("null")) {
		return &answerProblem{Reason: reasonErrorInAnswer, Text: "error in the answer: " + truncate(string(a.Error), maxMessage)}
	}
	if len(a.Choices) == 0 {
		return &answerProblem{Reason: reasonAnswerNoChoices, Text: "the answer has no choices: " + truncate(string(raw), 64)}
	}
	c := a.Choices[0]
	w.Content, w.FinishReason, w.Model = c.Text, c.FinishReason, truncate(a.Model, 128)
	if m := c.Message; m != nil {
		if m.Content != nil {
			w.Content = *m.Content
		}
		if m.Refusal != nil {
			w.Refusal = *m.Refusal
		}
		// vLLM writes both names for one text (vllm#33635): read it once.
		w.Reasoning = cmp.Or(m.ReasoningContent, m.Reasoning)
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, wholeToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	w.usage, w.Metrics, w.Timings = usageOrNil(a.Usage), a.Metrics, a.Timings
	return nil
}

func notJSON(raw []byte, err error) error {
	return &answerProblem{Reason: reasonAnswerNotJSON, Text: fmt.Sprintf("the answer is not JSON: %v: %s", err, truncate(string(raw), 64))}
}

// usageOrNil is u, or nil when it counts nothing (a zeroed usage object).
func usageOrNil(u *usage) *usage {
	if u == nil || (u.CompletionTokens <= 0 && u.PromptTokens <= 0) {
		return nil
	}
	return u
}

// cut estimates the texts' tokens while they are whole, then keeps keep
// bytes of each text, at most MaxToolCalls calls, and a bounded part of
// each call's arguments.
func (w *answer) cut(keep int) {
	estimate := func(s string) int {
		if s == "" {
			return 0
		}
		return prompt.EstimateTokens(s)
	}
	w.ReasoningTextTokens = estimate(w.Reasoning)
	w.TextTokens = estimate(w.Content) + estimate(w.Refusal) + w.ReasoningTextTokens
	for _, tc := range w.ToolCalls {
		w.TextTokens += estimate(tc.Arguments)
	}
	w.Content, w.Refusal, w.Reasoning = truncate(w.Content, keep), truncate(w.Refusal, keep), truncate(w.Reasoning, keep)
	if len(w.ToolCalls) > maxToolCalls {
		w.ToolCalls = w.ToolCalls[:maxToolCalls]
	}
	for i := range w.ToolCalls {
		tc := &w.ToolCalls[i]
		tc.Cut = len(tc.Arguments) > maxToolArgBytes
		tc.Name, tc.Arguments = truncate(tc.Name, 256), truncate(tc.Arguments, maxToolArgBytes)
	}
}
