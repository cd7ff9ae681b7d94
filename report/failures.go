package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

// FailureGroup is one distinct way requests failed, with how often and when.
type FailureGroup struct {
	Outcome prober.Outcome `json:"outcome"`
	Phase   string         `json:"phase"`
	Reason  string         `json:"reason"`
	Status  int            `json:"status,omitempty"`
	Count   int            `json:"count"`
	First   time.Time      `json:"first"`
	Last    time.Time      `json:"last"`
	// Example is the first such request's error text.
	Example string `json:"example"`
}

// Text is the group's failure in the line every surface prints (see
// prober.FailureText).
func (g FailureGroup) Text() string { return prober.FailureText(g.Phase, g.Reason, g.Example) }

// FailedRequest is one failed request with its timeline, for reading later.
type FailedRequest struct {
	// At is when it was due, in seconds from the start of the measured part.
	At      float64        `json:"at"`
	Outcome prober.Outcome `json:"outcome"`
	Phase   string         `json:"phase"`
	Reason  string         `json:"reason"`
	Status  int            `json:"status,omitempty"`
	Error   string         `json:"error"`
	Body    string         `json:"body,omitempty"`
	Log     []string       `json:"log"`
}

// Bounds on the failures a report keeps: the kinds of failure, and the
// failed requests kept whole (MaxFailedSamples, which a merged report
// picks from its shards' too).
const (
	maxFailureGroups = 10
	MaxFailedSamples = 10
)

// failures groups the failed results by (outcome, phase, reason, status),
// most frequent first, and keeps a few of them, spread over the run, with
// their logs.
func failures(results []*prober.Result, start time.Time) ([]FailureGroup, []FailedRequest) {
	type key struct {
		outcome       prober.Outcome
		phase, reason string
		status        int
	}
	groups := map[key]*FailureGroup{}
	var failed []*prober.Result
	for _, r := range results {
		if r.Outcome == prober.OutcomeSuccess {
			continue
		}
		failed = append(failed, r)
		k := key{r.Outcome, r.Phase, r.Reason, r.HTTPStatus}
		g := groups[k]
		if g == nil {
			g = &FailureGroup{Outcome: r.Outcome, Phase: r.Phase, Reason: r.Reason, Status: r.HTTPStatus, First: r.Sched.UTC(), Example: r.Error}
			groups[k] = g
		}
		g.Count++
		g.Last = r.Sched.UTC()
	}
	out := make([]FailureGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b FailureGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), a.First.Compare(b.First), cmp.Compare(a.Reason, b.Reason))
	})
	if len(out) > maxFailureGroups {
		out = out[:maxFailureGroups]
	}
	var samples []FailedRequest
	for i := range min(len(failed), MaxFailedSamples) {
		r := failed[i*len(failed)/min(len(failed), MaxFailedSamples)]
		samples = append(samples, FailedRequest{
			At: round6(r.Sched.Sub(start).Seconds()), Outcome: r.Outcome, Phase: r.Phase, Reason: r.Reason,
			Status: r.HTTPStatus, Error: r.Error, Body: r.Body, Log: r.Log.Lines(),
		})
	}
	return out, samples
}

// notSent lists the requests that were planned and not sent, by reason.
func notSent(byReason map[string]int) []NotSent {
	var out []NotSent
	for reason, n := range byReason {
		if n > 0 {
			out = append(out, NotSent{Reason: reason, Count: n})
		}
	}
	slices.SortFunc(out, func(a, b NotSent) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason)) })
	return out
}
