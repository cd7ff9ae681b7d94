package prober

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/quality"
)

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// Each engine's way of splitting a call assembles to the same calls.
func TestAssemble(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deltas []string
		want   []quality.ToolCall
	}{
		{"vLLM: name alone, then arguments in pieces, then an empty piece", []string{
			`{"id":"chatcmpl-tool-b3b3","type":"function","index":0,"function":{"name":"searchGoogle"}}`,
			`{"index":0,"function":{"arguments":"{\"query\": \""}}`,
			`{"index":0,"function":{"arguments":"latest"}}`,
			`{"index":0,"function":{"arguments":" news\"}"}}`,
			`{"index":0,"function":{"arguments":""}}`,
		}, []quality.ToolCall{{Name: "searchGoogle", Arguments: `{"query": "latest news"}`}}},
		{"llama.cpp: name with empty arguments, then pieces", []string{
			`{"index":0,"id":"Xb2kW","type":"function","function":{"name":"get_weather","arguments":""}}`,
			`{"index":0,"function":{"arguments":"{\""}}`,
			`{"index":0,"function":{"arguments":"city\":\"Paris\"}"}}`,
		}, []quality.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{"two calls interleaved by index; a repeated name and an emptied id are no change", []string{
			`{"index":0,"id":"a","type":"function","function":{"name":"add","arguments":""}}`,
			`{"index":1,"id":"b","type":"function","function":{"name":"multiply","arguments":"{\"a\":"}}`,
			`{"index":0,"id":"","function":{"name":"add","arguments":"{\"a\":3}"}}`,
			`{"index":1,"function":{"name":"","arguments":"8}"}}`,
		}, []quality.ToolCall{{Name: "add", Arguments: `{"a":3}`}, {Name: "multiply", Arguments: `{"a":8}`}}},
		{"no index: a name opens a call, pieces go on with the last", []string{
			`{"id":"1","function":{"name":"f","arguments":"{"}}`,
			`{"function":{"arguments":"}"}}`,
			`{"id":"2","function":{"name":"g","arguments":"[]"}}`,
		}, []quality.ToolCall{{Name: "f", Arguments: `{}`}, {Name: "g", Arguments: `[]`}}},
		{"Responses API: item added, argument deltas, done replaces, item done", []string{
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"{\"city\":"}`,
			`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"\"Par"}`,
			`{"type":"response.function_call_arguments.done","output_index":1,"item_id":"fc_1","arguments":"{\"city\":\"Paris\"}"}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}`,
		}, []quality.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
	} {
		a := newToolCalls(8)
		a.Add(raws(tc.deltas...)...)
		if got := a.Calls(); !reflect.DeepEqual(got, tc.want) || a.Dropped != 0 || a.Unread != 0 {
			t.Errorf("%s: %+v (dropped %d, unread %d), want %+v", tc.name, got, a.Dropped, a.Unread, tc.want)
		}
	}
}

// What one answer makes the prober hold is bounded: calls past the cap are
// counted, not kept; arguments past quality.MaxArgumentBytes (all calls together)
// and a name past its bound are cut; a delta that is no object is counted.
func TestAssembleBounds(t *testing.T) {
	a := newToolCalls(2)
	for i := range 3 {
		a.Add(json.RawMessage(`{"index":` + string(rune('0'+i)) + `,"function":{"name":"f","arguments":"{}"}}`))
	}
	if len(a.Calls()) != 2 || a.Dropped != 1 {
		t.Errorf("%d calls, %d dropped; want 2 and 1", len(a.Calls()), a.Dropped)
	}

	a = newToolCalls(2)
	piece, _ := json.Marshal(strings.Repeat("é", 1000)) // 2,000 bytes
	for range quality.MaxArgumentBytes/2000 + 2 {
		a.Add(json.RawMessage(`{"index":0,"function":{"arguments":` + string(piece) + `}}`))
	}
	a.Add(json.RawMessage(`{"index":1,"function":{"name":"`+strings.Repeat("n", 500)+`","arguments":"{}"}}`), json.RawMessage(`7`))
	c := a.Calls()
	if len(c[0].Arguments) > quality.MaxArgumentBytes || len(c[0].Arguments) < quality.MaxArgumentBytes-1 || !c[0].Cut || !strings.HasSuffix(c[0].Arguments, "é") {
		t.Errorf("first call: %d bytes, cut %v, ends %q", len(c[0].Arguments), c[0].Cut, c[0].Arguments[len(c[0].Arguments)-4:])
	}
	if c[1].Arguments != "" || !c[1].Cut || len(c[1].Name) != maxNameBytes || a.Unread != 1 {
		t.Errorf("second call %q (%d-byte name), cut %v; unread %d", c[1].Arguments, len(c[1].Name), c[1].Cut, a.Unread)
	}
}
