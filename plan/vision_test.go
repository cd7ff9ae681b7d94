package plan

import (
	"fmt"
	"testing"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
)

// footprints are the footprints of a burst of scenario (YAML) at
// max_concurrency 8, and what one more request in flight adds to it.
func footprints(t *testing.T, scenario string) (at8, perFlight int64) {
	t.Helper()
	p, err := Parse(fmt.Appendf(nil, `
targets: [{name: a, url: "http://x:1"}]
scenarios: [%s]
bursts:
  - {name: b, target: a, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 100, max_concurrency: 8}
  - {name: c, target: a, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 100, max_concurrency: 9}
`, scenario), "vision.yml")
	if err != nil {
		t.Fatal(err)
	}
	at8 = p.Bursts[0].Footprint.Bytes
	return at8, p.Bursts[1].Footprint.Bytes - at8
}

// A request in flight is charged its images, at least what they add to a
// real body of four 640×480 images, and the burst once the images being
// made (images.MaxEncoders at most); an unstreamed answer in flight three
// times its bound.
func TestImagesAndUnstreamedFootprint(t *testing.T) {
	plain, plainFlight := footprints(t, `{name: s, prompt_tokens: 64, output_tokens: 256}`)
	vision, visionFlight := footprints(t, `{name: s, prompt_tokens: 64, output_tokens: 256, images: {count: 4, width: 640, height: 480}}`)
	r := prober.BodyRequest{Model: "m", MaxTokens: 256, Text: "ref: a b c d"}
	without, err := prober.NewBody(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Images = prompt.MakeImage(1, 4, 640, 480)
	with, err := prober.NewBody(r)
	if err != nil {
		t.Fatal(err)
	}
	perImages := visionFlight - plainFlight
	if perImages < with.Size()-without.Size() || perImages != 4*prompt.ImageSize(640, 480) {
		t.Errorf("four images cost %d bytes in flight; they add %d to the body", perImages, with.Size()-without.Size())
	}
	if d := vision - plain; d != 8*perImages+prompt.ImageEncodeBytes(640, 480) {
		t.Errorf("eight in flight with images cost %d bytes more, want 8 × %d and the encoders' %d", d, perImages, prompt.ImageEncodeBytes(640, 480))
	}
	_, wholeFlight := footprints(t, `{name: s, stream: false, prompt_tokens: 64, output_tokens: 256}`)
	if wholeFlight-plainFlight != 3*prober.WholeLimit(256) {
		t.Errorf("an unstreamed answer costs %d bytes in flight, want %d", wholeFlight-plainFlight, 3*prober.WholeLimit(256))
	}
}
