// What a report shows of the engine's prefix cache, in the words every
// rendering uses: the cached-token line, and what the conversation turns show,
// so that no heading claims a cache the data does not show.

package render

import (
	"fmt"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// sources names where each engine reports cached prompt tokens, for the
// line that has none.
const sources = "vLLM reports them with --enable-prompt-tokens-details, SGLang with --enable-cache-report, llama.cpp and OpenAI by default"

// PrefixCacheLine says in one line what the engine's prefix cache served.
func PrefixCacheLine(r *report.Report) string {
	c := r.PromptCache
	if c == nil {
		return "prefix cache: n/a (the engine's usage reported no cached prompt tokens; " + sources + ")"
	}
	return fmt.Sprintf("prefix cache: %.1f%% of prompt tokens served from the engine's cache (%d of %d, its usage over %d of %d successful requests)",
		100*c.HitRatio, c.CachedTokens, c.PromptTokens, c.Requests, r.Outcomes[prober.OutcomeSuccess])
}

// TurnsHeading heads the by-turn table with what it shows of the prefix cache.
func TurnsHeading(turns []report.TurnSummary) string {
	if f := finding(turns); f != "" {
		return "Conversations, TTFT by turn (" + f + ")"
	}
	return "Conversations, TTFT by turn"
}

// finding says what the by-turn figures show of the prefix cache serving a
// conversation's history, for the table's heading; "" when they show
// nothing either way (no later turn succeeded). The cached tokens decide
// where the engine reports them: more than turn 1's (whose shared prefix
// may be cached too) from turn 2 on is the history served. Without them,
// TTFT's p50 at every later turn against turn 1's says what it can.
func finding(turns []report.TurnSummary) string {
	var f findings
	for _, t := range turns {
		f.add(turns, t)
	}
	cached := "the engine reported no cached tokens"
	switch {
	case f.reported && f.most == 0:
		cached = "0 cached tokens from turn 2"
	case f.reported:
		cached = "no more cached tokens from turn 2 than at turn 1"
	}
	switch {
	case f.served:
		return "cached tokens grew from turn 2: the prefix cache serves the history"
	case f.rose && !f.fell:
		return cached + "; TTFT rose with the history: the prefix cache does not serve it"
	case f.fell && !f.rose:
		return cached + "; TTFT fell after turn 1 although the prompt grew"
	case f.rose || f.reported:
		return cached
	}
	return ""
}

// findings are what the later turns show against their scenario's turn 1.
type findings struct {
	reported, served bool    // cached tokens reported; more than turn 1's
	most             float64 // the most cached tokens of a later turn
	rose, fell       bool    // TTFT p50 above turn 1's; at or below it
}

func (f *findings) add(turns []report.TurnSummary, t report.TurnSummary) {
	if t.Turn < 2 {
		return
	}
	var first *report.TurnSummary
	for i := range turns {
		if turns[i].Scenario == t.Scenario && turns[i].Turn == 1 {
			first = &turns[i]
		}
	}
	if t.CachedTokens != nil {
		f.reported = true
		base := 0.0
		if first != nil && first.CachedTokens != nil {
			base = *first.CachedTokens
		}
		f.served = f.served || *t.CachedTokens > base
		f.most = max(f.most, *t.CachedTokens)
	}
	if first == nil || first.TTFT.Count == 0 || t.TTFT.Count == 0 {
		return
	}
	if t.TTFT.P50 > first.TTFT.P50 {
		f.rose = true
	} else {
		f.fell = true
	}
}
