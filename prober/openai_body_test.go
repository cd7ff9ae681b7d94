package prober

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
)

// The body in pieces is, byte for byte, what json.Marshal of the same
// request with the whole prompt writes, and Size is its length: for both
// APIs, with and without a Tail, long and short (one buffer), with text
// that needs escaping, extra_body, stream_options and sampling, with a
// conversation's history, and with an extra_body that holds the sentinel
// (then marshalled whole). Open reads it again each time.
func TestBodyIsTheMarshalledRequest(t *testing.T) {
	temp, topP, seed := 0.5, 0.9, int64(42)
	sampling := config.Sampling{Temperature: &temp, TopP: &topP, Seed: &seed}
	prompts := map[string]BodyRequest{
		"tail":      {Text: "ref: shared prefix\n", Tail: strings.Repeat(" lorem", 20_000)},
		"no tail":   {Text: "ref: a b c d\nSay OK."},
		"escaped":   {Text: "ref:\n\"quoted\" <b>&</b> \\ é \u2028 \xff\t", Tail: " then plain words"},
		"tail only": {Tail: " x <y>"},
		"history":   {Text: "and now?", History: []prompt.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello <there>"}}},
	}
	extras := map[string]map[string]any{
		"none":     nil,
		"extra":    {"ignore_eos": true, "stream_options": map[string]any{"continuous_usage_stats": true}, "zz_last": []any{"a", 1.5}},
		"sentinel": {"note": promptSentinel},
	}
	for _, api := range []config.API{config.APIChat, config.APICompletions} {
		for extraName, extra := range extras {
			for name, r := range prompts {
				r.API, r.Model, r.MaxTokens, r.Sampling, r.Extra = api, "m", 6, sampling, extra
				b, err := NewBody(r)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(b.Open())
				again, _ := io.ReadAll(b.Open())
				want, err := json.Marshal(r.fields(r.Text + r.Tail))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) || !bytes.Equal(again, want) {
					t.Errorf("%s/%s/%s: wrote\n%.300s\nwant\n%.300s", api, extraName, name, got, want)
				}
				if b.Size() != int64(len(want)) {
					t.Errorf("%s/%s/%s: size %d, want %d", api, extraName, name, b.Size(), len(want))
				}
				var decoded map[string]any
				if err := json.Unmarshal(got, &decoded); err != nil {
					t.Fatalf("%s/%s/%s: %v", api, extraName, name, err)
				}
				if extraName == "extra" && !reflect.DeepEqual(decoded["stream_options"], map[string]any{"include_usage": true, "continuous_usage_stats": true}) {
					t.Errorf("%s/%s/%s: stream_options %v", api, extraName, name, decoded["stream_options"])
				}
			}
		}
	}
}

// A long body is sent from where its Tail is; a short one is one buffer,
// written with the headers.
func TestBodyInlineOnlyWhenShort(t *testing.T) {
	long, err := NewBody(BodyRequest{Model: "m", Text: "a", Tail: strings.Repeat(" w", config.MaxInlineBody)})
	if err != nil {
		t.Fatal(err)
	}
	short, err := NewBody(BodyRequest{Model: "m", Text: "a", Tail: " w w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := long.Open().(*bytes.Reader); ok || long.tail.plain == "" {
		t.Error("a long body was copied into one buffer")
	}
	if _, ok := short.Open().(*bytes.Reader); !ok {
		t.Error("a short body is not one buffer")
	}
}
