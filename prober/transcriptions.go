package prober

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
	"github.com/llmprobe/llmprobe/prompt"
)

// transcriptions is OpenAI's audio transcription API
// (/v1/audio/transcriptions): the request is a form upload of a WAV (a
// dataset's clip, or synthetic audio made as it is sent); a stream is
// vLLM's transcription.chunk objects, read as chat chunks, or OpenAI's
// transcript.text.delta and transcript.text.done events; an unstreamed
// answer is {"text", "usage"}.
type transcriptions struct{}

func (transcriptions) path(dialect) string { return "/v1/audio/transcriptions" }

func (transcriptions) traits() traits { return traits{tokens: true} }

// oneBodyHint: Ollama answers a transcription in one JSON body, streamed
// or not.
func (transcriptions) oneBodyHint() string {
	return "some servers (Ollama) answer transcriptions in one body whatever stream says: set stream: false on the scenario"
}

// Reasons of a failed transcription answer.
const (
	reasonTranscriptNotJSON = "transcript_not_json"
	reasonTranscriptEmpty   = "transcript_empty"
)

func (transcriptions) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	open, size, seconds := prompt.AudioOf(r.Scenario.Audio, r.Prompt)
	if open == nil {
		return payload{}, errors.New("a transcription needs audio: the scenario sets no audio.seconds or audio.dataset")
	}
	fields := map[string]string{"model": model, "response_format": "json", "stream": strconv.FormatBool(r.Scenario.Streamed())}
	for k, v := range extra {
		fields[k] = fmt.Sprint(v)
	}
	if r.Scenario.Streamed() {
		// vLLM's form field for the final usage chunk.
		fields["stream_include_usage"] = "true"
	}
	if a := r.Scenario.Audio; a != nil && a.Language != "" {
		fields["language"] = a.Language
	}
	if t := r.Scenario.Sampling.Temperature; t != nil {
		fields["temperature"] = strconv.FormatFloat(*t, 'g', -1, 64)
	}
	name := "audio.wav"
	if c := r.Prompt.Clip; c != nil {
		name = filepath.Base(c.File)
	}
	form, err := newForm(fields, name, r.Prompt.Text)
	if err != nil {
		return payload{}, err
	}
	asks := fmt.Sprintf("%.2fs of audio (%s, body %s)", seconds, audioSource(r.Prompt), config.Bytes(form.size(size)))
	if !r.Scenario.Streamed() {
		asks += ", stream: false"
	}
	return payload{
		open: func() io.Reader {
			return io.MultiReader(bytes.NewReader(form.head), open(), bytes.NewReader(form.tail))
		},
		size:         form.size(size),
		asks:         asks,
		contentType:  form.contentType,
		audioSeconds: seconds,
	}, nil
}

// audioSource names where a request's audio came from, for its log.
func audioSource(p prompt.Prompt) string {
	if p.Clip != nil {
		return p.Clip.Name() + ", " + p.Clip.File
	}
	return "synthetic"
}

// form is a multipart body around one file: its fields and the file
// part's header (head), the file's bytes sent from where they are, and
// the closing boundary (tail).
type form struct {
	head, tail  []byte
	contentType string
}

func (f form) size(file int64) int64 { return int64(len(f.head)) + file + int64(len(f.tail)) }

// newForm writes fields, sorted, and the header of the file part named
// name; the boundary comes from seed (the request's nonce), so a burst's
// bodies repeat with its seed.
func newForm(fields map[string]string, name, seed string) (form, error) {
	var head, tail bytes.Buffer
	out := &switchWriter{w: &head}
	mw := multipart.NewWriter(out)
	if err := mw.SetBoundary(fmt.Sprintf("llmprobe-%016x", prompt.ImageSeed(seed))); err != nil {
		return form{}, err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := mw.WriteField(k, fields[k]); err != nil {
			return form{}, err
		}
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "audio/wav")
	if _, err := mw.CreatePart(h); err != nil {
		return form{}, err
	}
	out.w = &tail
	if err := mw.Close(); err != nil {
		return form{}, err
	}
	return form{head: head.Bytes(), tail: tail.Bytes(), contentType: mw.FormDataContentType()}, nil
}

// switchWriter lets a multipart writer's output go to the head, then,
// after the file part's header, to the tail.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// transcriptEvent is what an OpenAI transcription stream event holds.
type transcriptEvent struct {
	Type  string           `json:"type"`
	Delta string           `json:"delta"`
	Text  string           `json:"text"`
	Usage *transcriptUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// transcriptUsage is a transcription's usage: OpenAI's tokens (type
// "tokens") or the audio's length (type "duration", vLLM's and whisper-1's
// unstreamed answer), which counts no token.
type transcriptUsage struct {
	Type         string  `json:"type"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	Seconds      float64 `json:"seconds"`
}

func (u *transcriptUsage) tokens() *usage {
	if u == nil || u.Type != "tokens" || u.OutputTokens <= 0 {
		return nil
	}
	return &usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
}

// openAITranscript marks OpenAI's event types; vLLM's chunks have none.
var openAITranscript = []byte(`"transcript.text.`)

func (transcriptions) event(ev sse.Event, c *streamChunk) (bool, string, error) {
	if !bytes.Contains(ev.Data, openAITranscript) && !bytes.Contains(ev.Data, []byte(`"type":"error"`)) {
		return choicesEvent(ev, c)
	}
	var e transcriptEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return false, reasonMalformed, fmt.Errorf("malformed event: %v: %s", err, truncate(string(ev.Data), 128))
	}
	switch e.Type {
	case "transcript.text.delta":
		c.delta().Content = e.Delta
	case "transcript.text.done":
		c.Choices = []choice{{FinishReason: "stop"}}
		c.Usage = e.Usage.tokens()
		return true, "", nil
	case "error":
		msg := "no message"
		if e.Error != nil {
			msg = e.Error.Message
		}
		return false, reasonErrorInStream, &serverFailure{Event: "error", Message: truncate(msg, maxMessage)}
	}
	return false, "", nil
}

func (transcriptions) whole(body io.Reader, _ http.Header, r Request, keep int, _ dialect) (*answer, error) {
	return readText(body, r.MaxTokens, keep, readTranscript)
}

// readTranscript reads an unstreamed transcription: {"text", "usage"}. An
// answer with no word fails: an engine that heard nothing in speech did
// not transcribe it.
func readTranscript(raw []byte, w *answer) error {
	var a struct {
		Text  *string          `json:"text"`
		Usage *transcriptUsage `json:"usage"`
		Error json.RawMessage  `json:"error"`
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return &answerProblem{Reason: reasonTranscriptNotJSON, Text: "the transcription answer is empty: the server wrote no body (Ollama does so for a model that takes no audio)"}
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return &answerProblem{Reason: reasonTranscriptNotJSON, Text: fmt.Sprintf("the transcription answer is not JSON: %v: %s", err, truncate(string(raw), 64))}
	}
	if len(a.Error) > 0 && !bytes.Equal(a.Error, []byte("null")) {
		return &answerProblem{Reason: reasonErrorInAnswer, Text: "error in the answer: " + truncate(string(a.Error), maxMessage)}
	}
	if a.Text == nil {
		return &answerProblem{Reason: reasonTranscriptNotJSON, Text: "the transcription answer has no text field: " + truncate(string(raw), 64)}
	}
	if strings.TrimSpace(*a.Text) == "" {
		return &answerProblem{Reason: reasonTranscriptEmpty, Text: "the transcript is empty: the engine heard no word"}
	}
	w.Content, w.FinishReason, w.usage = *a.Text, "stop", a.Usage.tokens()
	w.TextTokens = prompt.EstimateTokens(*a.Text)
	return nil
}
