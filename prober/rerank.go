package prober

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
	Results []rank `json:"results"`
	Usage   *usage `json:"usage"`
}

type rank struct {
	Index *int            `json:"index"`
	Score json.RawMessage `json:"relevance_score"`
}

func readRerank(raw []byte, n int) (PooledAnswer, error) {
	var a rerankAnswer
	if err := decode(raw, &a, ReasonRerankNotJSON, config.APIRerank); err != nil {
		return PooledAnswer{}, err
	}
	return checkRanks(a.Results, n, a.Usage.tokens(), "relevance_score")
}

// readRerankTEI reads TEI's answer: a bare list of {index, score}.
func readRerankTEI(raw []byte, n int) (PooledAnswer, error) {
	var list []struct {
		Index *int            `json:"index"`
		Score json.RawMessage `json:"score"`
	}
	if err := decode(raw, &list, ReasonRerankNotJSON, config.APIRerank); err != nil {
		return PooledAnswer{}, err
	}
	ranks := make([]rank, len(list))
	for i, r := range list {
		ranks[i] = rank{r.Index, r.Score}
	}
	return checkRanks(ranks, n, 0, "score")
}

// checkRanks checks n ranks: every index once, every score (named
// scoreField in the answer) finite.
func checkRanks(results []rank, n, tokens int, scoreField string) (PooledAnswer, error) {
	if len(results) != n {
		return PooledAnswer{}, &AnswerProblem{ReasonRerankCount, fmt.Sprintf("%d of %d results", len(results), n)}
	}
	seen := make([]bool, n)
	for i, res := range results {
		switch {
		case res.Index == nil:
			return PooledAnswer{}, &AnswerProblem{ReasonRerankIndex, fmt.Sprintf("results[%d] has no index", i)}
		case *res.Index < 0 || *res.Index >= n:
			return PooledAnswer{}, &AnswerProblem{ReasonRerankIndex, fmt.Sprintf("results[%d].index %d is outside [0, %d)", i, *res.Index, n)}
		case seen[*res.Index]:
			return PooledAnswer{}, &AnswerProblem{ReasonRerankIndex, fmt.Sprintf("results[%d].index %d repeats", i, *res.Index)}
		}
		seen[*res.Index] = true
		var f float64
		if err := json.Unmarshal(res.Score, &f); err != nil || len(res.Score) == 0 || string(res.Score) == "null" || math.IsInf(f, 0) {
			return PooledAnswer{}, &AnswerProblem{ReasonRerankNotFinite, fmt.Sprintf("%s %s at results[%d]", scoreField, excerpt(res.Score), i)}
		}
	}
	return PooledAnswer{Count: n, Tokens: tokens}, nil
}
