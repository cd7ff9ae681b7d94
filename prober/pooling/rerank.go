package pooling

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

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
	ReasonRerankNotJSON   = "rerank_not_json"
	ReasonRerankCount     = "rerank_count"
	ReasonRerankIndex     = "rerank_index"
	ReasonRerankNotFinite = "rerank_not_finite"
)

type rerankAnswer struct {
	Results []struct {
		Index *int            `json:"index"`
		Score json.RawMessage `json:"relevance_score"`
	} `json:"results"`
	Usage *usage `json:"usage"`
}

func readRerank(raw []byte, n int) (Answer, error) {
	var a rerankAnswer
	if err := decode(raw, &a, ReasonRerankNotJSON, config.APIRerank); err != nil {
		return Answer{}, err
	}
	if len(a.Results) != n {
		return Answer{}, &Problem{ReasonRerankCount, fmt.Sprintf("%d of %d results", len(a.Results), n)}
	}
	seen := make([]bool, n)
	for i, res := range a.Results {
		switch {
		case res.Index == nil:
			return Answer{}, &Problem{ReasonRerankIndex, fmt.Sprintf("results[%d] has no index", i)}
		case *res.Index < 0 || *res.Index >= n:
			return Answer{}, &Problem{ReasonRerankIndex, fmt.Sprintf("results[%d].index %d is outside [0, %d)", i, *res.Index, n)}
		case seen[*res.Index]:
			return Answer{}, &Problem{ReasonRerankIndex, fmt.Sprintf("results[%d].index %d repeats", i, *res.Index)}
		}
		seen[*res.Index] = true
		var f float64
		if err := json.Unmarshal(res.Score, &f); err != nil || len(res.Score) == 0 || string(res.Score) == "null" || math.IsInf(f, 0) {
			return Answer{}, &Problem{ReasonRerankNotFinite, fmt.Sprintf("relevance_score %s at results[%d]", excerpt(res.Score), i)}
		}
	}
	return Answer{Count: n, Tokens: a.Usage.tokens()}, nil
}
