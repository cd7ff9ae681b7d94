package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// post sends body to path and decodes the JSON answer.
func post(t *testing.T, url, path, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %s is no JSON: %v", path, raw, err)
	}
	return resp.StatusCode, out
}

// Unstreamed answers of the three APIs, in their engines' shapes: chat's
// message with the leading tokens as reasoning_content, completions' text,
// the Responses API's response object with a reasoning item then the
// message; each with its usage, or none when usage is placed nowhere.
func TestUnstreamedAnswers(t *testing.T) {
	_, srv := start(t, func(c *Config) { c.Faults.ReasoningTokens = 2; c.Answer = "a b c d e" })
	chat := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"one two three"}]}`
	status, a := post(t, srv.URL, "/v1/chat/completions", chat)
	msg := a["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	usage := a["usage"].(map[string]any)
	if status != 200 || a["object"] != "chat.completion" || msg["reasoning_content"] != "a b" || msg["content"] != " c d e" ||
		usage["completion_tokens"] != 5.0 || usage["prompt_tokens"] != 7.0 || usage["completion_tokens_details"].(map[string]any)["reasoning_tokens"] != 2.0 {
		t.Errorf("chat: %d %v", status, a)
	}
	status, a = post(t, srv.URL, "/v1/completions", `{"model":"m","max_tokens":3,"prompt":"one two"}`)
	if c := a["choices"].([]any)[0].(map[string]any); status != 200 || c["text"] != "a b c" || a["usage"].(map[string]any)["completion_tokens"] != 3.0 {
		t.Errorf("completions: %d %v", status, a)
	}
	status, a = post(t, srv.URL, "/v1/responses", `{"model":"m","max_output_tokens":5,"input":"one two three"}`)
	out := a["output"].([]any)
	if status != 200 || a["status"] != "completed" || len(out) != 2 || out[0].(map[string]any)["type"] != "reasoning" || out[1].(map[string]any)["type"] != "message" {
		t.Fatalf("responses: %d %v", status, a)
	}
	part := out[1].(map[string]any)["content"].([]any)[0].(map[string]any)
	u := a["usage"].(map[string]any)
	if part["type"] != "output_text" || part["text"] != " c d e" || u["input_tokens"] != 7.0 || u["output_tokens"] != 5.0 || u["output_tokens_details"].(map[string]any)["reasoning_tokens"] != 2.0 {
		t.Errorf("responses: %v", a)
	}

	_, none := start(t, func(c *Config) { c.Faults.UsagePlacement = UsageNone })
	if _, a := post(t, none.URL, "/v1/chat/completions", chat); a["usage"] != nil {
		t.Errorf("usage placed nowhere, yet the answer has %v", a["usage"])
	}
}

// pngURI is a data URI of a w×h PNG.
func pngURI(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// visionBody is a chat request whose user message has a text part and an
// image_url part for each data URI.
func visionBody(stream bool, uris ...string) string {
	parts := []any{map[string]any{"type": "text", "text": "one two three"}}
	for _, u := range uris {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": u}})
	}
	b, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 2, "stream": stream, "messages": []any{map[string]any{"role": "user", "content": parts}}})
	return string(b)
}

// Each image costs one prompt token per 28×28 square, each side rounded
// to the nearest and at least one: usage counts them (a 56×84 image is 2×3
// = 6 tokens, 70×41 is 3×1, 29×1 is 1), and
// TTFT pays their prefill: with 4 ms a token, 200 tokens of images add at
// least 800 ms, which the engine's timer cannot shorten.
func TestImagesChargePrefill(t *testing.T) {
	_, srv := start(t, func(c *Config) {
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = time.Millisecond, 4*time.Millisecond, time.Millisecond, 0
		c.Faults.RoleOnlyFirstChunk = false // the first event is the first token
	})
	text := 4 + 3 // the chat template's tokens and three words
	for uris, want := range map[string]int{"": text, "56x84": text + 6, "56x84 29x1": text + 7, "70x41": text + 3} {
		var list []string
		for _, d := range strings.Fields(uris) {
			w, h, _ := strings.Cut(d, "x")
			wi, _ := strconv.Atoi(w)
			hi, _ := strconv.Atoi(h)
			list = append(list, pngURI(t, wi, hi))
		}
		status, a := post(t, srv.URL, "/v1/chat/completions", visionBody(false, list...))
		if got := a["usage"].(map[string]any)["prompt_tokens"]; status != 200 || got != float64(want) {
			t.Errorf("images %q: %d, prompt_tokens %v, want %d", uris, status, got, want)
		}
	}
	big := pngURI(t, 280, 560) // 10 × 20 = 200 tokens
	timed := func(body string) time.Duration {
		s := stream(t, srv.URL, "/v1/chat/completions", body)
		if s.status != 200 || len(s.times) == 0 {
			t.Fatalf("%d, %d events", s.status, len(s.times))
		}
		return s.times[0]
	}
	plain, withImage := timed(visionBody(true)), timed(visionBody(true, big))
	if withImage < 800*time.Millisecond || withImage-plain < 700*time.Millisecond {
		t.Errorf("first event after %s with a 200-token image, %s without; want at least 800 ms more", withImage, plain)
	}
}

// An image the engine cannot decode is refused with 400 and why, as vLLM
// does; so is an image that is no data URI. The Responses API's
// input_image parts count as chat's image_url parts do.
func TestImagesRefusedOrCounted(t *testing.T) {
	_, srv := start(t, nil)
	for name, uri := range map[string]string{
		"garbage":     "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not an image at all")),
		"not base64":  "data:image/png;base64,%%%",
		"a URL":       "https://example.com/cat.png",
		"no data URI": "data:image/png,rawbytes",
	} {
		status, a := post(t, srv.URL, "/v1/chat/completions", visionBody(false, uri))
		msg, _ := a["error"].(map[string]any)["message"].(string)
		if status != 400 || !strings.Contains(msg, "failed to load image (content part 1)") {
			t.Errorf("%s: %d %q", name, status, msg)
		}
	}
	input, _ := json.Marshal([]any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "one two three"},
		map[string]any{"type": "input_image", "image_url": pngURI(t, 28, 28)},
	}}})
	status, a := post(t, srv.URL, "/v1/responses", `{"model":"m","max_output_tokens":2,"input":`+string(input)+`}`)
	if u, _ := a["usage"].(map[string]any); status != 200 || u["input_tokens"] != 8.0 {
		t.Errorf("responses with an input_image: %d %v, want 4 + 3 + 1 input tokens", status, a)
	}
}
