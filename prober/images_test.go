package prober

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func imageScenario(count, side int) config.Scenario {
	s := testkit.Scenario()
	s.Images = &config.Images{Count: count, Width: side, Height: side}
	return s
}

// Images cost prefill on the sim, one token per 28×28 square: the usage
// counts them exactly (16 words and 4 template tokens, then 2×2 tokens for
// one 56 px image, 4 × 10×10 for four of 280 px), and TTFT grows by their
// prefill, 2 ms a token, which the sim's timer never shortens.
func TestImagesAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillPerToken = 2 * time.Millisecond })
	target := testkit.Target(srv.URL, config.APIChat)
	small, large := probeOnce(t, target, imageScenario(1, 56)), probeOnce(t, target, imageScenario(4, 280))
	for _, res := range []*Result{small, large} {
		if res.Outcome != OutcomeSuccess {
			t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
		}
	}
	if small.PromptTokensReported != 20+4 || large.PromptTokensReported != 20+400 {
		t.Errorf("prompt tokens %d and %d, want 24 and 420", small.PromptTokensReported, large.PromptTokensReported)
	}
	// 50 ms and 420 tokens of 2 ms: the large request's prefill.
	if large.TTFT < 890*time.Millisecond || large.TTFT-small.TTFT < 700*time.Millisecond {
		t.Errorf("TTFT %s with one small image, %s with four large ones; want at least 890 ms, and 700 ms more", small.TTFT, large.TTFT)
	}
	if !strings.Contains(logOf(large), "4 images of 280x280 px (body ") {
		t.Errorf("the log does not say what was sent:\n%s", logOf(large))
	}
}

// Every request sends other images (no cache can serve them), in image_url
// parts after the text of its user message; the same seed and index send
// the same images again, so a burst repeats.
func TestImagesDifferPerRequest(t *testing.T) {
	target, bodies := recordBodies(t, config.APIChat)
	s := imageScenario(2, 32)
	c := newClient(t, target)
	send := func(b *prompt.Builder, n uint64) {
		p, maxTokens := b.At(n)
		if res := c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()}); res.Outcome != OutcomeSuccess {
			t.Fatalf("%s %s", res.Outcome, res.Error)
		}
	}
	send(prompt.NewBuilder(s, prompt.Source{}, 9), 0)
	send(prompt.NewBuilder(s, prompt.Source{}, 9), 1)
	send(prompt.NewBuilder(s, prompt.Source{}, 9), 0)
	var urls [][]string
	for _, body := range bodies() {
		msgs := body["messages"].([]any)
		parts := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
		if len(parts) != 3 || parts[0].(map[string]any)["type"] != "text" {
			t.Fatalf("content %.200v: want a text part, then two images", parts)
		}
		var u []string
		for _, p := range parts[1:] {
			part := p.(map[string]any)
			url, _ := part["image_url"].(map[string]any)["url"].(string)
			if part["type"] != "image_url" || !strings.HasPrefix(url, "data:image/png;base64,") {
				t.Fatalf("part %.100v is no data URI image", part)
			}
			u = append(u, url)
		}
		urls = append(urls, u)
	}
	if urls[0][0] == urls[0][1] || urls[0][0] == urls[1][0] || urls[0][1] == urls[1][1] {
		t.Error("two images sent are the same")
	}
	if urls[0][0] != urls[2][0] || urls[0][1] != urls[2][1] {
		t.Error("the same seed and index sent other images")
	}
}

// An image the server refuses is an http_error with the server's message.
func TestImageRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"object":"error","message":"At most 1 image(s) may be provided in one prompt.","type":"BadRequestError","code":400}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), imageScenario(2, 64))
	checkFailure(t, res, OutcomeHTTPError, "headers", reasonHTTPStatus, "HTTP 400 Bad Request: At most 1 image(s) may be provided in one prompt.")
}
