// The evidence a max_regression gate judges: a run's figure against its
// baseline's, with the run-to-run spread from repeat: on both sides, else
// from the burst's stored comparable runs, else assumed, and the figure's
// extremes once llmprobe's own delay is taken off.

package report

import (
	"fmt"
	"math"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/stats"
)

// gauge is how one gate reads its figure from a report.
type gauge struct {
	// value is the run's figure, nil without one; fastest is it without
	// llmprobe's own delay (nil: none was added); runs are its repeats'
	// values (fewer than 2 without repeat).
	value, fastest func(*Report) *float64
	runs           func(*Report) []float64
	// scale turns a figure into the scale its effect is a difference on
	// (log for a latency); worse is +1 where up is worse, −1 where down is.
	scale func(float64) float64
	worse float64
	// sampling is a run's figure's standard error on that scale, from its
	// own requests.
	sampling func(*Report) float64
	// unit prints a spread on the figure's scale: "5.0%", "1.0 pp".
	unit func(float64) string
}

// latencyGauge reads metric's quantile.
func latencyGauge(metric, q string) gauge {
	return gauge{
		value: func(r *Report) *float64 { return r.Latency[metric].Measured(q) },
		fastest: func(r *Report) *float64 {
			v, ok := r.WithoutOwnDelay[metric][q]
			if !ok {
				return nil
			}
			return &v
		},
		runs:  func(r *Report) []float64 { return repeatValues(r, metric, q) },
		scale: math.Log, worse: 1,
		sampling: func(r *Report) float64 {
			iv, ok := r.Latency[metric].Intervals[q]
			if !ok || iv.Lo == nil || iv.Hi == nil {
				return 0
			}
			return decide.LogSE(*iv.Lo, *iv.Hi)
		},
		unit: func(s float64) string { return fmt.Sprintf("%.1f%%", 100*math.Expm1(s)) },
	}
}

// goodputGauge reads the share of good requests. Without llmprobe's own
// delay it could be higher by every miss within that delay, at most.
var goodputGauge = gauge{
	value: func(r *Report) *float64 { return r.Goodput.Ratio },
	fastest: func(r *Report) *float64 {
		if r.Goodput.Ratio == nil || r.Goodput.Judged == 0 || len(r.Goodput.PerObjectiveOwnDelay) == 0 {
			return nil
		}
		misses := 0
		for _, o := range r.Goodput.PerObjectiveOwnDelay {
			misses += o.Requests
		}
		best := min(1, *r.Goodput.Ratio+float64(misses)/float64(r.Goodput.Judged))
		return &best
	},
	runs:  func(r *Report) []float64 { return repeatValues(r, "goodput_ratio", "") },
	scale: func(x float64) float64 { return x }, worse: -1,
	sampling: func(r *Report) float64 {
		n := float64(r.Goodput.Judged)
		if r.Goodput.Ratio == nil || n == 0 {
			return 0
		}
		// Agresti–Caffo: one good and one bad request added, so that a run
		// without a bad request still carries its sampling error.
		p := (*r.Goodput.Ratio*n + 1) / (n + 2)
		return math.Sqrt(p * (1 - p) / (n + 2))
	},
	unit: func(s float64) string { return fmt.Sprintf("%.1f pp", 100*s) },
}

func repeatValues(r *Report, metric, q string) []float64 {
	if f := r.Repeat.Figure(metric, q); f != nil {
		return f.Values
	}
	return nil
}

// gateEvidence is what a gate judges, and where its spread came from.
type gateEvidence struct {
	decide.Evidence
	spread  string
	assumed bool // the spread between runs was assumed, not measured
}

// evidence gives the effect of r against prev (signed: above 0 worse), its
// standard error from the first source that has one: repeat: on both
// sides (Welch on the runs' figures); else the burst's stored runs
// comparable with r, from decide.MinHistory of them (their spread, t with
// one degree of freedom fewer than runs); else one side's repeats; else
// each run's sampling error and the gate's assumed spread between runs.
func (g gauge) evidence(r, prev *Report, history []*Report, mr config.MaxRegression) gateEvidence {
	a, b := g.scaled(g.runs(r)), g.scaled(g.runs(prev))
	ya, yb := g.scale(*g.value(r)), g.scale(*g.value(prev))
	na, nb := 1, 1
	if len(a) >= 2 {
		ya, na = mean(a), len(a)
	}
	if len(b) >= 2 {
		yb, nb = mean(b), len(b)
	}
	e := gateEvidence{Evidence: decide.Evidence{Effect: g.worse * (ya - yb), Runs: min(na, nb)}}
	hist := g.history(r, history)
	both := math.Sqrt(1/float64(na) + 1/float64(nb))
	switch {
	case na >= 2 && nb >= 2:
		_, se, df, _ := stats.Welch(a, b)
		e.SE, e.DF = se, welchDF(df)
		e.spread = fmt.Sprintf("spread from repeat: %d runs against the baseline's %d (Welch, %d degrees of freedom)", na, nb, e.DF)
	case len(hist) >= decide.MinHistory:
		s := stats.SD(hist)
		e.SE, e.DF = s*both, len(hist)-1
		e.spread = fmt.Sprintf("spread %s between runs, from the burst's last %d comparable runs", g.unit(s), len(hist))
	case na >= 2 || nb >= 2:
		side, vals := "this run's", a
		if nb >= 2 {
			side, vals = "the baseline's", b
		}
		s := stats.SD(vals)
		e.SE, e.DF = s*both, len(vals)-1
		e.spread = fmt.Sprintf("spread %s between runs, from %s %d repeats", g.unit(s), side, len(vals))
	default:
		assumed, isDefault := mr.SpreadOf()
		if g.worse > 0 {
			assumed = math.Log1p(assumed)
		}
		wa, wb := g.sampling(r), g.sampling(prev)
		e.SE, e.assumed = math.Sqrt(wa*wa+wb*wb+2*assumed*assumed), true
		how := "the gate's spread"
		if isDefault {
			how = "the default; spread: sets it"
		}
		e.spread = fmt.Sprintf("spread %s between runs assumed (%s; %d comparable stored runs, %d needed to read it), beyond each run's sampling error (±%s, ±%s)",
			g.unit(assumed), how, len(hist), decide.MinHistory, g.unit(wa), g.unit(wb))
	}
	e.Low, e.High = e.Effect, e.Effect
	if f := g.fastest(r); f != nil {
		e.Low += g.worse * (g.scale(*f) - g.scale(*g.value(r)))
	}
	if f := g.fastest(prev); f != nil {
		e.High -= g.worse * (g.scale(*f) - g.scale(*g.value(prev)))
	}
	return e
}

// history is the figure, scaled, of each stored run comparable with r.
func (g gauge) history(r *Report, history []*Report) []float64 {
	var out []float64
	for _, h := range history {
		if h.ID == r.ID || differsFrom(r, h) != "" {
			continue
		}
		v := g.value(h)
		if v == nil || (g.worse > 0 && *v <= 0) { // a latency's log needs it above 0
			continue
		}
		out = append(out, g.scale(*v))
	}
	return out
}

func (g gauge) scaled(xs []float64) []float64 {
	if len(xs) < 2 {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = g.scale(x)
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// welchDF rounds Welch's degrees of freedom down, at least 1 (NaN: runs
// without variance on either side).
func welchDF(df float64) int {
	if math.IsNaN(df) || df < 1 {
		return 1
	}
	return int(df)
}
