// An answer's function calls assembled from their streamed deltas (chat's
// tool_calls by index, the Responses API's function_call items and argument
// deltas), holding at most a bounded number of them.

package prober

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/quality"
)

// maxNameBytes bounds one call's name.
const maxNameBytes = 128

// toolCallAssembler builds an answer's calls from their deltas, in the order each
// call first appeared. Its zero value is not ready: use New.
type toolCallAssembler struct {
	calls    []quality.ToolCall
	keys     []int // each call's index (chat) or output_index (Responses)
	maxCalls int
	bytes    int
	// Dropped counts calls past maxCalls, Unread deltas that were no JSON object.
	Dropped, Unread int
}

// newToolCalls is an Assembler that keeps at most maxCalls calls.
func newToolCalls(maxCalls int) *toolCallAssembler { return &toolCallAssembler{maxCalls: maxCalls} }

// delta is every shape Add reads, decoded once: a chat tool_calls element
// or a Responses API event.
type delta struct {
	Type     string `json:"type"`
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function *struct {
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
	OutputIndex int `json:"output_index"`
	Item        *struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	Delta     string  `json:"delta"`
	Arguments *string `json:"arguments"`
}

// Add reads deltas: chat tool_calls elements, whose function's name
// arrives first and its arguments in pieces, or Responses API events (a
// function_call item added or done, its arguments' delta or done). Whole
// arguments (an event's done) replace the pieces read before. A delta
// that is no JSON object counts in Unread. carried reports whether any
// delta carried a name or a piece of arguments: an empty one is no token.
func (a *toolCallAssembler) Add(raws ...json.RawMessage) (carried bool) {
	for _, raw := range raws {
		var d delta
		if err := json.Unmarshal(raw, &d); err != nil {
			a.Unread++
			continue
		}
		a.add(&d)
		carried = carried || d.Delta != "" || d.Function != nil && (d.Function.Name != "" || d.Function.Arguments != nil && *d.Function.Arguments != "")
	}
	return carried
}

func (a *toolCallAssembler) add(d *delta) {
	switch d.Type {
	case "response.output_item.added", "response.output_item.done":
		if it := d.Item; it != nil && it.Type == "function_call" {
			if c := a.call(d.OutputIndex); c != nil {
				a.name(c, it.Name)
				if it.Arguments != "" {
					a.set(c, it.Arguments)
				}
			}
		}
	case "response.function_call_arguments.delta":
		if c := a.call(d.OutputIndex); c != nil {
			a.append(c, d.Delta)
		}
	case "response.function_call_arguments.done":
		if c := a.call(d.OutputIndex); c != nil && d.Arguments != nil {
			a.set(c, *d.Arguments)
		}
	default: // a chat tool_calls element
		named := d.Function != nil && d.Function.Name != ""
		var key int
		switch {
		case d.Index != nil:
			key = *d.Index
		case len(a.keys) > 0 && !named && d.ID == "":
			key = a.keys[len(a.keys)-1] // no index: the call before goes on
		default:
			key = -1 - len(a.keys) // no index: a new call, under a key no index has
		}
		c := a.call(key)
		if c == nil || d.Function == nil {
			return
		}
		a.name(c, d.Function.Name)
		if d.Function.Arguments != nil {
			a.append(c, *d.Function.Arguments)
		}
	}
}

// call is the call of key, a new one when there is none yet: nil past
// maxCalls.
func (a *toolCallAssembler) call(key int) *quality.ToolCall {
	for i, k := range a.keys {
		if k == key {
			return &a.calls[i]
		}
	}
	if len(a.calls) >= a.maxCalls {
		a.Dropped++
		return nil
	}
	a.keys = append(a.keys, key)
	a.calls = append(a.calls, quality.ToolCall{})
	return &a.calls[len(a.calls)-1]
}

// name sets c's name from a delta: the first one, a repeat of it ignored,
// anything else appended (a name streamed in pieces).
func (a *toolCallAssembler) name(c *quality.ToolCall, name string) {
	if name == "" || name == c.Name {
		return
	}
	c.Name = cut(c.Name+name, maxNameBytes)
}

func (a *toolCallAssembler) append(c *quality.ToolCall, s string) {
	room := quality.MaxArgumentBytes - a.bytes
	if len(s) > room {
		s, c.Cut = cut(s, room), true
	}
	c.Arguments += s
	a.bytes += len(s)
}

func (a *toolCallAssembler) set(c *quality.ToolCall, s string) {
	a.bytes -= len(c.Arguments)
	c.Arguments, c.Cut = "", false
	a.append(c, s)
}

// Calls returns the calls assembled so far.
func (a *toolCallAssembler) Calls() []quality.ToolCall { return a.calls }

// cut is s in at most n bytes, not splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
