package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/lib/wav"
)

// wavClip is a 16 kHz mono 16-bit PCM WAV of length, a 440 Hz tone, with
// comment as its INFO comment ("" for none).
func wavClip(t *testing.T, length time.Duration, comment string) []byte {
	t.Helper()
	const rate = 16000
	samples := make([]int, int(length.Seconds()*rate))
	for i := range samples {
		samples[i] = int(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
	}
	b, err := wav.Encode(samples, rate, comment)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// transcribe posts a transcription form: file (none when nil) and fields.
func transcribe(t *testing.T, url string, file []byte, fields map[string]string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		fw, err := mw.CreateFormFile("file", "clip.wav")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/v1/audio/transcriptions", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a streamed answer's data payloads.
func events(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// transcriptionChunkView is a transcription chunk as a client reads it;
// Raw keeps each choice's keys.
type transcriptionChunkView struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta        map[string]any `json:"delta"`
		FinishReason *string        `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
	Raw   struct {
		Choices []map[string]json.RawMessage `json:"choices"`
	} `json:"-"`
}

func parseTranscription(t *testing.T, data string) transcriptionChunkView {
	t.Helper()
	var c transcriptionChunkView
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	if err := json.Unmarshal([]byte(data), &c.Raw); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	return c
}

// deltas joins a stream's transcript.
func deltas(t *testing.T, evs []string) string {
	t.Helper()
	var text strings.Builder
	for _, e := range evs {
		if e == "[DONE]" {
			continue
		}
		for _, ch := range parseTranscription(t, e).Choices {
			if s, ok := ch.Delta["content"].(string); ok {
				text.WriteString(s)
			}
		}
	}
	return text.String()
}

func fast(c *Config) {
	c.PrefillBase, c.PrefillPerToken, c.DecodeBase = time.Millisecond, 0, time.Millisecond
}

const reference = "The quick brown fox, it said, jumps over the lazy dog."

// A clip's comment is its transcript, a token a word, framed as vLLM's
// transcription chunks; its prompt is its encoder frames.
func TestTranscriptionStreamsTheClipsWords(t *testing.T) {
	_, srv := start(t, fast)
	resp := transcribe(t, srv.URL, wavClip(t, 2*time.Second, reference), map[string]string{"model": "m", "stream": "true", "stream_include_usage": "true"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := events(t, resp)
	words := strings.Fields(reference)
	// A chunk a word, the finish, the usage, [DONE].
	if len(evs) != len(words)+3 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("events %q", evs)
	}
	if got, want := deltas(t, evs), " "+strings.Join(words, " "); got != want {
		t.Errorf("transcript %q, want %q", got, want)
	}
	for i, e := range evs[:len(words)] {
		c := parseTranscription(t, e)
		if c.Object != "transcription.chunk" || c.ID != "trsc-sim-1" || c.Model != "m" || len(c.Choices) != 1 {
			t.Fatalf("chunk %d: %q", i, e)
		}
		if keys := mapKeys(c.Raw.Choices[0]); !slices.Equal(keys, []string{"delta"}) {
			t.Errorf("chunk %d's choice has %v, want only a delta: %q", i, keys, e)
		}
	}
	finish := parseTranscription(t, evs[len(words)])
	if len(finish.Choices) != 1 || finish.Choices[0].FinishReason == nil || *finish.Choices[0].FinishReason != "stop" || len(finish.Choices[0].Delta) != 0 || finish.Usage != nil {
		t.Errorf("finish chunk %q", evs[len(words)])
	}
	if keys := mapKeys(finish.Raw.Choices[0]); !slices.Equal(keys, []string{"delta", "finish_reason", "stop_reason"}) {
		t.Errorf("finish choice has %v", keys)
	}
	usage := parseTranscription(t, evs[len(words)+1])
	want := usageJSON{PromptTokens: 100, CompletionTokens: len(words), TotalTokens: 100 + len(words)}
	if usage.Choices == nil || len(usage.Choices) != 0 || usage.Usage == nil || *usage.Usage != want {
		t.Errorf("usage chunk %q, want %+v", evs[len(words)+1], want)
	}
}

func mapKeys(m map[string]json.RawMessage) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// A clip with no comment is heard as seeded words at the speaking rate;
// running usage rides on every chunk when asked with the final usage.
func TestTranscriptionOfSpeechWithoutTranscript(t *testing.T) {
	_, srv := start(t, func(c *Config) { fast(c); c.Faults.TokensPerChunk = 2 })
	resp := transcribe(t, srv.URL, wavClip(t, 1500*time.Millisecond, ""), map[string]string{
		"model": "m", "stream": "true", "stream_include_usage": "true", "stream_continuous_usage_stats": "true", "language": "en", "temperature": "0", "prompt": "ignored"})
	evs := events(t, resp)
	// ceil(1.5 s × 2.5) = 4 words in chunks of 2, the finish, the usage, [DONE].
	if len(evs) != 5 {
		t.Fatalf("events %q", evs)
	}
	if text := deltas(t, evs); len(strings.Fields(text)) != 4 || !strings.HasPrefix(text, " ") {
		t.Errorf("transcript %q, want 4 words", text)
	}
	for i, e := range evs[:3] {
		if u := parseTranscription(t, e).Usage; u == nil || u.PromptTokens != 75 || u.CompletionTokens != min(2*(i+1), 4) {
			t.Errorf("chunk %d %q: want the running usage", i, e)
		}
	}
	if u := parseTranscription(t, evs[3]).Usage; u == nil || u.CompletionTokens != 4 || u.PromptTokens != 75 {
		t.Errorf("usage chunk %q", evs[3])
	}
}

func TestTranscriptionUnstreamed(t *testing.T) {
	_, srv := start(t, fast)
	resp := transcribe(t, srv.URL, wavClip(t, 2500*time.Millisecond, reference), map[string]string{"model": "m", "response_format": "json"})
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"text": " " + reference, "usage": map[string]any{"type": "duration", "seconds": 3.0}}
	if got, _ := json.Marshal(body); string(got) != string(must(json.Marshal(want))) {
		t.Errorf("body %s, want %s", got, must(json.Marshal(want)))
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// heard is the unstreamed transcript of a clip of reference.
func heard(t *testing.T, mutate func(*Config)) []string {
	t.Helper()
	_, srv := start(t, func(c *Config) { fast(c); mutate(c) })
	resp := transcribe(t, srv.URL, wavClip(t, time.Second, reference), map[string]string{"model": "m"})
	var body transcriptionJSON
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return strings.Fields(body.Text)
}

func TestTranscriptWordErrorRate(t *testing.T) {
	words := strings.Fields(reference)
	differ := func(got []string) int {
		if len(got) != len(words) {
			t.Fatalf("heard %q, want %d words", got, len(words))
		}
		n := 0
		for i := range words {
			if !strings.EqualFold(strings.Trim(got[i], ".,"), strings.Trim(words[i], ".,")) {
				n++
			}
		}
		return n
	}
	if got := heard(t, func(c *Config) { c.TranscriptWordErrorRate = 0 }); differ(got) != 0 {
		t.Errorf("rate 0 heard %q", got)
	}
	if got := heard(t, func(c *Config) { c.TranscriptWordErrorRate = 1 }); differ(got) != len(words) {
		t.Errorf("rate 1 heard %q: %d of %d words changed", got, differ(got), len(words))
	}
	// A half of 11 words is 6 (rounded); a run repeats.
	half := heard(t, func(c *Config) { c.TranscriptWordErrorRate = 0.5 })
	if differ(half) != 6 || !slices.Equal(half, heard(t, func(c *Config) { c.TranscriptWordErrorRate = 0.5 })) {
		t.Errorf("rate 0.5 heard %q", half)
	}
}

func TestTranscriptionRefusals(t *testing.T) {
	_, srv := start(t, fast)
	clip := wavClip(t, time.Second, "")
	for _, tc := range []struct {
		name   string
		file   []byte
		fields map[string]string
		status int
		says   string
	}{
		{"not a WAV", []byte("ID3 this is an mp3, or so it says"), map[string]string{"model": "m"}, 400, "Invalid or unsupported audio file"},
		{"truncated header", clip[:30], map[string]string{"model": "m"}, 400, "Invalid or unsupported audio file"},
		{"no file", nil, map[string]string{"model": "m"}, 400, "file is required"},
		{"no model", clip, nil, 400, "model is required"},
		{"another model", clip, map[string]string{"model": "whisper"}, 404, "The model `whisper` does not exist."},
		{"srt", clip, map[string]string{"model": "m", "response_format": "srt"}, 400, `response_format "srt" is not served`},
		{"bad stream flag", clip, map[string]string{"model": "m", "stream": "maybe"}, 400, "stream must be true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := transcribe(t, srv.URL, tc.file, tc.fields)
			var body struct {
				Error struct{ Message, Type string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !strings.Contains(body.Error.Message, tc.says) {
				t.Errorf("%d %+v, want %d saying %q", resp.StatusCode, body, tc.status, tc.says)
			}
		})
	}
	t.Run("not a form", func(t *testing.T) {
		resp, err := http.Post(srv.URL+"/v1/audio/transcriptions", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}

func TestTranscriptionFaults(t *testing.T) {
	clip := wavClip(t, time.Second, reference)
	stream := map[string]string{"model": "m", "stream": "true", "stream_include_usage": "true"}
	t.Run("error", func(t *testing.T) {
		_, srv := start(t, func(c *Config) { fast(c); c.Faults.ErrorRate, c.Faults.ErrorStatus = 1, 503 })
		if resp := transcribe(t, srv.URL, clip, stream); resp.StatusCode != 503 {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
	t.Run("no usage, no [DONE]", func(t *testing.T) {
		_, srv := start(t, func(c *Config) { fast(c); c.Faults.UsagePlacement, c.Faults.OmitDone = UsageNone, true })
		evs := events(t, transcribe(t, srv.URL, clip, stream))
		for _, e := range evs {
			if e == "[DONE]" || strings.Contains(e, "usage") {
				t.Errorf("sent %q", e)
			}
		}
		if got := deltas(t, evs); got != " "+strings.Join(strings.Fields(reference), " ") {
			t.Errorf("transcript %q", got)
		}
		b, _ := io.ReadAll(transcribe(t, srv.URL, clip, map[string]string{"model": "m"}).Body)
		if strings.Contains(string(b), "usage") {
			t.Errorf("unstreamed body %s has usage", b)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		_, srv := start(t, func(c *Config) { fast(c); c.Faults.DisconnectRate, c.Faults.DisconnectAfterTokens = 1, 2 })
		resp := transcribe(t, srv.URL, clip, stream)
		var evs []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			evs = append(evs, sc.Text())
		}
		if sc.Err() == nil || slices.Contains(evs, "data: [DONE]") {
			t.Errorf("err %v, events %q: want a cut stream", sc.Err(), evs)
		}
	})
}

// The transcript's chunks are stamped as a chat answer's are.
func TestTranscriptionTruthStamps(t *testing.T) {
	_, srv := start(t, func(c *Config) { fast(c); c.TruthStamps = true })
	evs := events(t, transcribe(t, srv.URL, wavClip(t, time.Second, "one two three"), map[string]string{"model": "m", "stream": "true"}))
	if len(evs) != 5 {
		t.Fatalf("events %q", evs)
	}
	_, body, _ := httpGet(t, srv.URL+"/sim/truth")
	var rec TruthRecord
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatal(err)
	}
	if got := rec.Stamps["trsc-sim-1"]; len(got) != 3 {
		t.Errorf("stamps %v, want 3", rec.Stamps)
	}
}

func TestTranscriptionServedByGeneratingEnginesOnly(t *testing.T) {
	_, srv := start(t, func(c *Config) { c.Engine = EngineTEI })
	if resp := transcribe(t, srv.URL, wavClip(t, time.Second, ""), map[string]string{"model": "m"}); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("TEI answered %d", resp.StatusCode)
	}
}

// A body past request.MaxBody is refused as the others are.
func TestTranscriptionBodyBound(t *testing.T) {
	_, srv := start(t, fast)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, _ := mw.CreateFormFile("file", "huge.wav")
		_, err := io.Copy(fw, io.LimitReader(zeros{}, 129<<20))
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := http.Post(srv.URL+"/v1/audio/transcriptions", mw.FormDataContentType(), pr)
	pr.CloseWithError(io.ErrClosedPipe) // the server may answer before it reads all
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d", resp.StatusCode)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestTranscriptionConfig(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*Config)
		says   string
	}{
		{func(c *Config) { c.WordsPerAudioSecond = 0 }, "words per audio second 0 must be within (0, 20]"},
		{func(c *Config) { c.WordsPerAudioSecond = 21 }, "words per audio second 21"},
		{func(c *Config) { c.WordsPerAudioSecond = math.NaN() }, "words per audio second NaN"},
		{func(c *Config) { c.TranscriptWordErrorRate = 1.5 }, "transcript word error rate 1.5 must be within [0, 1]"},
	} {
		cfg := DefaultConfig()
		tc.mutate(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("error %v, want %q", err, tc.says)
		}
	}
}
