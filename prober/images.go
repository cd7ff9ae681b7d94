package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// imageSentinels stand for n images when the body is marshalled; each is
// then replaced by its image's bytes, sent from where they are.
func imageSentinels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("\x00llmprobe:image:%d\x00", i)
	}
	return out
}

// imageStrings are the images as strings, for a body marshalled whole.
func imageStrings(images [][]byte) []string {
	out := make([]string, len(images))
	for i, b := range images {
		out[i] = string(b)
	}
	return out
}

// withImages makes the new chat message's content its text, then an
// image_url part for each of urls, as OpenAI's vision requests send them.
func withImages(body map[string]any, urls []string) {
	msgs, ok := body["messages"].([]map[string]string)
	if !ok || len(urls) == 0 || len(msgs) == 0 {
		return
	}
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = m
	}
	last := msgs[len(msgs)-1]
	parts := make([]any, 0, 1+len(urls))
	parts = append(parts, map[string]string{"type": "text", "text": last["content"]})
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}})
	}
	out[len(out)-1] = map[string]any{"role": last["role"], "content": parts}
	body["messages"] = out
}

// spliceImages cuts the marshalled body's rest b at each image's sentinel,
// in order, and puts the image there. ok is false when a sentinel is not
// there exactly once (extra_body holds one too) or an image would need
// escaping (a data URI never does).
func spliceImages(b []byte, images [][]byte) (pieces [][]byte, ok bool) {
	pieces = make([][]byte, 0, 2*len(images)+1)
	for i, s := range imageSentinels(len(images)) {
		quoted, _ := json.Marshal(s)
		escaped := quoted[1 : len(quoted)-1]
		at := bytes.Index(b, escaped)
		if at < 0 || bytes.Count(b, escaped) != 1 || !plainJSON(images[i]) {
			return nil, false
		}
		pieces = append(pieces, b[:at], images[i])
		b = b[at+len(escaped):]
	}
	return append(pieces, b), true
}

// plainJSON reports whether b is written in a JSON string as it is.
func plainJSON(b []byte) bool {
	for _, c := range b {
		if needsEscape(c) {
			return false
		}
	}
	return true
}
