// What the APIs that answer in one JSON body without tokens, embeddings and
// rerank, share: their body, the bound on an answer, its decoding and its
// problems' reasons.

package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// answerProblem is an answer that failed a check; Reason is its bounded code.
type answerProblem struct {
	Reason, Text string
}

func (p *answerProblem) Error() string { return p.Text }

// pooledReasons lists every reason a Problem may carry.
var pooledReasons = []string{reasonEmbeddingsNotJSON, reasonEmbeddingsCount, reasonEmbeddingsDimension, reasonEmbeddingsNotFinite,
	reasonRerankNotJSON, reasonRerankCount, reasonRerankIndex, reasonRerankNotFinite}

// maxBody bounds what one answer makes the prober hold: 512 inputs of
// 4,096 dimensions written as JSON text.
const maxBody = 64 << 20

// pooledBody is the JSON body of an embeddings or rerank request of api:
// fields over extra (the target's extra_body), and its payload, which asks
// for n inputs of a prompt of r.
func pooledBody(api config.API, fields, extra map[string]any, r Request, n, promptTokens int) (payload, error) {
	body := make(map[string]any, len(fields)+len(extra))
	maps.Copy(body, extra)
	maps.Copy(body, fields)
	b, err := json.Marshal(body)
	if err != nil {
		return payload{}, fmt.Errorf("%s request body: %w", api, err)
	}
	return payload{
		open: func() io.Reader { return bytes.NewReader(b) }, size: int64(len(b)),
		asks: fmt.Sprintf("%d inputs, prompt_tokens~%d", n, r.Prompt.RequestedTokens), promptTokens: promptTokens,
	}, nil
}

// readPooled reads an embeddings or rerank answer whole, at most maxBody bytes.
func readPooled(r io.Reader) ([]byte, error) {
	raw, err := readValue(r, maxBody)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	return raw, nil
}

// notStreamed is the event of a pooled API, whose answers are never streamed.
func notStreamed(api config.API) error {
	return fmt.Errorf("%s answers are not streamed", api)
}

// decode reads raw into v, or says why it is not JSON of api's shape.
func decode(raw []byte, v any, reason string, api config.API) error {
	if len(raw) > maxBody {
		return &answerProblem{reason, fmt.Sprintf("answer over %d MiB", maxBody>>20)}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &answerProblem{reason, fmt.Sprintf("answer is not JSON of the %s shape: %v", api, err)}
	}
	return nil
}

// excerpt is a JSON value as a reason quotes it, at most 32 bytes.
func excerpt(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "":
		return "missing"
	case len(s) > 32:
		return s[:32] + "…"
	}
	return s
}

// tokens is a pooledUsage's prompt tokens, else its total tokens.
type pooledUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func (u *pooledUsage) tokens() int {
	if u == nil {
		return 0
	}
	if u.PromptTokens > 0 {
		return u.PromptTokens
	}
	return max(u.TotalTokens, 0)
}
