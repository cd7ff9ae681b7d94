// Package shaped makes the sim's answers to requests that ask for a shape:
// function calls from their tools, JSON text from their response format,
// as token-sized pieces, streamed as chat deltas or Responses API events,
// with the faults hostile tests ask for.
package shaped

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/sim/internal/jsongen"
)

// Faults an answer can carry, for hostile tests.
const (
	ArgumentsNotJSON  = "arguments_not_json" // a call's arguments cut short of their end
	ArgumentsInvalid  = "arguments_invalid"  // a call's arguments break the function's parameters
	UndefinedFunction = "undefined_function" // a call of a function the request does not define
	NoToolCall        = "no_tool_call"       // text where tools may be called, even when required
	FormatViolation   = "format_violation"   // JSON text its response format refuses
)

// Faults lists every fault, for the sim's validation.
var Faults = []string{ArgumentsNotJSON, ArgumentsInvalid, UndefinedFunction, NoToolCall, FormatViolation}

// Request is what a request says about its answer's shape, as it came.
type Request struct {
	Tools, ToolChoice json.RawMessage
	// ResponseFormat is chat's; Text the Responses API's, whose format is flat.
	ResponseFormat, Text json.RawMessage
}

// Answer is a shaped answer: calls, or JSON text.
type Answer struct {
	Calls []Call
	Text  []string // the JSON text's pieces; nil for calls
	// LlamaCPP writes deltas as llama.cpp's server does (the first with an
	// empty arguments string), else as vLLM does (the name alone).
	LlamaCPP bool
}

// Call is one function call: its id, its function's name, its arguments'
// pieces.
type Call struct {
	ID, Name string
	Pieces   []string
}

type tool struct {
	Type     string `json:"type"`
	Name     string `json:"name"` // the Responses API's flat tool
	Function *struct {
		Name       string `json:"name"`
		Parameters any    `json:"parameters"`
	} `json:"function"`
	Parameters any `json:"parameters"`
}

type format struct {
	Type       string `json:"type"`
	Schema     any    `json:"schema"` // the Responses API's flat json_schema
	JSONSchema *struct {
		Schema any `json:"schema"`
	} `json:"json_schema"`
}

// Plan is req's answer, or nil when req asks for no shape (no tools, or
// tool_choice none, and no JSON format). rng draws its values and ids.
func Plan(req Request, rng *rand.Rand, fault string, llamaCPP bool) (*Answer, error) {
	var tools []tool
	if len(req.Tools) > 0 {
		if err := json.Unmarshal(req.Tools, &tools); err != nil {
			return nil, fmt.Errorf("tools: %v", err)
		}
	}
	if name, params, ok, err := chosen(tools, req.ToolChoice); err != nil || ok {
		if err != nil || fault == NoToolCall {
			return nil, err
		}
		return &Answer{Calls: []Call{call(name, params, rng, fault, llamaCPP)}, LlamaCPP: llamaCPP}, nil
	}
	f, err := readFormat(req)
	if err != nil || f == nil || f.Type == "text" {
		return nil, err
	}
	var v any = map[string]any{"answer": jsongen.Instance(map[string]any{"type": "string"}, rng)}
	switch {
	case f.Type == "json_object" && fault == FormatViolation:
		v = []any{v}
	case f.Type == "json_object":
	case fault == FormatViolation:
		v = jsongen.Violation(f.schema(), rng)
	default:
		v = jsongen.Instance(f.schema(), rng)
	}
	b, _ := json.Marshal(v)
	return &Answer{Text: Pieces(string(b))}, nil
}

// chosen is the function tool_choice picks (the named one, else the
// first); ok is false when there is none to call.
func chosen(tools []tool, choice json.RawMessage) (name string, params any, ok bool, err error) {
	if len(tools) == 0 {
		return "", nil, false, nil
	}
	var mode string
	var named struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(choice) > 0 && json.Unmarshal(choice, &mode) != nil {
		if err := json.Unmarshal(choice, &named); err != nil {
			return "", nil, false, fmt.Errorf("tool_choice: %v", err)
		}
		mode = "function"
	}
	if mode == "none" {
		return "", nil, false, nil
	}
	want := cmp.Or(named.Function.Name, named.Name) // chat's, or the Responses API's flat name
	for _, t := range tools {
		n, p := t.Name, t.Parameters
		if t.Function != nil {
			n, p = t.Function.Name, t.Function.Parameters
		}
		if want == "" || n == want {
			return n, p, true, nil
		}
	}
	return "", nil, false, fmt.Errorf("tool_choice names %q, which is no function of tools", want)
}

func call(name string, params any, rng *rand.Rand, fault string, llamaCPP bool) Call {
	if params == nil {
		params = map[string]any{"type": "object"}
	}
	v := jsongen.Instance(params, rng)
	switch fault {
	case ArgumentsInvalid:
		v = jsongen.Violation(params, rng)
	case UndefinedFunction:
		name += "_v2"
	}
	b, _ := json.Marshal(v)
	args := string(b)
	if fault == ArgumentsNotJSON {
		args = args[:len(args)-1]
	}
	id := fmt.Sprintf("chatcmpl-tool-%016x", rng.Uint64())
	if llamaCPP {
		id = fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())
	}
	return Call{ID: id, Name: name, Pieces: Pieces(args)}
}

func readFormat(req Request) (*format, error) {
	raw, what := req.ResponseFormat, "response_format"
	if len(req.Text) > 0 {
		var text struct {
			Format json.RawMessage `json:"format"`
		}
		if err := json.Unmarshal(req.Text, &text); err != nil {
			return nil, fmt.Errorf("text: %v", err)
		}
		raw, what = text.Format, "text.format"
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var f format
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return &f, nil
}

func (f *format) schema() any {
	if f.JSONSchema != nil {
		return f.JSONSchema.Schema
	}
	return f.Schema
}

// Pieces splits text as a tokenizer might: runs of letters or digits with
// the space before them, and each other character alone.
func Pieces(text string) []string {
	var out []string
	start := 0
	word := func(r byte) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80
	}
	for i := 1; i <= len(text); i++ {
		prev := text[i-1]
		if i < len(text) && (!utf8.RuneStart(text[i]) || word(text[i]) && (word(prev) || prev == ' ') && i-start < 8) {
			continue
		}
		out = append(out, text[start:i])
		start = i
	}
	return out
}

// Tokens is the answer's length in tokens: each piece one, and a call's
// name one.
func (a *Answer) Tokens() int {
	n := len(a.Text)
	for _, c := range a.Calls {
		n += 1 + len(c.Pieces)
	}
	return n
}

// Finish is the finish_reason of an answer given whole.
func (a *Answer) Finish() string {
	if len(a.Calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// Words are the answer's tokens as text: the pieces, a call's name token empty.
func (a *Answer) Words() []string {
	if a.Text != nil {
		return a.Text
	}
	var out []string
	for _, c := range a.Calls {
		out = append(out, "")
		out = append(out, c.Pieces...)
	}
	return out
}

// span is the part of call k that tokens [from, to) carry: its name token
// or not, and its argument pieces joined.
func (a *Answer) span(from, to int) (parts []part) {
	at := 0
	for k, c := range a.Calls {
		first, end := at, at+1+len(c.Pieces)
		at = end
		lo, hi := max(from, first), min(to, end)
		if lo >= hi {
			continue
		}
		p := part{index: k, call: c, named: lo == first}
		p.args = strings.Join(c.Pieces[max(lo-first-1, 0):hi-first-1], "")
		parts = append(parts, p)
	}
	return parts
}

type part struct {
	index int
	call  Call
	named bool
	args  string
}

// ChatDelta is the chat delta of tokens [from, to) of a calls answer.
func (a *Answer) ChatDelta(from, to int) map[string]any {
	var calls []map[string]any
	for _, p := range a.span(from, to) {
		fn := map[string]any{}
		c := map[string]any{"index": p.index, "function": fn}
		if p.named {
			c["id"], c["type"], fn["name"] = p.call.ID, "function", p.call.Name
		}
		if p.args != "" || (p.named && a.LlamaCPP) {
			fn["arguments"] = p.args
		}
		calls = append(calls, c)
	}
	return map[string]any{"tool_calls": calls}
}

// CallWriter writes an API's typed events of function calls (the Responses
// API's function_call items, the Messages API's tool_use blocks).
type CallWriter interface {
	Call(callID, name string) string
	Arguments(delta string) string
}

// Events is the typed events of tokens [from, to) of a calls answer: a
// call's name token opens its item or block.
func (a *Answer) Events(s CallWriter, from, to int) string {
	var out strings.Builder
	for _, p := range a.span(from, to) {
		if p.named {
			out.WriteString(s.Call(p.call.ID, p.call.Name))
		}
		if p.args != "" {
			out.WriteString(s.Arguments(p.args))
		}
	}
	return out.String()
}

// Message is a calls answer's message, unstreamed: its tool_calls whole.
func (a *Answer) Message() map[string]any {
	calls := make([]map[string]any, len(a.Calls))
	for i, c := range a.Calls {
		calls[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": strings.Join(c.Pieces, "")}}
	}
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
}
