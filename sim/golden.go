package sim

import "github.com/llmprobe/llmprobe/sim/internal/request"

// goldenAnswer is the golden set's answer to req as tokens, cut to
// maxTokens, and whether it ended within them (finish_reason stop); nil
// without a golden set or for a prompt it does not hold.
func (e *Engine) goldenAnswer(req *request.Generate, maxTokens int) ([]string, bool) {
	if e.golden == nil {
		return nil, false
	}
	tokens := e.golden.Answer(req.Texts())
	if len(tokens) > maxTokens {
		return tokens[:maxTokens], false
	}
	return tokens, tokens != nil
}

// finishReason is why s's answer ended: its own end, or max_tokens.
func (s *sequence) finishReason() string {
	if s.stop {
		return "stop"
	}
	return "length"
}
