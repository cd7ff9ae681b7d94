package prober

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/lib/wav"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

// audioScenario is a transcription scenario of synthetic audio of seconds.
func audioScenario(t *testing.T, seconds float64, streamed bool) config.Scenario {
	t.Helper()
	s := testkit.Scenario()
	s.Audio = &config.Audio{Seconds: seconds, Language: "en"}
	if !streamed {
		s.Stream = new(bool)
	}
	return validated(t, s)
}

// transcribeOnce sends one transcription of p (its audio from s) to target.
func transcribeOnce(t *testing.T, target config.Target, s config.Scenario, p prompt.Prompt) *Result {
	t.Helper()
	return newClient(t, target).Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, Sched: time.Now()})
}

// A clip whose audio is synthetic, with reference as its transcript.
func testClip(t *testing.T, seconds float64, reference string) *prompt.Clip {
	t.Helper()
	b, err := io.ReadAll(prompt.Synthetic(7, seconds))
	if err != nil {
		t.Fatal(err)
	}
	return &prompt.Clip{ID: "jfk", Line: 3, File: "clips/jfk.wav", WAV: b, Seconds: seconds, Reference: reference}
}

// Both engines' stream framings: TTFT at the first text delta, one token
// per delta, N from usage (vLLM's last chunk, OpenAI's transcript.text.done),
// the audio's seconds on the result.
func TestTranscriptionTranscripts(t *testing.T) {
	const gap = 30 * time.Millisecond
	for _, tc := range []struct {
		file   string
		prompt int
	}{
		{"vllm-transcription-stream.sse", 4},
		{"openai-transcription-stream.sse", 84},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := replay(t, loadTranscript(t, tc.file), gap)
			s := audioScenario(t, 2.5, true)
			res := transcribeOnce(t, testkit.Target(srv.URL, config.APITranscriptions), s, prompt.Prompt{Text: "a b c d"})
			if res.Outcome != OutcomeSuccess || !res.Good {
				t.Fatalf("%s good %v: %s\n%s", res.Outcome, res.Good, res.Error, logOf(res))
			}
			if res.OutputTokens != 6 || res.TokenSource != TokensFromUsage || res.OutputChunks != 6 || res.PromptTokensReported != tc.prompt {
				t.Errorf("%d output tokens from %s in %d chunks, prompt %d; want 6 from usage in 6, prompt %d", res.OutputTokens, res.TokenSource, res.OutputChunks, res.PromptTokensReported, tc.prompt)
			}
			if res.TTFT < gap || res.TTFT >= 2*gap || len(res.ITL) != 5 {
				t.Errorf("TTFT %s, %d ITL samples: want the first event's, in [%s, %s), and 5", res.TTFT, len(res.ITL), gap, 2*gap)
			}
			if !strings.Contains(res.Answer, "fellow Americans, ask") || res.AudioSeconds != 2.5 || res.FinishReason != "stop" {
				t.Errorf("answer %q, audio %gs, finish %q", res.Answer, res.AudioSeconds, res.FinishReason)
			}
		})
	}
}

// The request is a form a server's multipart reader takes: the scenario's
// fields, and a WAV of the length asked for, the body's length announced.
func TestTranscriptionRequest(t *testing.T) {
	type seen struct {
		fields      map[string]string
		file        []byte
		filename    string
		length      int64
		read        int
		contentType string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := seen{fields: map[string]string{}, length: r.ContentLength, read: len(body), contentType: r.Header.Get("Content-Type")}
		_, params, _ := mime.ParseMediaType(s.contentType)
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(part)
			if part.FormName() == "file" {
				s.file, s.filename = b, part.FileName()
				continue
			}
			s.fields[part.FormName()] = string(b)
		}
		got <- s
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":" ask not what your country can do for you","usage":{"type":"duration","seconds":3}}`)
	}))
	t.Cleanup(srv.Close)
	target := testkit.Target(srv.URL, config.APITranscriptions)
	target.ExtraBody = map[string]any{"prompt": "Kennedy", "top_k": 5}
	temp := 0.0
	s := audioScenario(t, 2.5, false)
	s.Sampling.Temperature = &temp

	res := transcribeOnce(t, target, s, prompt.Prompt{Text: "a b c d"})
	r := <-got
	if res.Outcome != OutcomeSuccess || !res.Unstreamed || res.TokenSource != TokensFromText || res.OutputTokens != prompt.EstimateTokens(" ask not what your country can do for you") {
		t.Fatalf("%s unstreamed %v, %d tokens from %s: %s\n%s", res.Outcome, res.Unstreamed, res.OutputTokens, res.TokenSource, res.Error, logOf(res))
	}
	want := map[string]string{"model": "m", "stream": "false", "response_format": "json", "language": "en", "temperature": "0", "prompt": "Kennedy", "top_k": "5"}
	for k, v := range want {
		if r.fields[k] != v {
			t.Errorf("field %s = %q, want %q (fields %v)", k, r.fields[k], v, r.fields)
		}
	}
	if _, ok := r.fields["stream_include_usage"]; ok {
		t.Error("an unstreamed request asks for stream_include_usage")
	}
	if !strings.HasPrefix(r.contentType, "multipart/form-data; boundary=") || r.length != int64(r.read) {
		t.Errorf("Content-Type %q, Content-Length %d for %d bytes", r.contentType, r.length, r.read)
	}
	seconds, err := prompt.WAVSeconds(r.file)
	if err != nil || seconds != 2.5 || r.filename != "audio.wav" || int64(len(r.file)) != prompt.SyntheticSize(2.5) {
		t.Errorf("file %q of %d bytes: %gs, %v", r.filename, len(r.file), seconds, err)
	}

	// A clip goes as its own bytes, under its own name; a streamed request
	// asks for vLLM's usage chunk.
	clip := testClip(t, 1, "ask not")
	s = audioScenario(t, 2.5, true)
	transcribeOnce(t, target, s, prompt.Prompt{Text: "a b c d", Clip: clip})
	r = <-got
	if !bytes.Equal(r.file, clip.WAV) || r.filename != "jfk.wav" || r.fields["stream"] != "true" || r.fields["stream_include_usage"] != "true" {
		t.Errorf("clip sent as %q (%d bytes, want %d), fields %v", r.filename, len(r.file), len(clip.WAV), r.fields)
	}
}

// Synthetic audio is a WAV of the length asked for, the same for one seed
// and another for the next, whatever the reads' sizes.
func TestSyntheticAudio(t *testing.T) {
	a, _ := io.ReadAll(prompt.Synthetic(1, 3.2))
	var b bytes.Buffer
	r := prompt.Synthetic(1, 3.2)
	buf := make([]byte, 7) // odd, so a sample is split between reads
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err == io.EOF {
			break
		}
	}
	c, _ := io.ReadAll(prompt.Synthetic(2, 3.2))
	if !bytes.Equal(a, b.Bytes()) || bytes.Equal(a, c) || int64(len(a)) != prompt.SyntheticSize(3.2) {
		t.Fatalf("same seed equal %v, other seed differs %v, %d bytes (want %d)", bytes.Equal(a, b.Bytes()), !bytes.Equal(a, c), len(a), prompt.SyntheticSize(3.2))
	}
	if s, err := prompt.WAVSeconds(a); err != nil || s != 3.2 {
		t.Fatalf("%gs, %v", s, err)
	}
}

// A clip's transcript is held to max_wer against its reference: within it
// good, past it a quality failure naming the clip and the rate; the word
// counts ride on the result either way.
func TestTranscriptWordErrorRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"Ask not what your country can do for me."}`)
	}))
	t.Cleanup(srv.Close)
	target := testkit.Target(srv.URL, config.APITranscriptions)
	clip := testClip(t, 2, "ask not what your country can do for you")
	for _, c := range []struct {
		maxWER float64
		good   bool
	}{{0.2, true}, {0.1, false}} {
		s := testkit.Scenario()
		s.Audio, s.Stream = &config.Audio{Dataset: "clips.jsonl", MaxWER: c.maxWER}, new(bool)
		res := transcribeOnce(t, target, validated(t, s), prompt.Prompt{Text: "a b c d", Clip: clip})
		if res.Outcome != OutcomeSuccess || res.Good != c.good || res.WordErrors != 1 || res.ReferenceWords != 9 {
			t.Errorf("max_wer %g: %s good %v, %d errors in %d words; want good %v, 1 in 9\n%s", c.maxWER, res.Outcome, res.Good, res.WordErrors, res.ReferenceWords, c.good, logOf(res))
		}
		if !c.good && (res.Quality == nil || !strings.Contains(res.Quality.Reason, "clip line 3 (jfk): word error rate 0.111 (1 errors in 9 words) is past max_wer 0.1")) {
			t.Errorf("quality %+v", res.Quality)
		}
	}
}

// Hostile transcription servers: each answer gets its outcome and reason.
func TestTranscriptionHostile(t *testing.T) {
	for _, c := range []struct {
		name, contentType, body string
		streamed                bool
		outcome                 Outcome
		reason, text            string
	}{
		{"not JSON", "application/json", `<html>upstream error</html>`, false, OutcomeStreamError, reasonTranscriptNotJSON, "not JSON"},
		{"no text field", "application/json", `{"transcript":"hi"}`, false, OutcomeStreamError, reasonTranscriptNotJSON, "no text field"},
		{"empty transcript", "application/json", `{"text":"  ","usage":{"type":"duration","seconds":2}}`, false, OutcomeStreamError, reasonTranscriptEmpty, "heard no word"},
		{"error in the answer", "application/json", `{"text":"x","error":{"message":"decoder failed"}}`, false, OutcomeStreamError, reasonErrorInAnswer, "decoder failed"},
		{"error event", "text/event-stream", "data: {\"type\":\"transcript.text.delta\",\"delta\":\"hi\"}\n\ndata: {\"type\":\"error\",\"error\":{\"message\":\"audio too long\"}}\n\n", true, OutcomeStreamError, reasonErrorInStream, "audio too long"},
		{"empty stream", "text/event-stream", "data: {\"object\":\"transcription.chunk\",\"choices\":[{\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", true, OutcomeStreamError, reasonNoOutput, "without an output token"},
		{"one body for a stream (Ollama)", "application/json", `{"text":"ask not"}`, true, OutcomeStreamError, reasonNotEventStream, "set stream: false on the scenario"},
		{"no end", "text/event-stream", "data: {\"type\":\"transcript.text.delta\",\"delta\":\"hi\"}\n\n", true, OutcomeStreamError, reasonNoFinish, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", c.contentType)
				io.WriteString(w, c.body)
			}))
			t.Cleanup(srv.Close)
			res := transcribeOnce(t, testkit.Target(srv.URL, config.APITranscriptions), audioScenario(t, 1, c.streamed), prompt.Prompt{Text: "a b c d"})
			if res.Outcome != c.outcome || res.Reason != c.reason || !strings.Contains(res.Error, c.text) {
				t.Errorf("%s %s %q; want %s %s containing %q\n%s", res.Outcome, res.Reason, res.Error, c.outcome, c.reason, c.text, logOf(res))
			}
		})
	}
}

// A transcriptions target against the sim, streamed and not, synthetic
// audio and a clip: the transcript's words are the tokens (TTFT, ITL and
// TPOT where streamed, N from usage), the clip's transcript is its
// reference (the sim hears the WAV's comment) until the sim is told to
// mishear half its words.
func TestTranscriptionAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.TokensPerChunk = 1 })
	target := testkit.Target(srv.URL, config.APITranscriptions)
	for _, streamed := range []bool{true, false} {
		// 4 s of synthetic audio: the sim says 2.5 words a second.
		res := transcribeOnce(t, target, audioScenario(t, 4, streamed), prompt.Prompt{Text: "a b c d"})
		if res.Outcome != OutcomeSuccess || !res.Good || res.AudioSeconds != 4 || res.Unstreamed == streamed {
			t.Fatalf("streamed %v: %s good %v, audio %gs\n%s", streamed, res.Outcome, res.Good, res.AudioSeconds, logOf(res))
		}
		if streamed && (res.OutputTokens != 10 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != 200 || len(res.ITL) != 9 || res.TTFT <= 0) {
			t.Errorf("streamed: %d tokens from %s, prompt %d, %d ITL samples, TTFT %s", res.OutputTokens, res.TokenSource, res.PromptTokensReported, len(res.ITL), res.TTFT)
		}
		if !streamed && (res.TTFT != 0 || len(strings.Fields(res.Answer)) != 10 || res.TokenSource != TokensFromText) {
			t.Errorf("unstreamed: TTFT %s, answer %q from %s", res.TTFT, res.Answer, res.TokenSource)
		}
	}

	const reference = "ask not what your country can do for you ask what you can do for your country"
	b, err := wav.Encode(make([]int, 5*prompt.SampleRate), prompt.SampleRate, reference)
	if err != nil {
		t.Fatal(err)
	}
	clip := &prompt.Clip{Line: 1, File: "jfk.wav", WAV: b, Seconds: 5, Reference: reference}
	s := testkit.Scenario()
	s.Audio = &config.Audio{Dataset: "clips.jsonl", MaxWER: 0.1}
	s = validated(t, s)
	if res := transcribeOnce(t, target, s, prompt.Prompt{Text: "a b c d", Clip: clip}); !res.Good || res.WordErrors != 0 || res.ReferenceWords != 17 {
		t.Errorf("a clip the sim hears right: good %v, %d errors in %d words\n%s", res.Good, res.WordErrors, res.ReferenceWords, logOf(res))
	}
	mishears, _ := testkit.StartSim(t, func(c *sim.Config) { c.TranscriptWordErrorRate = 0.5 })
	res := transcribeOnce(t, testkit.Target(mishears.URL, config.APITranscriptions), s, prompt.Prompt{Text: "a b c d", Clip: clip})
	if res.Outcome != OutcomeSuccess || res.Good || res.WordErrors < 8 || res.Quality == nil || !strings.Contains(res.Quality.Reason, "past max_wer 0.1") {
		t.Errorf("a clip the sim mishears: %s good %v, %d errors, quality %+v", res.Outcome, res.Good, res.WordErrors, res.Quality)
	}
}

// Ollama v0.24.0 asked to transcribe with a model that takes no audio
// (captured): a 200 of application/x-ndjson with no body. Streamed, it is
// no event stream, and the error says what to set; unstreamed, an empty
// answer.
func TestTranscriptionOllamaWithoutAudioModel(t *testing.T) {
	tr := loadTranscript(t, "ollama-transcription-nonaudio.http")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", tr.header.Get("Content-Type"))
		w.WriteHeader(tr.status)
	}))
	t.Cleanup(srv.Close)
	target := testkit.Target(srv.URL, config.APITranscriptions)
	for _, c := range []struct {
		streamed     bool
		reason, text string
	}{
		{true, reasonNotEventStream, `Content-Type "application/x-ndjson" is not text/event-stream: an empty body; some servers (Ollama) answer transcriptions in one body whatever stream says: set stream: false on the scenario`},
		{false, reasonTranscriptNotJSON, "the transcription answer is empty: the server wrote no body"},
	} {
		res := transcribeOnce(t, target, audioScenario(t, 1, c.streamed), prompt.Prompt{Text: "a b c d"})
		if res.Outcome != OutcomeStreamError || res.Reason != c.reason || !strings.Contains(res.Error, c.text) {
			t.Errorf("streamed %v: %s %s %q", c.streamed, res.Outcome, res.Reason, res.Error)
		}
	}
}
