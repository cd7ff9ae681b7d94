package config

import (
	"path/filepath"
	"slices"
)

// APITranscriptions is OpenAI's audio transcription API
// (/v1/audio/transcriptions), which vLLM serves and streams.
const APITranscriptions API = "transcriptions"

// Audio is what each request of a transcription scenario uploads: a
// synthetic WAV of Seconds made from the request's seed (load), or a clip
// of a dataset whose lines name WAV files and their reference transcripts
// (quality).
type Audio struct {
	Seconds float64 `yaml:"seconds,omitempty"`
	// Dataset is a JSONL file of {"id", "audio", "reference"} lines, read
	// at load (by prompt's check); a relative path is relative to the
	// configuration file, an audio path to the dataset's.
	Dataset string `yaml:"dataset,omitempty"`
	// MaxWER, when set, checks each transcript of a dataset clip: its word
	// error rate against the clip's reference must be at most this.
	MaxWER float64 `yaml:"max_wer,omitempty"`
	// Language is sent as the request's language (ISO-639-1), if set.
	Language string `yaml:"language,omitempty"`
}

// Bounds of audio. 600 s of 16 kHz 16-bit mono is 19 MB, below OpenAI's
// 25 MB upload limit; 0.1 s is less than any word.
const (
	MinAudioSeconds = 0.1
	MaxAudioSeconds = 600
)

func (a *Audio) setDirectory(dir string) {
	if a != nil && a.Dataset != "" && !filepath.IsAbs(a.Dataset) {
		a.Dataset = filepath.Join(dir, a.Dataset)
	}
}

// ChecksTranscript reports whether each transcript is held to max_wer.
func (s *Scenario) ChecksTranscript() bool { return s.Audio != nil && s.Audio.MaxWER > 0 }

// validateAudio checks audio: one source, within its bounds; the prompt,
// token lengths' sources and the modes of text requests do not apply.
func (s *Scenario) validateAudio(path string, errs *FieldErrors) {
	a := s.Audio
	if a == nil {
		return
	}
	path += ".audio"
	switch {
	case a.Seconds != 0 && a.Dataset != "":
		errs.Add(path+".seconds", "cannot be used with dataset: a dataset's clips are as long as they are")
	case a.Seconds != 0:
		errs.Within(path+".seconds", a.Seconds, MinAudioSeconds, MaxAudioSeconds, "s")
	case a.Dataset == "":
		errs.Add(path, "sets no audio: set seconds (synthetic audio) or dataset (clips with reference transcripts)")
	}
	if a.MaxWER != 0 {
		errs.Above(path+".max_wer", a.MaxWER, 0, 1, "")
		if a.Dataset == "" {
			errs.Add(path+".max_wer", "needs a dataset: synthetic audio has no reference transcript")
		}
	}
	if n := len(a.Language); n != 0 && (n != 2 || a.Language[0] < 'a' || a.Language[0] > 'z' || a.Language[1] < 'a' || a.Language[1] > 'z') {
		errs.Add(path+".language", "%q must be an ISO-639-1 code of two lowercase letters, like en", a.Language)
	}
	for _, other := range []struct {
		name string
		set  bool
	}{{"prompt", s.Prompt != ""}, {"prompt_dataset", s.PromptDataset != nil}, {"golden", s.Golden != nil},
		{"conversation", s.Conversation != nil}, {"images", s.Images != nil}, {"shared_prefix_tokens", s.SharedPrefixTokens != 0}} {
		if other.set {
			errs.Add(path[:len(path)-len(".audio")]+"."+other.name, "cannot be used with audio: a transcription's prompt is its audio")
		}
	}
}

// refuseAudio adds to errs, for s at path, audio on a target that does not
// transcribe, and a scenario without audio on one that does.
func (s *Scenario) refuseAudio(path string, runners []Runner, errs *FieldErrors) {
	if i := slices.IndexFunc(runners, func(r Runner) bool { return !r.Transcribes }); i >= 0 && s.Audio != nil {
		errs.Add(path+".audio", "does not apply to %s: audio is uploaded to api: transcriptions", runners[i].Target)
	}
	i := slices.IndexFunc(runners, func(r Runner) bool { return r.Transcribes })
	if i < 0 {
		return
	}
	if s.Audio == nil {
		errs.Add(path+".audio", "is required by %s: set audio.seconds or audio.dataset", runners[i].Target)
	}
}
