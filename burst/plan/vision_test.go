package plan

import (
	"fmt"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober/openai"
	"github.com/llmprobe/llmprobe/prompt/images"
)

// footprintPerFlight is what one more request in flight adds to the
// footprint of a burst of scenario (YAML) at max_concurrency 8.
func footprintPerFlight(t *testing.T, scenario string) int64 {
	t.Helper()
	cfg, err := config.Parse(fmt.Appendf(nil, `
targets: [{name: a, url: "http://x:1"}]
scenarios: [%s]
bursts:
  - {name: b, target: a, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 100, max_concurrency: 8}
  - {name: c, target: a, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 100, max_concurrency: 9}
`, scenario), "vision.yml")
	if err != nil {
		t.Fatal(err)
	}
	return BurstFootprint(cfg, cfg.Bursts[1]).Bytes - BurstFootprint(cfg, cfg.Bursts[0]).Bytes
}

// A request in flight is charged its images: at least the body they make,
// measured on a real body of four 640×480 images, and the pixels and
// encoder buffers of the one being made; an unstreamed answer three times
// its bound.
func TestImagesAndUnstreamedFootprint(t *testing.T) {
	plain := footprintPerFlight(t, `{name: s, prompt_tokens: 64, output_tokens: 256}`)
	vision := footprintPerFlight(t, `{name: s, prompt_tokens: 64, output_tokens: 256, images: {count: 4, width: 640, height: 480}}`)
	body, err := openai.NewBody(openai.Request{Model: "m", MaxTokens: 256, Text: "ref: a b c d", Images: images.Make(1, 4, 640, 480)})
	if err != nil {
		t.Fatal(err)
	}
	if vision-plain < body.Size()+640*480 || vision-plain != 4*images.Size(640, 480)+640*480+pngEncoderBytes {
		t.Errorf("four images cost %d bytes in flight; their body is %d", vision-plain, body.Size())
	}
	whole := footprintPerFlight(t, `{name: s, stream: false, prompt_tokens: 64, output_tokens: 256}`)
	if whole-plain != 3*openai.WholeLimit(256) {
		t.Errorf("an unstreamed answer costs %d bytes in flight, want %d", whole-plain, 3*openai.WholeLimit(256))
	}
}
