// A burst's report judged: against a baseline (the regression, an engine
// upgrade's verdict, the max_regression gates) and as a whole, the one place
// that decides whether a burst passed.

package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/decide"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/stats"
)

// BaselineGate is the gate a named baseline that cannot be used fails.
const BaselineGate = "baseline"

// Judge compares report r with prev, its baseline (the previous report of
// the same burst, or a chosen one; nil if there is none), adds the burst's
// max_regression gates, and gives the verdict. It is the one place that
// decides whether a burst passed: it ran to its end, measured at least one
// request, passed every gate, and, if it swept rates, held the SLO at one of
// them. A baseline that measured another request set or model is skipped:
// RegressionSkipped says what differs (a caller may set it beforehand to say
// why there is no prev), and so does BaselineNote. Call it once per report.
func Judge(r, prev *Report, maxRegression []config.MaxRegression) {
	judge(r, Baseline{Report: prev}, maxRegression)
}

// JudgeNamed is Judge against a baseline the user named: one that is not
// comparable is never skipped; it fails the run's BaselineGate.
func JudgeNamed(r, prev *Report, maxRegression []config.MaxRegression) {
	judge(r, Baseline{Report: prev, Named: prev != nil}, maxRegression)
}

// Baseline is what a run is judged against: the report (nil: none),
// whether the user named it, and History, the burst's stored reports
// (any order), which give a max_regression gate its figure's run-to-run
// spread where neither side repeated.
type Baseline struct {
	Report  *Report
	Named   bool
	History []*Report
}

// JudgeAgainst is Judge against b.
func JudgeAgainst(r *Report, b Baseline, maxRegression []config.MaxRegression) {
	b.Named = b.Named && b.Report != nil
	judge(r, b, maxRegression)
}

// Refused says why r's named baseline was refused, or "".
func Refused(r *Report) string {
	for _, g := range r.Gates {
		if g.Name == BaselineGate && !g.Passed {
			return g.Detail
		}
	}
	return ""
}

func judge(r *Report, b Baseline, maxRegression []config.MaxRegression) {
	prev, named := b.Report, b.Named
	if r.Shard != nil {
		// A shard is a part: it passes when it measured its share and ran to
		// its end. Its share's SLO gates are shown, not judged, and it is
		// never compared with a baseline: the merged report is.
		prev, named = nil, false
		r.RegressionSkipped = r.Shard.String() + " of a split burst: the merged report (llmprobe report merge) is compared with a baseline"
		for i := range r.Gates {
			decide.NotJudged(&r.Gates[i], fmt.Sprintf("not judged on %s's share (the merged report is)", r.Shard.String()))
		}
	}
	switch {
	case prev == nil && r.RegressionSkipped == "":
		r.RegressionSkipped = "no previous report of burst " + r.Burst
	case prev != nil:
		differs := differsFrom(r, prev)
		switch {
		case differs != "" && named:
			why := refusal(prev, differs)
			r.Gates = append(r.Gates, decide.Refused(BaselineGate, why))
			r.RegressionSkipped, r.BaselineNote = why, "REFUSED "+why
			prev = nil
		case differs != "":
			r.RegressionSkipped = fmt.Sprintf("the baseline %s is not comparable: %s", prev.ID, differs)
			r.BaselineNote = "regression check skipped: " + r.RegressionSkipped
			prev = nil
		default:
			r.RegressionSkipped, r.BaselineNote = "", elsewhere(r, prev)
			regress(r, prev, b.History, maxRegression)
		}
	}
	if prev == nil {
		for _, mr := range maxRegression {
			r.Gates = append(r.Gates, decide.Skipped(regressionGateName(mr), mr.Threshold(), r.RegressionSkipped)) // every surface marks it skipped already
		}
	}
	if r.Upgrade != nil {
		judgeUpgrade(r, prev, b.History)
	}
	r.Passed = decide.BurstPassed(r.Aborted, r.Requests, r.Sweep != nil, r.MaxRateUnderSLO != nil, r.Gates)
	o := VerdictOf(r)
	r.Verdict, r.VerdictReason = o.Word, o.Reason
}

// differsFrom says how prev measured something else: another model or
// request set (seed, arrival process and rate, request count, lengths,
// scenario mix); "" when it is a fair baseline. Another target or URL is
// no difference: comparing a candidate with a production baseline is the
// point (elsewhere says it).
func differsFrom(r, prev *Report) string {
	var d []string
	if prev.Shard != nil {
		d = append(d, fmt.Sprintf("it is %s of a split burst, not the whole burst", prev.Shard.String()))
	}
	// An upgrade run compares across the model change that started it.
	if prev.Model != r.Model && (r.Upgrade == nil || r.Upgrade.From.Model != prev.Model) {
		d = append(d, fmt.Sprintf("model %q, this run %q", prev.Model, r.Model))
	}
	d = append(d, plannedDiffers(r, prev)...)
	return strings.Join(d, "; ")
}

// RefusedBeforeRun says why the named baseline prev is refused for the run
// r plans (built before it: configuration, seed, rate, planned requests and
// overrides), or "" when its request set matches: a baseline that cannot be
// compared is refused before anything is sent. The model, discovered by the
// run, is judged after it (JudgeNamed).
func RefusedBeforeRun(r, prev *Report) string {
	if differs := strings.Join(plannedDiffers(r, prev), "; "); differs != "" {
		return refusal(prev, differs)
	}
	return ""
}

func refusal(prev *Report, differs string) string {
	return fmt.Sprintf("the baseline %s you named is not comparable: %s", prev.ID, differs)
}

// plannedDiffers lists how prev's request set and overrides differ from r's.
func plannedDiffers(r, prev *Report) []string {
	d := requestSetDiffers(r, prev)
	// A run overridden on the command line measured something else; a URL
	// override only sent it elsewhere.
	if a, b := strings.Join(shaping(prev.Overrides), " "), strings.Join(shaping(r.Overrides), " "); a != b {
		d = append(d, fmt.Sprintf("overrides %q, this run %q", a, b))
	}
	return d
}

// requestSetDiffers lists how prev's requests differ from r's.
func requestSetDiffers(r, prev *Report) []string {
	var d []string
	if prev.Seed != r.Seed {
		d = append(d, fmt.Sprintf("seed %d, this run %d", prev.Seed, r.Seed))
	}
	if a, b := jsonOf(arrivalOf(prev.Config)), jsonOf(arrivalOf(r.Config)); a != b {
		d = append(d, fmt.Sprintf("arrival %s, this run %s", a, b))
	}
	if prev.Rate != r.Rate {
		d = append(d, fmt.Sprintf("rate %g/s, this run %g/s", prev.Rate, r.Rate))
	}
	if a, b := mixOf(prev.Config), mixOf(r.Config); a != b {
		d = append(d, fmt.Sprintf("scenario mix %s, this run %s", a, b))
	}
	if prev.PlannedRequests != r.PlannedRequests {
		d = append(d, fmt.Sprintf("%d requests planned, this run %d", prev.PlannedRequests, r.PlannedRequests))
	}
	if prev.Scenarios != nil && r.Scenarios != nil {
		if diff := scenariosDiffer(lengths(prev.Scenarios), lengths(r.Scenarios)); diff != "" {
			d = append(d, "scenarios' requests differ: "+diff)
		}
	}
	return d
}

// arrivalOf is the arrival process of a burst's configuration, but its
// rate, which Report.Rate has for every step of a sweep.
func arrivalOf(cfg map[string]any) map[string]any {
	a, _ := cfg["arrival"].(map[string]any)
	out := map[string]any{}
	for k, v := range a {
		if k != "rate" {
			out[k] = v
		}
	}
	return out
}

// lengths keeps what shapes a scenario's requests: all but its objectives.
func lengths(scenarios []map[string]any) []map[string]any {
	out := make([]map[string]any, len(scenarios))
	for i, s := range scenarios {
		out[i] = map[string]any{}
		for k, v := range s {
			if k != "slo" && k != "quality" {
				out[i][k] = v
			}
		}
	}
	return out
}

// scenariosDiffer names the scenarios whose requests differ, and the
// fields that do: "chat (prompt_tokens), rag only in the baseline"; ""
// when none does.
func scenariosDiffer(prev, cur []map[string]any) string {
	byName := func(list []map[string]any) (map[string]map[string]any, []string) {
		m, names := map[string]map[string]any{}, []string{}
		for _, s := range list {
			name := fmt.Sprint(s["name"])
			m[name], names = s, append(names, name)
		}
		return m, names
	}
	a, names := byName(prev)
	b, curNames := byName(cur)
	var d []string
	for _, name := range curNames {
		if a[name] == nil {
			d = append(d, name+" only in this run")
		}
	}
	for _, name := range names {
		if b[name] == nil {
			d = append(d, name+" only in the baseline")
			continue
		}
		var fields []string
		for k := range maps.Keys(a[name]) {
			if jsonOf(a[name][k]) != jsonOf(b[name][k]) {
				fields = append(fields, k)
			}
		}
		for k := range maps.Keys(b[name]) {
			if _, ok := a[name][k]; !ok {
				fields = append(fields, k)
			}
		}
		if len(fields) > 0 {
			sort.Strings(fields)
			d = append(d, name+" ("+strings.Join(fields, " and ")+")")
		}
	}
	return strings.Join(d, ", ")
}

// jsonOf renders a configuration value the same whether it came from YAML
// or back from JSON.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// shaping drops the overrides that change where the run went, not what it sent.
func shaping(overrides []string) []string {
	var out []string
	for _, o := range overrides {
		if !strings.HasPrefix(o, "--target.url=") {
			out = append(out, o)
		}
	}
	return out
}

// elsewhere says where r went that prev did not (another burst, target
// or URL), or "".
func elsewhere(r, prev *Report) string {
	var d []string
	if prev.Burst != r.Burst {
		d = append(d, fmt.Sprintf("burst %s, this run %s", prev.Burst, r.Burst))
	}
	if prev.Target != r.Target {
		d = append(d, fmt.Sprintf("target %s, this run %s", prev.Target, r.Target))
	}
	if a, b := urlOf(prev.Overrides), urlOf(r.Overrides); a != b {
		d = append(d, fmt.Sprintf("URL %s, this run %s", a, b))
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("the baseline %s measured elsewhere, compared all the same: %s", prev.ID, strings.Join(d, "; "))
}

// urlOf is the --target.url override, or "the target's own".
func urlOf(overrides []string) string {
	for _, o := range overrides {
		if u, ok := strings.CutPrefix(o, "--target.url="); ok {
			return u
		}
	}
	return "the target's own"
}

// mixOf renders a report's scenario mix ("chat-short:3 long:1") from its
// configuration, whether it came from YAML or back from JSON.
func mixOf(cfg map[string]any) string {
	list, _ := cfg["scenarios"].([]any)
	parts := make([]string, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		weight := 1.0
		switch w := m["weight"].(type) {
		case int:
			weight = float64(w)
		case float64:
			weight = w
		}
		parts = append(parts, fmt.Sprintf("%v:%s", m["scenario"], strconv.FormatFloat(weight, 'g', -1, 64)))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func regressionGateName(mr config.MaxRegression) string {
	if mr.Quantile == "" {
		return "regression_" + mr.Metric
	}
	return fmt.Sprintf("regression_%s_%s", mr.Metric, mr.Quantile)
}

// regress compares p50 and p99 with the baseline, tests TTFT and TPOT
// samples for a significant change, and applies max_regression gates.
func regress(r, prev *Report, history []*Report, maxRegression []config.MaxRegression) {
	reg := &Regression{PreviousID: prev.ID, PreviousEngineVersion: prev.EngineVersion,
		EngineVersionChanged: prev.EngineVersion != "" && r.EngineVersion != "" && prev.EngineVersion != r.EngineVersion}
	pvalues := map[string]float64{}
	for _, m := range []string{"ttft", "tpot"} {
		if len(r.Samples[m]) > 1 && len(prev.Samples[m]) > 1 {
			pvalues[m] = stats.MannWhitney(r.Samples[m], prev.Samples[m])
		}
	}
	for _, m := range config.BurstMetrics {
		for _, q := range []string{"p50", "p99"} {
			cur, old := r.Latency[m].Measured(q), prev.Latency[m].Measured(q)
			if cur == nil && old == nil && (m == "ttft_answer" || m == "ttft_tool") {
				continue // neither run reasoned, or called a tool: nothing to compare, nothing to list
			}
			rm := RegressionMetric{Metric: m, Quantile: q, Previous: old, Current: cur, Ratio: ratio(cur, old),
				TooFew: r.Latency[m].IsTooFew(q) || prev.Latency[m].IsTooFew(q)}
			if p, ok := pvalues[m]; ok {
				rm.PValue = &p
				rm.Significant = decide.Significant(p)
			}
			if rl, ok := runLevel(r, prev, m, q); ok {
				rm = rl
			}
			reg.Metrics = append(reg.Metrics, rm)
		}
	}
	r.Regression = reg
	for _, mr := range maxRegression {
		g := regressionGate(r, prev, history, mr)
		if reg.EngineVersionChanged {
			g.Detail += fmt.Sprintf("; engine %s → %s", prev.EngineVersion, r.EngineVersion)
		}
		r.Gates = append(r.Gates, g)
	}
}

// regressionGate judges one max_regression gate of r against prev by
// decide.Regression, on the evidence the gate's figure gives (evidence).
// A percentile too few samples bound is shown, never gated.
func regressionGate(r, prev *Report, history []*Report, mr config.MaxRegression) decide.Gate {
	name, threshold, ga := regressionGateName(mr), mr.Threshold(), latencyGauge(mr.Metric, mr.Quantile)
	what, fig := mr.Metric+" "+mr.Quantile, figure.Ms
	if mr.Metric == config.Goodput {
		ga, what = goodputGauge, "goodput"
		fig = func(v float64) string { return figure.Percent(v) }
	}
	g := decide.Gate{Name: name, Threshold: threshold}
	cur, old := ga.value(r), ga.value(prev)
	repeated := len(ga.runs(r)) >= 2 && len(ga.runs(prev)) >= 2
	switch {
	case cur == nil:
		g.Detail = fmt.Sprintf("n/a: no %s in this run to compare with %s", what, prev.ID)
		return g
	case old == nil:
		return decide.Skipped(name, threshold, fmt.Sprintf("the baseline %s has no %s", prev.ID, what))
	case mr.Metric != config.Goodput && !repeated && (r.Latency[mr.Metric].IsTooFew(mr.Quantile) || prev.Latency[mr.Metric].IsTooFew(mr.Quantile)):
		// Its interval would not even bound it: the figure is shown, never gated.
		return decide.Skipped(name, threshold, fmt.Sprintf("not gated: %s %s vs %s in %s%s",
			what, fig(*cur), fig(*old), prev.ID, tooFewNote(r.Latency[mr.Metric], prev.Latency[mr.Metric], mr.Quantile)))
	}
	e := ga.evidence(r, prev, history, mr)
	v := decide.Regression(e.Evidence, mr.Limit())
	v.Apply(&g)
	// A latency's effect is a log ratio, printed as a change; goodput's is
	// its drop, printed as the change in points, its interval turned round.
	value, lo, hi := math.Expm1(e.Effect), v.Lo, v.Hi
	change, limit := func(y float64) string { return figure.SignedPercent(math.Expm1(y)) }, "+"+pct(mr.MaxIncrease)+"%"
	if mr.Metric == config.Goodput {
		value, lo, hi = -e.Effect, v.Hi, v.Lo
		change = func(y float64) string { return fmt.Sprintf("%+.1f pp", -100*y) }
		limit = fmt.Sprintf("-%.1f pp", 100*mr.MaxDrop)
	}
	g.Value = &value
	interval := fmt.Sprintf("95%% interval %s … %s", change(lo), change(hi))
	runs := ""
	if repeated {
		a, b := mean(ga.runs(r)), mean(ga.runs(prev))
		cur, old, runs = &a, &b, " (means of the runs)"
	}
	g.Detail = fmt.Sprintf("%s %s vs %s in %s%s: %s, %s, limit %s; %s", what, fig(*cur), fig(*old), prev.ID, runs, change(e.Effect), interval, limit, e.spread)
	switch {
	case v.OwnDelayDecides:
		g.Detail += "; llmprobe's own delay decides it: without it the verdict could turn, so it is not the target's for certain"
	case v.Verdict == decide.NotEnough && v.SettleRuns > 0:
		g.Detail += fmt.Sprintf("; not enough evidence: the interval reaches across the limit; %d runs a side at this spread would settle it (repeat: %d)", v.SettleRuns, v.SettleRuns)
	case v.Verdict == decide.NotEnough:
		g.Detail += "; not enough evidence: the interval reaches across the limit, and no count of runs up to 100 would settle it at this spread"
	case v.Verdict == decide.Worse:
		g.Detail += "; worse: the interval lies beyond the limit"
	default:
		g.Detail += "; within: the interval lies inside the limit"
	}
	if v.Verdict == decide.NotEnough && !v.OwnDelayDecides && e.assumed {
		g.Detail += ", or repeat: on both sides, which measures the spread instead"
	}
	return g
}

// runLevel compares metric's quantile run by run where both reports ran
// repeatedly: the means of the runs' figures, Welch's test on them. ok is
// false where a side ran once, and the pooled requests are compared.
func runLevel(r, prev *Report, metric, q string) (RegressionMetric, bool) {
	cur, old := r.Repeat.Figure(metric, q), prev.Repeat.Figure(metric, q)
	if cur == nil || old == nil || cur.Mean == nil || old.Mean == nil {
		return RegressionMetric{}, false
	}
	rm := RegressionMetric{Metric: metric, Quantile: q, Previous: old.Mean, Current: cur.Mean, Ratio: ratio(cur.Mean, old.Mean)}
	if p, ok := stats.WelchT(cur.Values, old.Values); ok {
		rm.PValue, rm.Significant = &p, decide.Significant(p)
	}
	return rm, true
}

// tooFewNote says which side's quantile rests on too few samples: the
// gate keeps its verdict and says what it rests on.
func tooFewNote(cur, old stats.Summary, q string) string {
	var out string
	if t := cur.TooFewText(q); t != "" {
		out += "; " + t
	}
	if t := old.TooFewText(q); t != "" {
		out += "; the baseline's " + t
	}
	return out
}

// ratio is cur/old, or nil when either is missing or old is not positive.
func ratio(cur, old *float64) *float64 {
	if cur == nil || old == nil || *old <= 0 {
		return nil
	}
	v := *cur / *old
	return &v
}
