package config

import (
	"slices"
)

// Streamed reports whether a request of s asks for a streamed answer: the
// default, unless the scenario says stream: false.
func (s *Scenario) Streamed() bool { return s.Stream == nil || *s.Stream }

// Images are the synthetic images each chat request of a scenario sends
// after its text: made per request, so no cache holds them.
type Images struct {
	Count  int `yaml:"count"`
	Width  int `yaml:"width"`
	Height int `yaml:"height"`
}

// Bounds of images. 16 images per request is more than engines allow by
// default (vLLM's --limit-mm-per-prompt) yet bounds a request's body; 16 px
// is one vision patch (14 px in most encoders), 2048 px past the native
// resolution of common vision encoders, which scale larger images down.
const (
	MaxImages    = 16
	MinImageSide = 16
	MaxImageSide = 2048
)

// validateModes checks stream and images: an unstreamed answer has one
// latency, its e2e, so objectives of its tokens' timing are refused; images
// ride in a user message a conversation would have to send again.
func (s *Scenario) validateModes(path string, errs *FieldErrors) {
	if !s.Streamed() {
		for _, o := range s.SLO.Objectives() {
			if o.Name != ObjectiveE2E {
				errs.Add(path+".slo."+o.Name, "does not apply to an unstreamed answer (stream: false): its one latency is e2e")
			}
		}
	}
	im := s.Images
	if im == nil {
		return
	}
	errs.IntWithin(path+".images.count", im.Count, 1, MaxImages, "")
	errs.IntWithin(path+".images.width", im.Width, MinImageSide, MaxImageSide, "px")
	errs.IntWithin(path+".images.height", im.Height, MinImageSide, MaxImageSide, "px")
	if s.Conversation != nil {
		errs.Add(path+".images", "cannot be used with conversation: each turn would send every earlier image again")
	}
}

// Runner is a target that runs a scenario, as the scenario's checks of
// its fields against the target's API need it.
type Runner struct {
	// Target names it in an error: `embeddings target "e"`.
	Target string
	// Pooled: its answers have no output tokens (embeddings, rerank);
	// Chat: it speaks the chat API; Tools: it takes tools (chat, the
	// Responses and Messages APIs); Formats: response formats (chat, the
	// Responses API); Transcribes: it uploads audio (transcriptions).
	Pooled, Chat, Tools, Formats, Transcribes bool
}

// RefuseOn adds to errs, for s at path, each field that does not apply to
// a target that runs it, once, naming the first such target: what judges
// output tokens or answer text on an embeddings or rerank target, which
// answers none, images anywhere but the chat API, and tools and response
// formats on an API that takes none.
func (s *Scenario) RefuseOn(path string, runners []Runner, errs *FieldErrors) {
	s.refuseAudio(path, runners, errs)
	if i := slices.IndexFunc(runners, func(r Runner) bool { return r.Pooled }); i >= 0 {
		s.refuseOutput(path, runners[i].Target, errs)
	}
	if i := slices.IndexFunc(runners, func(r Runner) bool { return !r.Chat }); i >= 0 && s.Images != nil {
		errs.Add(path+".images", "does not apply to %s: images are sent as image_url parts of a chat message (api: chat)", runners[i].Target)
	}
	if i := slices.IndexFunc(runners, func(r Runner) bool { return !r.Tools }); i >= 0 {
		s.Structured.Refuse(path, runners[i].Target, errs)
	} else if i := slices.IndexFunc(runners, func(r Runner) bool { return !r.Formats }); i >= 0 && s.Structured.ResponseFormat != nil {
		errs.Add(path+".response_format", "does not apply to %s: the Messages API takes tools but no response_format (api: chat and responses take it)", runners[i].Target)
	}
}

// refuseOutput adds to errs each field of s that judges output tokens or
// answer text, or asks for a stream, on target, which answers no tokens.
func (s *Scenario) refuseOutput(path, target string, errs *FieldErrors) {
	var fields []string
	for _, o := range s.SLO.Objectives() {
		if o.Name != ObjectiveE2E {
			fields = append(fields, "slo."+o.Name)
		}
	}
	if s.Quality != nil {
		fields = append(fields, "quality")
	}
	if s.Golden != nil {
		fields = append(fields, "golden")
	}
	if s.Conversation != nil {
		fields = append(fields, "conversation")
	}
	for _, f := range fields {
		errs.Add(path+"."+f, "does not apply to %s, which answers no output tokens", target)
	}
	if s.Stream != nil {
		errs.Add(path+".stream", "does not apply to %s, whose answer is always one body", target)
	}
}
