package report

import (
	"github.com/llmprobe/llmprobe/prober"
)

// Transcription is what a run's successful transcriptions came to: the
// audio they uploaded, how fast it was transcribed, and, for clips with a
// reference transcript, the word error rate.
type Transcription struct {
	AudioSeconds float64 `json:"audio_seconds"`
	// RTFx is the audio's seconds over the e2e seconds of the requests
	// that carried it (the Open ASR Leaderboard's inverse real-time
	// factor, per request); AudioPerSecond is the audio seconds
	// transcribed per second of the run, what the engine sustained.
	RTFx           *float64 `json:"rtfx"`
	AudioPerSecond *float64 `json:"audio_seconds_per_second"`
	// WER is WordErrors over ReferenceWords, the corpus's rate (not the
	// mean of its clips'); null without a clip that has a reference.
	WER            *float64 `json:"wer"`
	WordErrors     int      `json:"word_errors,omitempty"`
	ReferenceWords int      `json:"reference_words,omitempty"`
	Requests       int      `json:"requests"`
}

// transcriptionTally sums the successful transcriptions of a run.
type transcriptionTally struct {
	audio, e2e       float64
	errors, words, n int
}

func (t *transcriptionTally) add(res *prober.Result) {
	if res.AudioSeconds <= 0 || res.Outcome != prober.OutcomeSuccess {
		return
	}
	t.n++
	t.audio += res.AudioSeconds
	t.e2e += res.E2E.Seconds()
	t.errors += res.WordErrors
	t.words += res.ReferenceWords
}

// figures is the tally over a run of dur seconds; nil without a
// successful transcription.
func (t *transcriptionTally) figures(dur float64) *Transcription {
	if t.n == 0 {
		return nil
	}
	out := &Transcription{AudioSeconds: t.audio, Requests: t.n, WordErrors: t.errors, ReferenceWords: t.words,
		RTFx: orNA(t.audio/t.e2e, t.e2e > 0), AudioPerSecond: orNA(t.audio/dur, dur > 0), WER: orNA(float64(t.errors)/float64(t.words), t.words > 0)}
	return out
}
