// A burst's conversations by turn (TTFT, prompt and cached tokens) and what
// the engine's prefix cache served.

package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// TurnSummary is one turn of a conversation scenario's sessions: with a
// working prefix cache, TTFT falls after turn 1 although the prompt grows.
type TurnSummary struct {
	Scenario  string        `json:"scenario"`
	Turn      int           `json:"turn"`
	Requests  int           `json:"requests"`  // sent, cancelled ones excepted
	Succeeded int           `json:"succeeded"` // of which successful: the figures below are theirs
	TTFT      stats.Summary `json:"ttft"`
	// PromptTokens is the mean prompt the server counted (requested where it
	// reported none); CachedTokens the mean its prefix cache served, null
	// when it reported none.
	PromptTokens *float64 `json:"prompt_tokens_mean"`
	CachedTokens *float64 `json:"cached_tokens_mean"`
}

// PromptCache is what the engine's prefix cache served the successful
// requests whose usage said (prompt_tokens_details.cached_tokens).
type PromptCache struct {
	Requests     int     `json:"requests"` // successful requests whose usage reported it
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	HitRatio     float64 `json:"hit_ratio"` // cached / prompt tokens
}

// PromptCacheOf sums the cache reports of results; nil without one.
func PromptCacheOf(results []*prober.Result) *PromptCache {
	var c PromptCache
	for _, res := range results {
		if res.Outcome == prober.OutcomeSuccess && res.CachedReported {
			c.Requests++
			c.PromptTokens += cmp.Or(res.PromptTokensReported, res.PromptTokensRequested)
			c.CachedTokens += res.CachedPromptTokens
		}
	}
	if c.Requests == 0 {
		return nil
	}
	if c.PromptTokens > 0 {
		c.HitRatio = float64(c.CachedTokens) / float64(c.PromptTokens)
	}
	return &c
}

// TurnsOf summarises the conversation turns among results by scenario and
// turn; nil when there are none.
func TurnsOf(results []*prober.Result) []TurnSummary {
	type key struct {
		scenario string
		turn     int
	}
	type acc struct {
		requests, ok, cachedN int
		ttft                  []float64
		prompt, cached        int
	}
	by := map[key]*acc{}
	for _, res := range results {
		if res.Turn == 0 || res.Outcome == prober.OutcomeCancelled {
			continue
		}
		k := key{res.Scenario, res.Turn}
		a := by[k]
		if a == nil {
			a = &acc{}
			by[k] = a
		}
		a.requests++
		if res.Outcome != prober.OutcomeSuccess {
			continue
		}
		a.ok++
		a.ttft = append(a.ttft, res.TTFT.Seconds())
		a.prompt += cmp.Or(res.PromptTokensReported, res.PromptTokensRequested)
		if res.CachedReported {
			a.cachedN++
			a.cached += res.CachedPromptTokens
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := make([]TurnSummary, 0, len(by))
	for k, a := range by {
		out = append(out, TurnSummary{
			Scenario: k.scenario, Turn: k.turn, Requests: a.requests, Succeeded: a.ok, TTFT: stats.Summarize(a.ttft),
			PromptTokens: orNA(float64(a.prompt)/float64(max(a.ok, 1)), a.ok > 0),
			CachedTokens: orNA(float64(a.cached)/float64(max(a.cachedN, 1)), a.cachedN > 0),
		})
	}
	slices.SortFunc(out, func(x, y TurnSummary) int { return cmp.Or(strings.Compare(x.Scenario, y.Scenario), x.Turn-y.Turn) })
	return out
}
