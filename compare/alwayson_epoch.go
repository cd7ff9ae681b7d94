package compare

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/prober"
)

// DecisionHold is the least time a decision stays shown before its epoch
// may start afresh: long enough for a scrape, a rule's `for:` and a
// rollout's poll to see it.
const DecisionHold = 5 * time.Minute

// identity is what a side says it is; a change starts a new epoch, since
// the evidence gathered on the old engine says nothing of the new one.
type identity struct{ engine, version, model, server string }

func identityOf(c *prober.Client) identity {
	info := c.Info()
	return identity{engine: info.Engine, version: info.EngineVersion, model: c.Model(), server: info.Server}
}

func (id identity) fields() [4]string { return [4]string{id.engine, id.version, id.model, id.server} }

// changedFrom reports a field known before and now that differs. A field
// learned (unknown before) or lost (a failed read of the version) is no
// change: the engine is still the one it was.
func (id identity) changedFrom(old identity) bool {
	now, was := id.fields(), old.fields()
	for i := range now {
		if now[i] != "" && was[i] != "" && now[i] != was[i] {
			return true
		}
	}
	return false
}

// over keeps old's fields where id does not know them.
func (id identity) over(old identity) identity {
	now, was := id.fields(), old.fields()
	for i := range now {
		if now[i] == "" {
			now[i] = was[i]
		}
	}
	return identity{engine: now[0], version: now[1], model: now[2], server: now[3]}
}

// String is "vllm 0.12.0, model m" with what is known.
func (id identity) String() string {
	var parts []string
	if s := strings.TrimSpace(id.engine + " " + id.version); s != "" {
		parts = append(parts, s)
	} else if id.server != "" {
		parts = append(parts, id.server)
	}
	if id.model != "" {
		parts = append(parts, "model "+id.model)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// Why an epoch started, the `reason` of llmprobe_comparison_epochs_total.
const (
	reasonStart = iota
	reasonWindow
	reasonBaseline
	reasonCandidate
	numReasons
)

var reasonLabels = [numReasons]string{"start", "window", "baseline", "candidate"}

// heldDecision is a metric's decision and the figure it was taken on,
// kept until the epoch ends.
type heldDecision struct {
	decision int
	at       time.Time
	figure   decide.WindowFigure
}

// epoch is one stretch of an always-on comparison's pairs judged
// together: it starts afresh every window and when a side's identity
// changes, and its decisions hold until it ends.
type epoch struct {
	start      time.Time
	reason     int
	changed    string // what changed, for the baseline and candidate reasons
	base, cand identity
	pairs      []alwaysOnPair
	counts     [numMetrics]decide.SignCount
	held       [numMetrics]heldDecision
	// decidedAt is when the comparison's decision last became what it is
	// (zero while undecided).
	decidedAt time.Time
	decision  int
}

// judge is an always-on comparison's rule over time: the epochs, their
// pairs and their decisions. It is what the simulated days drive on a
// virtual clock, so it takes the time it is told.
type judge struct {
	window    time.Duration
	tolerance float64
	minPairs  int
	threshold float64 // log e-value a metric's evidence must reach

	ep     epoch
	epochs [numReasons]float64
}

func newJudge(window time.Duration, tolerance float64, minPairs, scenarios int) *judge {
	return &judge{window: window, tolerance: tolerance, minPairs: minPairs, threshold: decide.EpochThreshold(window, scenarios)}
}

// begin starts the first epoch.
func (j *judge) begin(now time.Time, base, cand identity) {
	j.ep = epoch{start: now, reason: reasonStart, base: base, cand: cand}
	j.epochs[reasonStart]++
}

// observe takes the sides' identities at now and starts a new epoch when
// one changed or the epoch has run its course; it reports whether it did.
func (j *judge) observe(now time.Time, base, cand identity) bool {
	ep := &j.ep
	reason, changed := -1, ""
	switch {
	case base.changedFrom(ep.base):
		reason, changed = reasonBaseline, ep.base.String()+" → "+base.over(ep.base).String()
	case cand.changedFrom(ep.cand):
		reason, changed = reasonCandidate, ep.cand.String()+" → "+cand.over(ep.cand).String()
	case now.Sub(ep.start) >= j.window && (ep.decision == decide.DecisionUndecided || now.Sub(ep.decidedAt) >= DecisionHold):
		reason = reasonWindow
	}
	if reason < 0 {
		ep.base, ep.cand = base.over(ep.base), cand.over(ep.cand) // learned, not changed
		return false
	}
	j.ep = epoch{start: now, reason: reason, changed: changed, base: base.over(ep.base), cand: cand.over(ep.cand)}
	j.epochs[reason]++
	return true
}

// add takes a pair both sides measured at now: it counts toward every
// metric it measured, and a metric not yet decided is decided on it. It
// reports whether a metric was.
func (j *judge) add(p alwaysOnPair, now time.Time) (decided bool) {
	ep := &j.ep
	ep.pairs = append(ep.pairs, p)
	changed := false
	for m := range numMetrics {
		b, c := p.base[m], p.cand[m]
		if !(b > 0 && c > 0) { // NaN or a zero that no ratio can use
			continue
		}
		ep.counts[m].Add(math.Log(c/b), j.tolerance)
		if ep.held[m].decision != decide.DecisionUndecided {
			continue
		}
		if d := decide.Anytime(ep.counts[m], j.threshold, j.minPairs); d != decide.DecisionUndecided {
			base, cand := ep.metric(m)
			ep.held[m] = heldDecision{decision: d, at: now, figure: decide.Median(metricNames[m], base, cand, j.threshold)}
			changed = true
		}
	}
	if changed {
		if d := ep.combined(); d != ep.decision {
			ep.decision, ep.decidedAt = d, now
		}
	}
	return changed
}

// combined is the comparison's decision from the metrics its pairs measured.
func (ep *epoch) combined() int {
	var ds []int
	for m := range numMetrics {
		if ep.counts[m].Above+ep.counts[m].Below > 0 {
			ds = append(ds, ep.held[m].decision)
		}
	}
	return decide.Combine(ds)
}

// metric is the epoch's pairs that measured metric m, as two sides.
func (ep *epoch) metric(m int) (base, cand []float64) {
	for _, p := range ep.pairs {
		if b, c := p.base[m], p.cand[m]; b > 0 && c > 0 {
			base, cand = append(base, b), append(cand, c)
		}
	}
	return base, cand
}

// figures are the epoch's figures for people: each metric's median (as
// it was when decided, once it is) and tails.
func (j *judge) figures() []decide.WindowFigure {
	var out []decide.WindowFigure
	for m, name := range metricNames {
		base, cand := j.ep.metric(m)
		for _, f := range decide.Window(name, base, cand, j.threshold) {
			if f.Percentile == "p50" && j.ep.held[m].decision != decide.DecisionUndecided {
				f = j.ep.held[m].figure
			}
			out = append(out, f)
		}
	}
	return out
}

// why says in words why the epoch started.
func (ep *epoch) why(window time.Duration) string {
	switch ep.reason {
	case reasonWindow:
		return fmt.Sprintf("the previous one ran its %s", window)
	case reasonBaseline:
		return "the baseline changed: " + ep.changed
	case reasonCandidate:
		return "the candidate changed: " + ep.changed
	}
	return "llmprobe started the comparison"
}
