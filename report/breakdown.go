package report

import (
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// TTFTBreakdown splits the TTFT of a burst's successful requests into its
// components (prober.Components): where the wait went.
type TTFTBreakdown struct {
	// Requests is how many successful requests were split; EngineTimings
	// counts those whose engine reported its own timings, by source.
	Requests      int                `json:"requests"`
	EngineTimings map[string]int     `json:"engine_timings"`
	Components    []ComponentSummary `json:"components"`
}

// ComponentSummary is one component's figures over the requests that had
// it, and its share of their whole TTFT.
type ComponentSummary struct {
	Component string `json:"component"`
	// Summary is in seconds, as the report's latencies are.
	Summary stats.Summary `json:"summary"`
	// Share is the component's sum over the sum of TTFT of every split
	// request: the shares of a report add up to 1.
	Share float64 `json:"share"`
}

// newTTFTBreakdown summarises the split of every successful request that
// had one; nil when none had.
func newTTFTBreakdown(results []*prober.Result) *TTFTBreakdown {
	samples := map[string][]float64{}
	sums := map[string]float64{}
	b := &TTFTBreakdown{EngineTimings: map[string]int{}}
	var total float64
	for _, res := range results {
		if res.Outcome != prober.OutcomeSuccess || !res.FirstTokenSeen() || len(res.TTFTParts) == 0 {
			continue
		}
		b.Requests++
		total += res.TTFT.Seconds()
		if res.Engine != nil {
			b.EngineTimings[res.Engine.Source]++
		}
		for _, p := range res.TTFTParts {
			samples[p.Component] = append(samples[p.Component], p.D.Seconds())
			sums[p.Component] += p.D.Seconds()
		}
	}
	if b.Requests == 0 {
		return nil
	}
	for _, c := range prober.Components {
		if len(samples[c]) == 0 {
			continue
		}
		share := 0.0
		if total > 0 {
			share = sums[c] / total
		}
		b.Components = append(b.Components, ComponentSummary{Component: c, Summary: stats.Summarize(samples[c]), Share: share})
	}
	return b
}
