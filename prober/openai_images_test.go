package prober

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
)

// A chat body with images is, byte for byte, json.Marshal of the request
// with the images' data URIs in image_url parts after the text part of the
// new user message, long (images sent from where they are, not copied) or
// short (one buffer), with a conversation's history, and with an
// extra_body that holds an image's sentinel (then marshalled whole).
func TestBodyWithImages(t *testing.T) {
	uris := prompt.MakeImage(prompt.ImageSeed("ref: a b c d"), 2, 20, 20)
	for name, r := range map[string]BodyRequest{
		"long":     {Text: "ref: a b c d", Tail: strings.Repeat(" lorem", 20_000)},
		"short":    {Text: "ref: a b c d", Tail: " what is in it?"},
		"history":  {Text: "and now?", History: []prompt.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}},
		"sentinel": {Text: "x", Extra: map[string]any{"zz": imageSentinels(1)[0]}},
	} {
		r.API, r.Model, r.MaxTokens, r.Images = config.APIChat, "m", 4, uris
		b, err := NewBody(r)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(b.Open())
		fields := r.fields(r.Text + r.Tail)
		withImages(fields, imageStrings(uris))
		want, _ := json.Marshal(fields)
		if !bytes.Equal(got, want) || b.Size() != int64(len(want)) {
			t.Errorf("%s: wrote %d bytes (size %d)\n%.300s\nwant %d\n%.300s", name, len(got), b.Size(), got, len(want), want)
		}
		var decoded struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(got, &decoded); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := decoded.Messages[len(decoded.Messages)-1]
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(last.Content, &parts); err != nil || len(parts) != 3 || last.Role != "user" {
			t.Fatalf("%s: last message %s %s: %v", name, last.Role, last.Content, err)
		}
		if parts[0].Type != "text" || parts[0].Text != r.Text+r.Tail || parts[1].Type != "image_url" || parts[1].ImageURL.URL != string(uris[0]) || parts[2].ImageURL.URL != string(uris[1]) {
			t.Errorf("%s: parts %.200v", name, parts)
		}
		if name == "long" && (len(b.closing) != 5 || &b.closing[1][0] != &uris[0][0] || &b.closing[3][0] != &uris[1][0]) {
			t.Errorf("long: the images were copied into the body (%d pieces after the prompt)", len(b.closing))
		}
	}
}

// An unstreamed request says stream: false and sends no stream_options,
// not even extra_body's, which engines refuse without a stream.
func TestBodyUnstreamed(t *testing.T) {
	for _, api := range []config.API{config.APIChat, config.APICompletions, config.APIResponses} {
		r := BodyRequest{API: api, Model: "m", MaxTokens: 4, Text: "hi", Unstreamed: true,
			Extra: map[string]any{"stream_options": map[string]any{"continuous_usage_stats": true}, "ignore_eos": true}}
		b, err := NewBody(r)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.NewDecoder(b.Open()).Decode(&decoded); err != nil {
			t.Fatal(err)
		}
		if decoded["stream"] != false || decoded["ignore_eos"] != true {
			t.Errorf("%s: %v", api, decoded)
		}
		if _, ok := decoded["stream_options"]; ok {
			t.Errorf("%s: stream_options sent without a stream: %v", api, decoded)
		}
	}
}
