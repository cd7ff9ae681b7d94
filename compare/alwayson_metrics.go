package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
)

var (
	figureLabels = []string{"comparison", "scenario", "metric", "percentile"}
	ratioDesc    = prometheus.NewDesc("llmprobe_comparison_ratio",
		"The candidate's figure over the baseline's, from the pairs of the current epoch: at p50 the median of the paired ratios (as it was when its decision was taken, once it is), at p90 and p99 the ratio of the percentiles (from 36 and 368 pairs). Absent until pairs measured it.", figureLabels, nil)
	lowerDesc = prometheus.NewDesc("llmprobe_comparison_ratio_lower",
		"Lower end of the ratio's interval: at p50 the median's confidence sequence at the epoch's decision level (valid at every look; the decision reads it), at p90 and p99 a paired bootstrap's 95 % interval (for people, valid for one look); absent while too few pairs bound it.", figureLabels, nil)
	upperDesc = prometheus.NewDesc("llmprobe_comparison_ratio_upper",
		"Upper end of the ratio's interval (see llmprobe_comparison_ratio_lower).", figureLabels, nil)
	decisionDesc = prometheus.NewDesc("llmprobe_comparison_decision",
		"The always-on comparison's decision in the current epoch: 1 pass (every metric's median shown within the tolerance), -1 fail (a metric's median shown beyond it), 0 undecided; held until the epoch starts afresh (every window, or when a side's engine, version, model or server changes). Valid however often it is read: at most 5 % of days decide wrongly.", []string{"comparison", "scenario"}, nil)
	metricDecisionDesc = prometheus.NewDesc("llmprobe_comparison_metric_decision",
		"One metric's decision in the current epoch (its median): 1 pass, -1 fail, 0 undecided; absent while the epoch's pairs have not measured the metric.", []string{"comparison", "scenario", "metric"}, nil)
	epochStartDesc = prometheus.NewDesc("llmprobe_comparison_epoch_start_timestamp_seconds",
		"When the current epoch of the comparison started: its decisions rest on the pairs since.", []string{"comparison", "scenario"}, nil)
	epochsDesc = prometheus.NewDesc("llmprobe_comparison_epochs_total",
		"Epochs started, by reason: start (llmprobe or the comparison started), window (the previous epoch ran its window), baseline or candidate (that side's engine, version, model or server changed).", []string{"comparison", "scenario", "reason"}, nil)
	pairsDesc = prometheus.NewDesc("llmprobe_comparison_pairs",
		"Pairs of the current epoch in which both requests succeeded: what the figures and decisions rest on.", []string{"comparison", "scenario"}, nil)
	pairsTotalDesc = prometheus.NewDesc("llmprobe_comparison_pairs_total",
		"Pairs sent, by result: measured, or left out of every figure because a side failed (baseline_failed, candidate_failed, both_failed).", []string{"comparison", "scenario", "result"}, nil)
	infoDesc = prometheus.NewDesc("llmprobe_comparison_info",
		"A configured comparison's targets.", []string{"comparison", "baseline", "candidate"}, nil)
)

// Describe implements prometheus.Collector.
func (r *AlwaysOn) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ratioDesc, lowerDesc, upperDesc, decisionDesc, metricDecisionDesc, epochStartDesc, epochsDesc, pairsDesc, pairsTotalDesc, infoDesc} {
		ch <- d
	}
}

// runState is what one run shows, read under its lock.
type runState struct {
	figures   []decide.WindowFigure
	results   [numResults]float64
	epochs    [numReasons]float64
	ep        epoch // without its pairs
	pairs     int
	measured  [numMetrics]bool
	window    time.Duration
	threshold float64
	tolerance float64
	minPairs  int
}

func (s *alwaysOnRun) state() runState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := runState{figures: s.figures, results: s.results, epochs: s.judge.epochs, ep: s.judge.ep, pairs: len(s.judge.ep.pairs), window: s.judge.window, threshold: s.judge.threshold, tolerance: s.judge.tolerance, minPairs: s.judge.minPairs}
	st.ep.pairs = nil
	for m, c := range st.ep.counts {
		st.measured[m] = c.Above+c.Below > 0
	}
	// A decision taken since the last evaluation shows its own figure.
	st.figures = slices.Clone(st.figures)
	for i, f := range st.figures {
		if m := slices.Index(metricNames, f.Metric); m >= 0 && f.Sequence && st.ep.held[m].decision != decide.DecisionUndecided {
			st.figures[i] = st.ep.held[m].figure
		}
	}
	return st
}

// Collect implements prometheus.Collector: each run's current epoch; a
// figure not yet measured has no series.
func (r *AlwaysOn) Collect(ch chan<- prometheus.Metric) {
	infos := map[[3]string]bool{}
	for _, s := range r.snapshot() {
		name, sc := s.cmp.Name, s.scenario.Name
		infos[[3]string{name, s.cmp.Baseline, s.cmp.Candidate}] = true
		st := s.state()
		for i, n := range st.results {
			ch <- prometheus.MustNewConstMetric(pairsTotalDesc, prometheus.CounterValue, n, name, sc, resultLabels[i])
		}
		for i, n := range st.epochs {
			ch <- prometheus.MustNewConstMetric(epochsDesc, prometheus.CounterValue, n, name, sc, reasonLabels[i])
		}
		if st.ep.start.IsZero() {
			continue // not started yet
		}
		ch <- prometheus.MustNewConstMetric(epochStartDesc, prometheus.GaugeValue, float64(st.ep.start.UnixMilli())/1e3, name, sc)
		ch <- prometheus.MustNewConstMetric(pairsDesc, prometheus.GaugeValue, float64(st.pairs), name, sc)
		ch <- prometheus.MustNewConstMetric(decisionDesc, prometheus.GaugeValue, float64(st.ep.decision), name, sc)
		for m, measured := range st.measured {
			if measured {
				ch <- prometheus.MustNewConstMetric(metricDecisionDesc, prometheus.GaugeValue, float64(st.ep.held[m].decision), name, sc, metricNames[m])
			}
		}
		for _, f := range st.figures {
			labels := []string{name, sc, f.Metric, f.Percentile}
			ch <- prometheus.MustNewConstMetric(ratioDesc, prometheus.GaugeValue, f.Ratio, labels...)
			if f.Bounded {
				ch <- prometheus.MustNewConstMetric(lowerDesc, prometheus.GaugeValue, f.Lower, labels...)
				ch <- prometheus.MustNewConstMetric(upperDesc, prometheus.GaugeValue, f.Upper, labels...)
			}
		}
	}
	for k := range infos {
		ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, k[0], k[1], k[2])
	}
}

// snapshot is the running schedules by comparison, then scenario.
func (r *AlwaysOn) snapshot() []*alwaysOnRun {
	running := r.runs.Running()
	out := make([]*alwaysOnRun, 0, len(running))
	for _, s := range running {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *alwaysOnRun) int {
		return cmp.Or(cmp.Compare(a.cmp.Name, b.cmp.Name), cmp.Compare(a.scenario.Name, b.scenario.Name))
	})
	return out
}

// Lines says each running comparison in a sentence, for the landing page:
// "upgrade, scenario chat: candidate vllm-0.12 (vllm 0.12.0) against
// vllm-0.11 (vllm 0.11.0): fail — TPOT p50 +31 % (sequence +24…+38 %),
// worse, decided 14:07:30 UTC on 16 pairs; …; epoch since 14:00:05 UTC (the
// candidate changed: …), 40 pairs".
func (r *AlwaysOn) Lines() []string {
	var out []string
	for _, s := range r.snapshot() {
		st := s.state()
		failed := st.results[resBaselineFailed] + st.results[resCandidateFailed] + st.results[resBothFailed]
		head := fmt.Sprintf("%s, scenario %s: candidate %s (%s) against %s (%s)", s.cmp.Name, s.scenario.Name, s.cmp.Candidate, st.ep.cand, s.cmp.Baseline, st.ep.base)
		var tail string
		if failed > 0 {
			tail = fmt.Sprintf("; %s left out since the start: a side failed", plural(int(failed), "pair"))
		}
		if st.ep.start.IsZero() {
			out = append(out, head+": not started"+tail)
			continue
		}
		epochLine := fmt.Sprintf("epoch since %s (%s), %s; a metric decides when its evidence reaches %s (%g %% of days split over %s epochs a day, %d metrics and %s), from %d pairs",
			clockTime(st.ep.start), st.ep.why(st.window), plural(st.pairs, "pair"), evidence(st.threshold), 100*decide.DailyErrorRate, epochsPerDay(st.window), decide.AnytimeMetrics, plural(s.scenarios, "scenario"), s.cmp.MinPairs)
		var parts []string
		for _, f := range st.figures {
			if f.Sequence { // the tails are for the dashboard: they decide nothing
				parts = append(parts, sentence(f, st.ep, s.cmp.Tolerance))
			}
		}
		body := "no pair measured yet"
		if len(parts) > 0 {
			body = strings.Join(parts, "; ")
		}
		out = append(out, fmt.Sprintf("%s: %s — %s; %s%s", head, decisionWord(st.ep.decision), body, epochLine, tail))
	}
	return out
}

func decisionWord(d int) string {
	switch d {
	case decide.DecisionFail:
		return "fail"
	case decide.DecisionPass:
		return "pass"
	}
	return "undecided"
}

// sentence is "TPOT p50 +31 % (sequence +24…+38 %), worse, decided
// 14:07:30 UTC on 16 pairs" for a median, "TPOT p99 +2 % (95 % CI −3…+8 %),
// shown, not judged" for a tail.
func sentence(f decide.WindowFigure, ep epoch, tolerance float64) string {
	s := fmt.Sprintf("%s %s %s", strings.ToUpper(f.Metric), f.Percentile, change(f.Ratio))
	switch {
	case f.Bounded && f.Sequence:
		s += fmt.Sprintf(" (sequence %s…%s)", strings.TrimSuffix(change(f.Lower), " %"), change(f.Upper))
	case f.Bounded:
		s += fmt.Sprintf(" (95 %% CI %s…%s)", strings.TrimSuffix(change(f.Lower), " %"), change(f.Upper))
	}
	if !f.Sequence {
		return s + ", shown, not judged"
	}
	m := slices.Index(metricNames, f.Metric)
	if m < 0 {
		return s
	}
	h := ep.held[m]
	tol := fmt.Sprintf("%g %%", 100*tolerance)
	switch h.decision {
	case decide.DecisionFail:
		return fmt.Sprintf("%s, worse beyond %s, decided %s on %s", s, tol, clockTime(h.at), plural(f.N, "pair"))
	case decide.DecisionPass:
		return fmt.Sprintf("%s, within %s, decided %s on %s", s, tol, clockTime(h.at), plural(f.N, "pair"))
	case decide.DecisionUndecided:
		if !f.Bounded {
			return s + ", too few pairs to bound"
		}
	}
	return s + ", undecided"
}

func clockTime(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

// evidence is the e-value a log threshold stands for, as odds: "1,920 to 1".
func evidence(logThreshold float64) string {
	return message.NewPrinter(language.English).Sprintf("%d to 1", int64(math.Round(math.Exp(logThreshold))))
}

// epochsPerDay is "24" for an hour's window.
func epochsPerDay(window time.Duration) string {
	return message.NewPrinter(language.English).Sprintf("%v", math.Round(100*math.Max(1, float64(24*time.Hour)/float64(window)))/100)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// change is a ratio as a signed percentage: 1.31 is "+31 %", 0.9 "−10 %".
func change(ratio float64) string {
	pct := math.Round((ratio - 1) * 100)
	if pct == 0 {
		pct = 0 // no "−0 %"
	}
	if pct < 0 {
		return fmt.Sprintf("−%g %%", -pct)
	}
	return fmt.Sprintf("+%g %%", pct)
}

// Series a comparison exports at most: per compared scenario the three
// figure families at every metric and percentile, the decision, each
// metric's decision, the epoch's start, the epoch counters, the pairs gauge
// and the pairs counters; per comparison its info.
const (
	SeriesPerScenario   = 3*numMetrics*3 + 1 + numMetrics + 1 + numReasons + 1 + numResults
	SeriesPerComparison = 1
)

// MaxSeries bounds the series cfg's comparisons export: by configuration,
// never by traffic.
func MaxSeries(cfg *config.Config) int {
	return len(cfg.ComparisonPairs())*SeriesPerScenario + len(cfg.Comparisons)*SeriesPerComparison
}
