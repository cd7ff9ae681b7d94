// The APIs that answer in one JSON body without tokens, embeddings and rerank:
// each request's body and the checks its answer must pass.

package prober

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// IsPooled reports whether api is one of this package's.
func IsPooled(api config.API) bool { return api == config.APIEmbeddings || api == config.APIRerank }

// PooledWire is how one target speaks its pooled API: the API, and whether the
// server is TEI (text-embeddings-inference), which ranks on its own /rerank
// in its own shapes; its embeddings are OpenAI's.
type PooledWire struct {
	API config.API
	TEI bool
}

func (w PooledWire) teiRerank() bool { return w.TEI && w.API == config.APIRerank }

// Path is the API's endpoint under the server's root.
func (w PooledWire) Path() string {
	switch {
	case w.teiRerank():
		return "/rerank"
	case w.API == config.APIRerank:
		return "/v1/rerank"
	}
	return "/v1/embeddings"
}

// PooledInputs is how many texts a request of s sends besides a query: its
// inputs, or the documents a rerank target ranks.
func PooledInputs(api config.API, s config.Scenario) int {
	if api == config.APIRerank {
		return s.DocumentCount()
	}
	return s.InputCount()
}

// PooledPromptTokens is the prompt tokens a request of s asks to pool, its prompt
// being each tokens long: every input, or the query and every document.
func PooledPromptTokens(api config.API, s config.Scenario, each int) int {
	n := PooledInputs(api, s)
	switch {
	case api != config.APIRerank:
		return n * each
	case s.DocumentTokens > 0:
		return each + n*s.DocumentTokens
	}
	return (n + 1) * each
}

// Body is the request's JSON for prompt text (the builder's Text and
// Tail), with extra (the target's extra_body) beneath what it sets. TEI
// serves one model and its /rerank names none.
func (w PooledWire) Body(model, text string, s config.Scenario, extra map[string]any) ([]byte, error) {
	body := make(map[string]any, 3+len(extra))
	for k, v := range extra {
		body[k] = v
	}
	switch {
	case w.teiRerank():
		body["query"] = text
		body["texts"] = documents(text, s.DocumentCount(), s.DocumentTokens)
	case w.API == config.APIRerank:
		body["model"] = model
		body["query"] = text
		body["documents"] = documents(text, s.DocumentCount(), s.DocumentTokens)
	default:
		body["model"] = model
		body["input"] = inputs(text, s.InputCount())
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s request body: %w", w.API, err)
	}
	return b, nil
}

// PooledAnswer is what a checked answer reports.
type PooledAnswer struct {
	// Count is the vectors or results; Dimension the vectors' length (0
	// for rerank).
	Count, Dimension int
	// Tokens is the usage's prompt tokens (else total tokens); 0 for none.
	Tokens int
}

// AnswerProblem is an answer that failed a check; Reason is its bounded code.
type AnswerProblem struct {
	Reason, Text string
}

func (p *AnswerProblem) Error() string { return p.Text }

// PooledReasons lists every reason a Problem may carry.
var PooledReasons = []string{ReasonEmbeddingsNotJSON, ReasonEmbeddingsCount, ReasonEmbeddingsDimension, ReasonEmbeddingsNotFinite,
	ReasonRerankNotJSON, ReasonRerankCount, ReasonRerankIndex, ReasonRerankNotFinite}

// maxBody bounds what one answer makes the prober hold: 512 inputs of
// 4,096 dimensions written as JSON text.
const maxBody = 64 << 20

// Read reads and checks the answer to a request of n texts; h is its
// header, where TEI counts the tokens of its /rerank.
func (w PooledWire) Read(r io.Reader, h http.Header, n int) (PooledAnswer, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return PooledAnswer{}, fmt.Errorf("reading the answer: %w", err)
	}
	switch {
	case w.teiRerank():
		a, err := readRerankTEI(raw, n)
		if t, perr := strconv.Atoi(h.Get("X-Compute-Tokens")); perr == nil && t > 0 {
			a.Tokens = t
		}
		return a, err
	case w.API == config.APIRerank:
		return readRerank(raw, n)
	}
	return readEmbeddings(raw, n)
}

// decode reads raw into v, or says why it is not JSON of api's shape.
func decode(raw []byte, v any, reason string, api config.API) error {
	if len(raw) > maxBody {
		return &AnswerProblem{reason, fmt.Sprintf("answer over %d MiB", maxBody>>20)}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &AnswerProblem{reason, fmt.Sprintf("answer is not JSON of the %s shape: %v", api, err)}
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

// tokens is a usage's prompt tokens, else its total tokens.
type usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func (u *usage) tokens() int {
	if u == nil {
		return 0
	}
	if u.PromptTokens > 0 {
		return u.PromptTokens
	}
	return max(u.TotalTokens, 0)
}
