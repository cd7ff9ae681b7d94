// Package content reads a request's prompt as the sim's engine counts it:
// the texts of a string, a list of strings or of content parts, and the
// tokens of its images, whose headers it decodes.
package content

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // the formats vision engines take, decoded by their headers
	_ "image/jpeg"
	_ "image/png"
	"strings"
)

// Words counts the whitespace-separated words of raw's texts.
func Words(raw json.RawMessage) int {
	n := 0
	EachText(raw, func(text string) { n += len(strings.Fields(text)) })
	return n
}

// EachText calls fn with each text of a JSON string, list of strings, or
// list of content parts, in order.
func EachText(raw json.RawMessage, fn func(string)) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		fn(s)
		return
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return
	}
	for _, item := range list {
		var part struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(item, &part) == nil && part.Text != "" {
			fn(part.Text)
			continue
		}
		EachText(item, fn)
	}
}

// DefaultPatch is the side of the square of pixels one image token stands
// for: Qwen2-VL's 14-pixel patches, merged 2×2.
const DefaultPatch = 28

// ImageTokens is the prefill tokens of the images among raw's content
// parts: one per patch×patch square, each side rounded to the nearest
// patch and at least one, as Qwen2-VL resizes (its pixel bounds aside). Only data URIs are served; an image whose header does not
// decode is an error, the 400 vLLM answers.
func ImageTokens(raw json.RawMessage, patch int) (int, error) {
	var parts []struct {
		Type     string          `json:"type"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return 0, nil // a string, or no parts: no image
	}
	n := 0
	for i, p := range parts {
		if p.Type != "image_url" && p.Type != "input_image" {
			continue
		}
		w, h, err := imageSize(p.ImageURL)
		if err != nil {
			return 0, fmt.Errorf("failed to load image (content part %d): %v", i, err)
		}
		n += max((w+patch/2)/patch, 1) * max((h+patch/2)/patch, 1)
	}
	return n, nil
}

// imageSize reads an image's dimensions from its data URI: chat's
// {"url": …} or the Responses API's bare string.
func imageSize(raw json.RawMessage) (w, h int, err error) {
	var url string
	if json.Unmarshal(raw, &url) != nil {
		var obj struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return 0, 0, fmt.Errorf("image_url is neither a URL nor {\"url\": …}")
		}
		url = obj.URL
	}
	payload, ok := strings.CutPrefix(url, "data:")
	_, data, isBase64 := strings.Cut(payload, ";base64,")
	if !ok || !isBase64 {
		return 0, 0, fmt.Errorf("only base64 data URIs are served by the simulated engine, not %.32q", url)
	}
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot identify image file: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, fmt.Errorf("image of %dx%d pixels", cfg.Width, cfg.Height)
	}
	return cfg.Width, cfg.Height, nil
}
