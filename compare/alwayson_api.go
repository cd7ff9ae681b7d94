package compare

import (
	"time"

	"github.com/llmprobe/llmprobe/decide"
)

// Status is one always-on comparison and scenario in its current epoch,
// for rollout controllers and scripts (/api/v1/comparisons): the same
// decision llmprobe_comparison_decision exports, with what it rests on.
type Status struct {
	Comparison string `json:"comparison"`
	Scenario   string `json:"scenario"`
	// Decision is pass, fail or undecided; DecisionValue the gauge's 1, -1
	// or 0.
	Decision      string     `json:"decision"`
	DecisionValue int        `json:"decision_value"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"`
	// Pairs are the epoch's pairs both sides measured.
	Pairs      int       `json:"pairs"`
	MinPairs   int       `json:"min_pairs"`
	Tolerance  float64   `json:"tolerance"`
	Window     string    `json:"window"`
	EpochStart time.Time `json:"epoch_start"`
	// EpochReason is why the epoch started (start, window, baseline,
	// candidate); EpochChanged what changed for the last two.
	EpochReason  string         `json:"epoch_reason"`
	EpochChanged string         `json:"epoch_changed,omitempty"`
	Baseline     Identity       `json:"baseline"`
	Candidate    Identity       `json:"candidate"`
	Metrics      []MetricStatus `json:"metrics"`
}

// Identity is a comparison's target and what it says it is; a field it has
// not told is empty.
type Identity struct {
	Target  string `json:"target"`
	Engine  string `json:"engine,omitempty"`
	Version string `json:"version,omitempty"`
	Model   string `json:"model,omitempty"`
	Server  string `json:"server,omitempty"`
}

// MetricStatus is one metric's decision and figures in the epoch; a metric
// no pair has measured yet is left out.
type MetricStatus struct {
	Metric        string     `json:"metric"`
	Decision      string     `json:"decision"`
	DecisionValue int        `json:"decision_value"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"`
	Figures       []Figure   `json:"figures"`
}

// Figure is the candidate's figure over the baseline's at a percentile,
// with its interval once pairs bound it: at p50 the confidence sequence the
// decision reads (valid at every look), at p90 and p99 a paired bootstrap's
// 95 % interval (valid for one look).
type Figure struct {
	Percentile string   `json:"percentile"`
	Pairs      int      `json:"pairs"`
	Ratio      float64  `json:"ratio"`
	Lower      *float64 `json:"lower,omitempty"`
	Upper      *float64 `json:"upper,omitempty"`
	Interval   string   `json:"interval"`
}

// Statuses are the running comparisons by name, then scenario; one not yet
// started (no epoch) is left out.
func (r *AlwaysOn) Statuses() []Status {
	out := []Status{}
	for _, s := range r.snapshot() {
		st := s.state()
		if st.ep.start.IsZero() {
			continue
		}
		out = append(out, s.status(st))
	}
	return out
}

func (s *alwaysOnRun) status(st runState) Status {
	out := Status{
		Comparison: s.cmp.Name, Scenario: s.scenario.Name,
		Decision: decisionWord(st.ep.decision), DecisionValue: st.ep.decision, DecidedAt: timeOrNil(st.ep.decidedAt),
		Pairs: st.pairs, MinPairs: st.minPairs, Tolerance: st.tolerance, Window: st.window.String(),
		EpochStart: st.ep.start.UTC().Truncate(time.Millisecond), EpochReason: reasonLabels[st.ep.reason], EpochChanged: st.ep.changed,
		Baseline:  side(s.cmp.Baseline, st.ep.base),
		Candidate: side(s.cmp.Candidate, st.ep.cand),
		Metrics:   []MetricStatus{},
	}
	for m, name := range metricNames {
		if !st.measured[m] {
			continue
		}
		h := st.ep.held[m]
		ms := MetricStatus{Metric: name, Decision: decisionWord(h.decision), DecisionValue: h.decision, DecidedAt: timeOrNil(h.at), Figures: []Figure{}}
		for _, f := range st.figures {
			if f.Metric == name {
				ms.Figures = append(ms.Figures, apiFigure(f))
			}
		}
		out.Metrics = append(out.Metrics, ms)
	}
	return out
}

func apiFigure(f decide.WindowFigure) Figure {
	out := Figure{Percentile: f.Percentile, Pairs: f.N, Ratio: f.Ratio, Interval: "bootstrap_95"}
	if f.Sequence {
		out.Interval = "confidence_sequence"
	}
	if f.Bounded {
		lo, hi := f.Lower, f.Upper
		out.Lower, out.Upper = &lo, &hi
	} else {
		out.Interval = "too_few"
	}
	return out
}

func side(target string, id identity) Identity {
	return Identity{Target: target, Engine: id.engine, Version: id.version, Model: id.model, Server: id.server}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC().Truncate(time.Millisecond)
	return &u
}
