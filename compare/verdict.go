package compare

import (
	"github.com/llmprobe/llmprobe/decide"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// goodput compares the rounds' shares of good requests, by tol points.
func goodput(rounds []Round, tol float64) decide.Metric {
	good, judged := make([][2]int, len(rounds)), make([][2]int, len(rounds))
	for k, r := range rounds {
		for s, run := range []Run{r.Baseline, r.Candidate} {
			good[k][s], judged[k][s] = goodOf(run.Measured)
		}
	}
	return decide.Goodput(good, judged, tol)
}

// goodOf counts run's good requests of those judged: cancelled ones say
// nothing of the target; not sent ones count, as not good.
func goodOf(run report.Run) (good, judged int) {
	for _, res := range run.Results {
		if res.Outcome == prober.OutcomeCancelled {
			continue
		}
		judged++
		if res.Good {
			good++
		}
	}
	for _, n := range run.NotSent {
		judged += n
	}
	return good, judged
}
