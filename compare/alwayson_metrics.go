package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
)

var (
	figureLabels = []string{"comparison", "scenario", "metric", "percentile"}
	ratioDesc    = prometheus.NewDesc("llmprobe_comparison_ratio",
		"The candidate's figure over the baseline's, from the pairs of the window: at p50 the Hodges-Lehmann median of the paired ratios, at p90 and p99 the ratio of the percentiles (from 36 and 368 pairs). Absent until pairs measured it.", figureLabels, nil)
	lowerDesc = prometheus.NewDesc("llmprobe_comparison_ratio_lower",
		"Lower end of the ratio's 95 % interval (signed-rank at p50, paired bootstrap at p90 and p99); absent below 6 pairs.", figureLabels, nil)
	upperDesc = prometheus.NewDesc("llmprobe_comparison_ratio_upper",
		"Upper end of the ratio's 95 % interval; absent below 6 pairs.", figureLabels, nil)
	significantDesc = prometheus.NewDesc("llmprobe_comparison_significant",
		"1 when the candidate is worse beyond the tolerance: the interval above 1 and the ratio above 1 + tolerance; absent before min_pairs.", figureLabels, nil)
	verdictDesc = prometheus.NewDesc("llmprobe_comparison_verdict",
		"The candidate against the baseline: -1 better, 0 neither (within the tolerance, or not enough evidence), 1 worse, each by the 95 % interval against the tolerance; absent before min_pairs.", figureLabels, nil)
	pairsDesc = prometheus.NewDesc("llmprobe_comparison_pairs",
		"Pairs in the window at the last evaluation in which both requests succeeded: what the figures rest on.", []string{"comparison", "scenario"}, nil)
	pairsTotalDesc = prometheus.NewDesc("llmprobe_comparison_pairs_total",
		"Pairs sent, by result: measured, or left out of every figure because a side failed (baseline_failed, candidate_failed, both_failed).", []string{"comparison", "scenario", "result"}, nil)
	infoDesc = prometheus.NewDesc("llmprobe_comparison_info",
		"A configured comparison's targets.", []string{"comparison", "baseline", "candidate"}, nil)
)

// Describe implements prometheus.Collector.
func (r *AlwaysOn) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ratioDesc, lowerDesc, upperDesc, significantDesc, verdictDesc, pairsDesc, pairsTotalDesc, infoDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the figures of each window's
// last evaluation; a figure not yet measured has no series.
func (r *AlwaysOn) Collect(ch chan<- prometheus.Metric) {
	infos := map[[3]string]bool{}
	for _, s := range r.snapshot() {
		name, sc := s.cmp.Name, s.scenario.Name
		infos[[3]string{name, s.cmp.Baseline, s.cmp.Candidate}] = true
		s.mu.Lock()
		figures, pairs, results, evaluated := s.figures, s.pairs, s.results, !s.evaluated.IsZero()
		s.mu.Unlock()
		for i, n := range results {
			ch <- prometheus.MustNewConstMetric(pairsTotalDesc, prometheus.CounterValue, n, name, sc, resultLabels[i])
		}
		if evaluated {
			ch <- prometheus.MustNewConstMetric(pairsDesc, prometheus.GaugeValue, float64(pairs), name, sc)
		}
		for _, f := range figures {
			labels := []string{name, sc, f.Metric, f.Percentile}
			ch <- prometheus.MustNewConstMetric(ratioDesc, prometheus.GaugeValue, f.Ratio, labels...)
			if f.Bounded {
				ch <- prometheus.MustNewConstMetric(lowerDesc, prometheus.GaugeValue, f.Lower, labels...)
				ch <- prometheus.MustNewConstMetric(upperDesc, prometheus.GaugeValue, f.Upper, labels...)
			}
			if f.Judged {
				ch <- prometheus.MustNewConstMetric(verdictDesc, prometheus.GaugeValue, float64(f.Verdict), labels...)
				ch <- prometheus.MustNewConstMetric(significantDesc, prometheus.GaugeValue, bit(f.Verdict == decide.WindowWorse), labels...)
			}
		}
	}
	for k := range infos {
		ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, k[0], k[1], k[2])
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
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
// "upgrade, scenario chat: candidate vllm-0.12 against vllm-0.11, 60 pairs
// in 10m: TPOT p50 +31 % (95 % CI +24…+38 %), worse; …".
func (r *AlwaysOn) Lines() []string {
	var out []string
	for _, s := range r.snapshot() {
		s.mu.Lock()
		figures, pairs, failed, evaluated := s.figures, s.pairs, s.results[resBaselineFailed]+s.results[resCandidateFailed]+s.results[resBothFailed], !s.evaluated.IsZero()
		s.mu.Unlock()
		head := fmt.Sprintf("%s, scenario %s: candidate %s against %s", s.cmp.Name, s.scenario.Name, s.cmp.Candidate, s.cmp.Baseline)
		var tail string
		if failed > 0 {
			tail = fmt.Sprintf(" (%d pairs left out since the start: a side failed)", int(failed))
		}
		switch {
		case !evaluated:
			out = append(out, head+": no pair yet"+tail)
		case pairs < s.cmp.MinPairs:
			out = append(out, fmt.Sprintf("%s: %d pairs, too few (a verdict needs %d)%s", head, pairs, s.cmp.MinPairs, tail))
		default:
			var parts []string
			for _, f := range figures {
				parts = append(parts, sentence(f))
			}
			out = append(out, fmt.Sprintf("%s, %d pairs in %s: %s%s", head, pairs, s.cmp.Window, strings.Join(parts, "; "), tail))
		}
	}
	return out
}

// sentence is "TPOT p50 +31 % (95 % CI +24…+38 %), worse".
func sentence(f decide.WindowFigure) string {
	s := fmt.Sprintf("%s %s %s", strings.ToUpper(f.Metric), f.Percentile, change(f.Ratio))
	if f.Bounded {
		s += fmt.Sprintf(" (95 %% CI %s…%s)", strings.TrimSuffix(change(f.Lower), " %"), change(f.Upper))
	}
	switch {
	case !f.Judged:
		return s + ", too few"
	case f.Verdict == decide.WindowWorse:
		return s + ", worse"
	case f.Verdict == decide.WindowBetter:
		return s + ", better"
	case f.Within:
		return s + ", within tolerance"
	}
	return s + ", not enough evidence"
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

// Series a comparison exports at most: per compared scenario every figure
// family at every metric and quantile, the pairs gauge and the pairs
// counters; per comparison its info.
const (
	SeriesPerScenario   = 5*numMetrics*3 + 1 + numResults
	SeriesPerComparison = 1
)

// MaxSeries bounds the series cfg's comparisons export: by configuration,
// never by traffic.
func MaxSeries(cfg *config.Config) int {
	return len(cfg.ComparisonPairs())*SeriesPerScenario + len(cfg.Comparisons)*SeriesPerComparison
}
