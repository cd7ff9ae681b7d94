package config

import "testing"

// A synthetic prompt's words past its nonce are one body per scenario: a
// 128k-token scenario costs its body once and each request in flight its
// nonce and buffers (and at most a short body's copy), so ten in flight fit the default limit, and one more
// request in flight costs no prompt.
func TestLongPromptFootprint(t *testing.T) {
	cfg, err := Parse([]byte(`
targets: [{name: a, url: "http://x:1"}]
scenarios:
  - {name: long, prompt_tokens: 131072, output_tokens: 256}
  - {name: prefixed, prompt_tokens: 131072, shared_prefix_tokens: 1000, output_tokens: 256}
bursts:
  - {name: b, target: a, scenarios: [{scenario: long}], arrival: {rate: 1}, requests: 100, max_concurrency: 10}
  - {name: c, target: a, scenarios: [{scenario: long}], arrival: {rate: 1}, requests: 100, max_concurrency: 11}
  - {name: p, target: a, scenarios: [{scenario: prefixed}], arrival: {rate: 1}, requests: 100, max_concurrency: 11}
`), "long.yml")
	if err != nil {
		t.Fatal(err)
	}
	ten, eleven, prefixed := cfg.Footprint(cfg.Bursts[0]), cfg.Footprint(cfg.Bursts[1]), cfg.Footprint(cfg.Bursts[2])
	if ten.Bytes > int64(DefaultLimits.MaxBurstMemory) {
		t.Errorf("128k tokens × 10 in flight: %d bytes, past the default limit", ten.Bytes)
	}
	if want := int64(streamBytes + MaxInlineBody + nonceTokens*bytesPerWord); eleven.Bytes-ten.Bytes != want {
		t.Errorf("one more in flight costs %d bytes, want its buffers, a short body and its nonce (%d)", eleven.Bytes-ten.Bytes, want)
	}
	const body = 131072*bytesPerWord + 131072/64*bodyMarkBytes
	if ten.Bytes < body {
		t.Errorf("%d bytes do not hold the scenario's body (%d)", ten.Bytes, body)
	}
	// A shared prefix is the request's own text: copied per request.
	if d := prefixed.Bytes - eleven.Bytes; d != 11*1000*bytesPerWord {
		t.Errorf("a 1000-token shared prefix costs %d bytes more over 11 in flight, want %d", d, 11*1000*bytesPerWord)
	}
}
