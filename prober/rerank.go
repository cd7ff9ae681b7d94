package prober

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
)

// rerank is a reranker: a query and numbered documents to rank, answered
// in one body with a finite score for every document, each once. It comes
// in two shapes: the OpenAI-style /v1/rerank (vLLM, SGLang, llama.cpp, its
// results and usage), and Hugging Face TEI's own /rerank (texts, a bare
// list, its tokens in a header), spoken once the server said it is TEI.
type rerank struct{}

func (rerank) path(d dialect) string {
	if d.tei {
		return "/rerank"
	}
	return "/v1/rerank"
}

func (rerank) traits() traits { return traits{dialects: true} }

// body names the model, except to TEI, which serves one and names none.
func (rerank) body(model string, r Request, extra map[string]any, d dialect) (payload, error) {
	s, text := r.Scenario, r.Prompt.Text+r.Prompt.Tail
	n := s.DocumentCount()
	fields := map[string]any{"query": text}
	if d.tei {
		fields["texts"] = documents(text, n, s.DocumentTokens)
	} else {
		fields["model"], fields["documents"] = model, documents(text, n, s.DocumentTokens)
	}
	return pooledBody(config.APIRerank, fields, extra, r, n, rerankPromptTokens(s, r.Prompt.RequestedTokens))
}

// rerankPromptTokens is the prompt tokens a request of s asks to rank, its
// prompt being each tokens long: the query and every document.
func rerankPromptTokens(s config.Scenario, each int) int {
	if s.DocumentTokens > 0 {
		return each + s.DocumentCount()*s.DocumentTokens
	}
	return (s.DocumentCount() + 1) * each
}

func (rerank) event(sse.Event, *streamChunk) (bool, string, error) {
	return false, reasonMalformed, notStreamed(config.APIRerank)
}

// whole reads TEI's answer with the tokens it counts in X-Compute-Tokens.
func (rerank) whole(body io.Reader, h http.Header, r Request, _ int, d dialect) (*answer, error) {
	raw, err := readPooled(body)
	if err != nil {
		return nil, err
	}
	n := r.Scenario.DocumentCount()
	if !d.tei {
		return readRerank(raw, n)
	}
	a, err := readRerankTEI(raw, n)
	if t, perr := strconv.Atoi(h.Get("X-Compute-Tokens")); perr == nil && t > 0 && a != nil {
		a.InputTokens = t
	}
	return a, err
}

// documents are n numbered documents of about tokens words each, cut from
// (or repeating) the query's words, so each request's differ by its nonce.
func documents(query string, n, tokens int) []string {
	words := strings.Fields(query)
	if len(words) == 0 {
		words = []string{"document"}
	}
	if tokens <= 0 {
		tokens = len(words)
	}
	out := make([]string, n)
	for i := range out {
		doc := make([]string, 0, tokens)
		for j := range tokens - 1 {
			doc = append(doc, words[(i+j)%len(words)])
		}
		out[i] = fmt.Sprintf("%d. %s", i+1, strings.Join(doc, " "))
	}
	return out
}

// Reasons of a failed rerank answer.
const (
	reasonRerankNotJSON   = "rerank_not_json"
	reasonRerankCount     = "rerank_count"
	reasonRerankIndex     = "rerank_index"
	reasonRerankNotFinite = "rerank_not_finite"
)

type rerankAnswer struct {
	Results []rank       `json:"results"`
	Usage   *pooledUsage `json:"usage"`
}

type rank struct {
	Index *int            `json:"index"`
	Score json.RawMessage `json:"relevance_score"`
}

func readRerank(raw []byte, n int) (*answer, error) {
	var a rerankAnswer
	if err := decode(raw, &a, reasonRerankNotJSON, config.APIRerank); err != nil {
		return nil, err
	}
	return checkRanks(a.Results, n, a.Usage.tokens(), "relevance_score")
}

// readRerankTEI reads TEI's answer: a bare list of {index, score}.
func readRerankTEI(raw []byte, n int) (*answer, error) {
	var list []struct {
		Index *int            `json:"index"`
		Score json.RawMessage `json:"score"`
	}
	if err := decode(raw, &list, reasonRerankNotJSON, config.APIRerank); err != nil {
		return nil, err
	}
	ranks := make([]rank, len(list))
	for i, r := range list {
		ranks[i] = rank{r.Index, r.Score}
	}
	return checkRanks(ranks, n, 0, "score")
}

// checkRanks checks n ranks: every index once, every score (named
// scoreField in the answer) finite.
func checkRanks(results []rank, n, tokens int, scoreField string) (*answer, error) {
	if len(results) != n {
		return nil, &answerProblem{reasonRerankCount, fmt.Sprintf("%d of %d results", len(results), n)}
	}
	seen := make([]bool, n)
	for i, res := range results {
		switch {
		case res.Index == nil:
			return nil, &answerProblem{reasonRerankIndex, fmt.Sprintf("results[%d] has no index", i)}
		case *res.Index < 0 || *res.Index >= n:
			return nil, &answerProblem{reasonRerankIndex, fmt.Sprintf("results[%d].index %d is outside [0, %d)", i, *res.Index, n)}
		case seen[*res.Index]:
			return nil, &answerProblem{reasonRerankIndex, fmt.Sprintf("results[%d].index %d repeats", i, *res.Index)}
		}
		seen[*res.Index] = true
		var f float64
		if err := json.Unmarshal(res.Score, &f); err != nil || len(res.Score) == 0 || string(res.Score) == "null" || math.IsInf(f, 0) {
			return nil, &answerProblem{reasonRerankNotFinite, fmt.Sprintf("%s %s at results[%d]", scoreField, excerpt(res.Score), i)}
		}
	}
	return &answer{Inputs: n, InputTokens: tokens}, nil
}
