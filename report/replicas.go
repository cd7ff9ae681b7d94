package report

import (
	"cmp"
	"slices"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// ReplicaSummary is what the requests one replica answered came to, as the
// target's replicas header named it: whether a slow run is the fleet or
// one pod.
type ReplicaSummary struct {
	Replica   string        `json:"replica"`
	Requests  int           `json:"requests"`  // answered, cancelled ones excepted
	Succeeded int           `json:"succeeded"` // the figures below are theirs
	TTFT      stats.Summary `json:"ttft"`
	E2E       stats.Summary `json:"e2e"`
}

// ReplicasOf summarises results by the replica that answered, configured
// replicas by name and "other" last; nil when no answer named one.
func ReplicasOf(results []*prober.Result) []ReplicaSummary {
	type acc struct {
		requests, ok int
		ttft, e2e    []float64
	}
	by := map[string]*acc{}
	for _, res := range results {
		if res.Replica == "" || res.Outcome == prober.OutcomeCancelled {
			continue
		}
		a := by[res.Replica]
		if a == nil {
			a = &acc{}
			by[res.Replica] = a
		}
		a.requests++
		if res.Outcome != prober.OutcomeSuccess {
			continue
		}
		a.ok++
		a.e2e = append(a.e2e, res.E2E.Seconds())
		if res.FirstTokenSeen() {
			a.ttft = append(a.ttft, res.TTFT.Seconds())
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := make([]ReplicaSummary, 0, len(by))
	for name, a := range by {
		out = append(out, ReplicaSummary{Replica: name, Requests: a.requests, Succeeded: a.ok, TTFT: stats.Summarize(a.ttft), E2E: stats.Summarize(a.e2e)})
	}
	slices.SortFunc(out, func(x, y ReplicaSummary) int {
		if (x.Replica == config.ReplicaOther) != (y.Replica == config.ReplicaOther) {
			if x.Replica == config.ReplicaOther {
				return 1
			}
			return -1
		}
		return cmp.Compare(x.Replica, y.Replica)
	})
	return out
}
