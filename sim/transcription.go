package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/llmprobe/llmprobe/sim/internal/request"
	"github.com/llmprobe/llmprobe/sim/internal/speech"
)

// invalidAudio is vLLM's answer to a file it cannot read as audio.
const invalidAudio = "Invalid or unsupported audio file"

// serveTranscription answers POST /v1/audio/transcriptions as vLLM does:
// the clip's encoder tokens are the prompt, the words heard in it the
// answer, a token a word, made by the engine as a chat answer is.
func (e *Engine) serveTranscription(w http.ResponseWriter, r *http.Request) {
	var receipt Receipt
	req, clip, ok := e.readTranscription(w, r, &receipt)
	if !ok {
		return
	}
	a, ok := e.arrive(w, r)
	if !ok {
		return
	}
	words := e.transcript(a.rng, clip)
	s := newSequence(r.Context(), clip.EncoderTokens(), len(words), true)
	if !e.enqueue(w, s) {
		return
	}
	st := &streamWriter{w: w, transcription: true, id: fmt.Sprintf("trsc-sim-%d", a.n), model: e.cfg.Model, created: time.Now().Unix(),
		faults: a.faults, plan: a.plan, prompt: s.promptTokens, words: words, seq: s}
	if !req.Stream {
		st.wholeTranscript(r.Context(), clip.Seconds())
		return
	}
	// vLLM sends running usage only when it sends the final usage too.
	st.includeUsage = req.IncludeUsage && a.faults.UsagePlacement != UsageNone
	st.continuous = st.includeUsage && req.ContinuousUsage
	e.stream(r, st, receipt)
}

// readTranscription reads a transcription request and hears its clip;
// false when it was refused (the answer is written). With truth stamps,
// receipt gets the moment the request was read.
func (e *Engine) readTranscription(w http.ResponseWriter, r *http.Request, receipt *Receipt) (*speech.Request, speech.Clip, bool) {
	req, err := speech.Read(w, r)
	if e.truth != nil {
		*receipt = ReceiptOf(r)
	}
	switch {
	case errors.Is(err, request.ErrTooLarge):
		apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", err.Error())
		return nil, speech.Clip{}, false
	case err != nil:
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return nil, speech.Clip{}, false
	}
	if !e.servesModel(w, req.Model) {
		return nil, speech.Clip{}, false
	}
	if req.ResponseFormat != "" && req.ResponseFormat != "json" {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("response_format %q is not served: the simulated engine answers json only", req.ResponseFormat))
		return nil, speech.Clip{}, false
	}
	if req.File == nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "file is required")
		return nil, speech.Clip{}, false
	}
	clip, err := speech.Decode(req.File)
	if err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", invalidAudio)
		return nil, speech.Clip{}, false
	}
	return req, clip, true
}

// transcript is what the sim hears in clip, a token a word, each with a
// leading space: its comment's words, else seeded words at the configured
// speaking rate; TranscriptWordErrorRate of them misheard.
func (e *Engine) transcript(rng *rand.Rand, clip speech.Clip) []string {
	words := strings.Fields(clip.Comment)
	if len(words) == 0 {
		words = make([]string, clip.Words(e.cfg.WordsPerAudioSecond))
		for i := range words {
			words[i] = vocabulary[rng.IntN(len(vocabulary))]
		}
	}
	mishear(rng, words, e.cfg.TranscriptWordErrorRate)
	for i, w := range words {
		words[i] = " " + w
	}
	return words
}

// mishear replaces rate of words (rounded to a whole number of them), drawn
// by rng, each by a vocabulary word other than itself.
func mishear(rng *rand.Rand, words []string, rate float64) {
	n := int(math.Round(rate * float64(len(words))))
	if n == 0 {
		return
	}
	for _, i := range rng.Perm(len(words))[:n] {
		words[i] = otherWord(rng, words[i])
	}
}

// otherWord is a vocabulary word that a transcript's scorer, ignoring case
// and punctuation, tells apart from word.
func otherWord(rng *rand.Rand, word string) string {
	heard := strings.ToLower(strings.TrimFunc(word, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
	for {
		if w := vocabulary[rng.IntN(len(vocabulary))]; w != heard {
			return w
		}
	}
}

// transcriptionJSON is vLLM's TranscriptionResponse.
type transcriptionJSON struct {
	Text  string         `json:"text"`
	Usage *durationUsage `json:"usage,omitempty"`
}

// durationUsage is a transcription's usage: the audio's seconds, counted up.
type durationUsage struct {
	Type    string `json:"type"`
	Seconds int    `json:"seconds"`
}

// wholeTranscript answers in one body once every word is made; usage placed
// nowhere leaves its usage out.
func (st *streamWriter) wholeTranscript(ctx context.Context, seconds int) {
	if !waitAll(ctx, st.seq) {
		return
	}
	body := transcriptionJSON{Text: strings.Join(st.words, "")}
	if st.faults.UsagePlacement != UsageNone {
		body.Usage = &durationUsage{Type: "duration", Seconds: seconds}
	}
	writeJSON(st.w, http.StatusOK, body)
}
