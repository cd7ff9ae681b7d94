package prober

import (
	"reflect"
	"testing"
)

// Whatever the one-pass scan accepts, the full parser reads the same: on
// every case, every transcript chunk, and each of them with one byte cut
// or changed to one that JSON gives meaning to.
func TestScanChunkAgreesWithTheParser(t *testing.T) {
	var seeds [][]byte
	for i, c := range transcriptChunks(t) {
		if i%4 == 0 { // a quarter of them is every shape, in a tenth of the time under -race
			seeds = append(seeds, c)
		}
	}
	for _, c := range append(commonChunks, chunkCases...) {
		seeds = append(seeds, []byte(c))
	}
	accepted, tried := 0, 0
	for _, seed := range seeds {
		for _, data := range mutations(seed) {
			tried++
			var scanned, parsed streamChunk
			if !scanChunk(data, &scanned) {
				continue
			}
			accepted++
			if err := parseChunk(data, &parsed); err != nil {
				t.Errorf("%q: scanned, but the parser says %v", data, err)
				continue
			}
			if !reflect.DeepEqual(scanned, parsed) {
				t.Errorf("%q:\nscanned %+v\nparsed  %+v", data, scanned, parsed)
			}
			agree(t, data) // and encoding/json reads it the same too
		}
	}
	t.Logf("the scan accepted %d of %d chunks", accepted, tried)
	if accepted < tried/10 {
		t.Fatalf("the scan accepted only %d of %d chunks", accepted, tried)
	}
}

// The model and finish reason outlive their event, so they are copies;
// output deltas may share the chunk's memory.
func TestScanChunkCopiesWhatOutlivesTheEvent(t *testing.T) {
	data := []byte(`{"model":"m1","choices":[{"text":"abc","finish_reason":"stop"}]}`)
	var c streamChunk
	if !scanChunk(data, &c) {
		t.Fatalf("the scan gave up on %s", data)
	}
	if c.Choices[0].Text != "abc" {
		t.Fatalf("text %q, want abc", c.Choices[0].Text)
	}
	for i := range data {
		data[i] = 'x' // the next event, read into the same buffer
	}
	if c.Model != "m1" || c.Choices[0].FinishReason != "stop" {
		t.Errorf("model %q and finish reason %q changed with the buffer", c.Model, c.Choices[0].FinishReason)
	}
}

// mutations are data and, for each byte, data without it and with it
// replaced by each of a few bytes.
func mutations(data []byte) [][]byte {
	out := [][]byte{data}
	for i := range data {
		out = append(out, append(append([]byte{}, data[:i]...), data[i+1:]...))
		for _, b := range []byte("\"\\{}[],:0-.e n1\xffA\t") {
			if b != data[i] {
				m := append([]byte{}, data...)
				m[i] = b
				out = append(out, m)
			}
		}
	}
	return out
}

// commonChunks are the shapes vLLM, SGLang, llama.cpp and Ollama stream
// for each token, and their last chunks.
var commonChunks = []string{
	`{"id":"cmpl-1","object":"text_completion","created":1795351314,"model":"Qwen/Qwen3-0.6B","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"Okay"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[{"index":0,"delta":{"content":"é"},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[],"usage":{"prompt_tokens":12,"total_tokens":76,"completion_tokens":64}}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","system_fingerprint":"b1","choices":[{"index":0,"finish_reason":null,"delta":{"content":" a"}}],"usage":{"completion_tokens":0,"prompt_tokens":0,"total_tokens":0}}`,
	// Escapes: a newline, quotes, and Ollama's HTML-safe escapes.
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[{"index":0,"delta":{"content":"\n\n"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","choices":[{"index":0,"delta":{"content":" \"yes\""},"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795351314,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"\u003cthink\u003e"},"finish_reason":null}]}`,
}

// The common shapes take the one-pass scan, not the full parser.
func TestScanChunkReadsTheCommonShapes(t *testing.T) {
	for _, data := range commonChunks {
		var c streamChunk
		if !scanChunk([]byte(data), &c) {
			t.Errorf("the full parser read %s", data)
		}
	}
}
