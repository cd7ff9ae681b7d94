package render

import (
	"cmp"
	"fmt"
	"github.com/llmprobe/llmprobe/decide"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// curveHeader names curveRows' columns.
func curveHeader() []string {
	return []string{"offered", "achieved", "goodput (95% CI)", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p99", "e2e p99", "out tok/s", "per M out", "step"}
}

// curveRows are the QPS–latency curve's cells, one row per step by offered
// rate: the figures each step measured, its price where cost: is set, and
// its verdict, the knee marked.
func curveRows(r *report.Report) [][]string {
	rows := make([][]string, 0, len(r.Sweep))
	for _, s := range byRate(r.Sweep) {
		ttft, tpot, itl, e2e := s.Latency["ttft"], s.Latency["tpot"], s.Latency["itl"], s.Latency["e2e"]
		price := "n/a"
		if s.Cost != nil {
			price = na(s.Cost.PerMillionOutput, "%.4g", 1)
		}
		rows = append(rows, []string{fmt.Sprintf("%.4g/s", s.Rate), na(s.AchievedRate, "%.2f/s", 1), goodputText(s),
			curveCell(ttft, "p50"), curveCell(ttft, "p99"), curveCell(tpot, "p50"), curveCell(tpot, "p99"), curveCell(itl, "p99"), curveCell(e2e, "p99"),
			na(s.Throughput.OutputTokens, "%.1f", 1), price, stepVerdict(r, s)})
	}
	return rows
}

// curveCell is a step's percentile, starred when it rests on too few
// samples (curveFootnote says what the star means).
func curveCell(s stats.Summary, name string) string {
	v := ms(s, s.Quantile(name))
	if s.IsTooFew(name) {
		v += "*"
	}
	return v
}

// curveFootnote explains the stars of the curve's cells, "" without any.
func curveFootnote(r *report.Report) string {
	var needs []string
	for _, q := range []string{"p50", "p99"} {
		for _, st := range r.Sweep {
			if st.Latency["ttft"].IsTooFew(q) || st.Latency["tpot"].IsTooFew(q) || st.Latency["e2e"].IsTooFew(q) {
				needs = append(needs, fmt.Sprintf("%s needs %d", q, stats.Needs(q)))
				break
			}
		}
	}
	if len(needs) == 0 {
		return ""
	}
	return "* too few samples in the step for that percentile (" + strings.Join(needs, ", ") + "): it is close to the step's maximum, not its percentile"
}

// byRate orders the steps by offered rate: bisecting steps run after the
// linear ones but lie between them on the curve.
func byRate(steps []report.SweepStep) []report.SweepStep {
	out := slices.Clone(steps)
	slices.SortStableFunc(out, func(a, b report.SweepStep) int { return cmp.Compare(a.Rate, b.Rate) })
	return out
}

// goodputText is a step's goodput ratio with its Wilson interval, or its
// ratio alone in reports older than the interval.
func goodputText(s report.SweepStep) string {
	if s.GoodputLower == nil || s.GoodputUpper == nil {
		return na(s.GoodputRatio, "%.1f%%", 100)
	}
	return fmt.Sprintf("%s (%.1f–%.1f%%) of %d%s", na(s.GoodputRatio, "%.1f%%", 100), 100**s.GoodputLower, 100**s.GoodputUpper, s.Judged, worth(s.Effective))
}

// stepVerdict says whether the step held, with its error bound, and marks
// the knee.
func stepVerdict(r *report.Report, s report.SweepStep) string {
	v := "pass"
	switch {
	case s.Verdict == decide.NotEnough:
		v = "NOT ENOUGH EVIDENCE (its interval across the target)"
	case !s.Passed:
		v = "FAIL"
	}
	if s.Bisect {
		v += " (bisect)"
	}
	if k := r.Knee; k != nil && k.Passing != nil && *k.Passing == s.Rate && s.Passed {
		v += " ← knee"
	}
	v += ", error bound p99 " + delay(s.ErrorBoundP99)
	if s.ClientSaturated {
		v += " (client saturated)"
	}
	return v
}

// kneeText says where the max rate under the SLO lies: within [passing,
// failing), at least passing when no step failed, or that none held.
func kneeText(r *report.Report) string {
	k := r.Knee
	if k == nil {
		if r.MaxRateUnderSLO != nil { // a report older than the knee
			return fmt.Sprintf("max rate under SLO: %.2f/s", *r.MaxRateUnderSLO)
		}
		return "max rate under SLO: n/a (no step held the SLO)"
	}
	rule := fmt.Sprintf("a step holds when the lower bound of its goodput's 95%% interval reaches %.4g%%, fails when the upper bound stays below", 100*k.TargetRatio)
	switch {
	case k.Passing == nil && k.Failing != nil:
		return fmt.Sprintf("max rate under SLO: below %.4g/s, no step held the SLO (%s)", *k.Failing, rule)
	case k.Passing == nil:
		return "max rate under SLO: n/a, no step measured (" + rule + ")"
	case k.Failing == nil:
		return fmt.Sprintf("max rate under SLO: at least %.4g/s, no step failed (%s)", *k.Passing, rule)
	}
	res := ""
	if k.Resolution > 0 {
		res = fmt.Sprintf(", bisected to %.4g/s", k.Resolution)
	}
	var inside []float64
	for _, st := range r.Sweep {
		if st.Rate > *k.Passing && st.Rate < *k.Failing {
			inside = append(inside, st.Rate)
		}
	}
	slices.Sort(inside)
	var unclear []string
	for _, rate := range inside {
		unclear = append(unclear, fmt.Sprintf("%.4g/s", rate))
	}
	if len(unclear) > 0 {
		res = fmt.Sprintf("; %s had not enough evidence either way, and longer steps would narrow it", strings.Join(unclear, ", "))
	}
	return fmt.Sprintf("max rate under SLO: in [%.4g, %.4g)/s%s (%s)", *k.Passing, *k.Failing, res, rule)
}

// planText says the capacity and cost a sweep implies, one line each, and
// why where they could not be given; none without capacity: or cost:.
func planText(r *report.Report) []string {
	k := r.Knee
	if k == nil {
		return nil
	}
	var out []string
	if k.Capacity != nil {
		out = append(out, "capacity: "+k.Capacity.String())
	}
	if c := k.Cost; c != nil {
		line := fmt.Sprintf("cost: %s per million output tokens, %s per million tokens from one instance at the max rate under SLO (%.4g an hour)",
			na(c.PerMillionOutput, "%.4g", 1), na(c.PerMillionTotal, "%.4g", 1), c.InstanceHourly)
		if f := k.Fleet; f != nil && k.Capacity != nil {
			line += fmt.Sprintf("; the fleet of %d at %.4g/s: %s per million output tokens (%.4g an hour, headroom and all)", f.Instances, k.Capacity.TargetRate, na(f.PerMillionOutput, "%.4g", 1), f.Hourly)
		}
		if g := r.GPU; g != nil && g.JoulesPerOutputToken != nil {
			line += fmt.Sprintf("; energy %.3g J per output token over the sweep (NVML)", *g.JoulesPerOutputToken)
		}
		out = append(out, line)
	}
	if k.Why != "" {
		out = append(out, "capacity and cost: "+k.Why)
	}
	return out
}

// writeSweep writes a sweep's curve as a table, its knee, and the capacity
// and cost it implies.
func writeSweep(out io.Writer, r *report.Report) {
	if len(r.Sweep) > 0 {
		fmt.Fprintf(out, "\nQPS–latency curve, %s (the figures above are the knee's step's):\n", steps(len(r.Sweep)))
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(curveHeader(), "\t"))
		for _, row := range curveRows(r) {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		_ = tw.Flush()
		if f := curveFootnote(r); f != "" {
			fmt.Fprintln(out, f)
		}
	}
	if r.Sweep != nil || r.MaxRateUnderSLO != nil {
		fmt.Fprintln(out, kneeText(r))
	}
	for _, l := range planText(r) {
		fmt.Fprintln(out, l)
	}
}

// markdownSweep writes the curve table, the knee, capacity and cost.
func markdownSweep(b *strings.Builder, r *report.Report) {
	if len(r.Sweep) == 0 {
		return
	}
	h := curveHeader()
	fmt.Fprintf(b, "\nQPS–latency curve (%s):\n\n| %s |\n|%s---|\n", steps(len(r.Sweep)), strings.Join(h, " | "), strings.Repeat("--:|", len(h)-1))
	for _, row := range curveRows(r) {
		for i := range row {
			row[i] = md(row[i])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if f := curveFootnote(r); f != "" {
		b.WriteString("\n" + md(f) + "\n")
	}
	b.WriteString("\n" + md(kneeText(r)) + ".\n")
	for _, l := range planText(r) {
		b.WriteString("\n" + md(l) + ".\n")
	}
}

// planChecks are the sweep's knee, capacity and cost as checks that do
// not change the verdict: passed where given, skipped where not.
func planChecks(r *report.Report) []Check {
	if r.Knee == nil {
		return nil
	}
	out := []Check{{"knee", StatusPassed, kneeText(r)}}
	if r.Knee.Passing == nil {
		out[0].Status = StatusSkipped
	}
	for _, l := range planText(r) {
		st := StatusPassed
		if strings.HasPrefix(l, "capacity and cost: ") {
			st = StatusSkipped
		}
		name, detail, _ := strings.Cut(l, ": ")
		out = append(out, Check{name, st, detail})
	}
	return out
}

// steps counts steps in words: "1 step", "4 steps".
func steps(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}
