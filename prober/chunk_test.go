package prober

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// chunkCases are chunks of every shape decodeChunk meets, and failures.
var chunkCases = []string{
	`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"text":" a","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
	`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":2},"prompt_tokens_details":{"cached_tokens":4}}}`,
	`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"reasoning_tokens":0,"prompt_tokens_details":{"cached_tokens":null},"completion_tokens_details":null}}`,
	`{"choices":null,"usage":null,"error":null,"metrics":null}`,
	`{"choices":[null,{"delta":null},{"delta":{"content":null,"reasoning_content":"r","reasoning":"s","refusal":"no"}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":null}}]}`,
	`{"error":{"message":"boom","code":500}}`,
	`{"choices":[{"delta":{"content":"x"}}],"metrics":{"queue_time":0.1},"timings":{"prompt_ms":3}}`,
	// Keys match case-insensitively, and the last of two wins.
	`{"Choices":[{"Delta":{"CONTENT":"up"}}],"Model":"M"}`,
	`{"choices":[{"text":"first"}],"choices":[{"text":"second"}]}`,
	`{"usage":{"completion_tokens":1},"usage":{"prompt_tokens":2}}`,
	// encoding/json folds keys by Unicode's rules: a Kelvin sign is a k, a long s an s.
	`{"choices":[{"text":"a"}],"usage":{"completion_to\u212aens":7,"prompt_toKens":3}}`,
	`{"choiceſ":[{"text":"long s"}],"modeK":"x"}`,
	// Escapes, and invalid UTF-8 made U+FFFD byte by byte.
	`{"choices":[{"delta":{"content":"\u00e9\n\"q\" \ud83d\ude00"}}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"a\xff\xfeb\"}}]}",
	`{"choices":[{"text":"a\\b\/c\b\f\n\r\t\u0041\u00e9\u20AC\u0000\"q\""}],"id":"\u003c\\"}`,
	`{"choices":[{"delta":{"content":"\ud800 stray"}}]}`, `{"choices":[{"delta":{"content":"\udc00\ud800"}}]}`,
	`{"choices":[{"text":"\x"}]}`, `{"choices":[{"text":"\u12"}]}`, `{"choices":[{"text":"\u12g4"}]}`, `{"id":"\q","choices":[]}`,
	`null`,
	// Failures: not JSON, a tail, wrong types, numbers that are no int.
	``, `{`, `{"choices":[{"delta":`, `{"choices":[]} x`, `[1,2]`, `"text"`,
	`{"choices":{"text":"a"}}`, `{"choices":[{"text":1}]}`, `{"choices":[{"delta":"a"}]}`,
	`{"choices":[{"finish_reason":true}]}`, `{"choices":[{"delta":{"tool_calls":{}}}]}`,
	`{"usage":{"completion_tokens":1.5}}`, `{"usage":{"completion_tokens":"3"}}`, `{"usage":[]}`,
	// Numbers JSON has no place for, where the parser reads one and where it skips one.
	`{"usage":{"completion_tokens":02}}`, `{"model":"a","x":01}`, `{"x":1.}`, `{"x":.5}`, `{"x":+1}`, `{"x":-}`,
	`{"usage":{"completion_tokens":99999999999999999999}}`, `{"usage":{"prompt_tokens_details":{"cached_tokens":"1"}}}`,
}

// decodeChunk reads a chunk as encoding/json reads it into streamChunk:
// the same fields, the same failures. Each case is decoded both ways.
func TestDecodeChunkAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range chunkCases {
		agree(t, []byte(c))
	}
}

// Every chunk of the real engines' transcripts reads the same both ways.
func TestDecodeChunkAgreesOnTranscripts(t *testing.T) {
	chunks := transcriptChunks(t)
	for _, data := range chunks {
		agree(t, data)
	}
	if len(chunks) < 100 {
		t.Fatalf("only %d chunks in the transcripts", len(chunks))
	}
}

// transcriptChunks are the data of every event of the real engines'
// transcripts but [DONE].
func transcriptChunks(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	var chunks [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if data = strings.TrimSpace(data); !ok || data == "[DONE]" {
				continue
			}
			chunks = append(chunks, []byte(data))
		}
	}
	return chunks
}

func agree(t *testing.T, data []byte) {
	t.Helper()
	var want, got streamChunk
	wantErr := json.Unmarshal(data, &want)
	gotErr := decodeChunk(data, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Errorf("%q: encoding/json says %v, decodeChunk %v", data, wantErr, gotErr)
		return
	}
	if wantErr != nil {
		return
	}
	// The model is decodeChunk's own field; raw fields compare compacted.
	got.Model = ""
	for _, c := range [][2]*streamChunk{{&want, &got}} {
		for _, s := range c {
			s.Error, s.Metrics, s.Timings = compact(s.Error), compact(s.Metrics), compact(s.Timings)
			for i := range s.Choices {
				for j, tc := range s.Choices[i].Delta.ToolCalls {
					s.Choices[i].Delta.ToolCalls[j] = compact(tc)
				}
			}
			if len(s.Choices) == 0 {
				s.Choices = nil // nothing tells an empty list from none
			}
		}
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%q:\nencoding/json %+v\ndecodeChunk   %+v", data, want, got)
	}
}

func compact(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
