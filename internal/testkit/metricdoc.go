// The metric contract in docs/metrics.md (name, type and label names of every
// metric), read so tests can hold code, rules and dashboards to it.

package testkit

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// DocumentedMetric is one row of the contract.
type DocumentedMetric struct {
	Name   string
	Type   string   // counter, gauge, histogram
	Labels []string // sorted
}

var (
	rowRe    = regexp.MustCompile("(?m)^\\| `((?:llmprobe_|probe_)[a-z_]+)` \\| ([a-z]+) \\|([^|]*)\\|")
	labelRe  = regexp.MustCompile("`([a-z_]+)`")
	metricRe = regexp.MustCompile(`\bllmprobe_[a-z_]+\b`)
	// quotedRe is a PromQL string in double quotes, escapes included.
	quotedRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// Shorthands the table uses for label sets shared by many rows.
var labelSets = map[string][]string{
	"probe": {"target", "model", "scenario", "traffic"},
	"gpu":   {"gpu", "uuid"},
}

// ReadMetricDoc returns the contract's metrics, sorted by name.
func ReadMetricDoc(path string) ([]DocumentedMetric, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []DocumentedMetric
	for _, m := range rowRe.FindAllStringSubmatch(string(b), -1) {
		metric := DocumentedMetric{Name: m[1], Type: m[2]}
		for _, part := range strings.Split(m[3], ",") {
			part = strings.TrimSpace(part)
			if set, ok := labelSets[part]; ok {
				metric.Labels = append(metric.Labels, set...)
				continue
			}
			if l := labelRe.FindStringSubmatch(part); l != nil {
				metric.Labels = append(metric.Labels, l[1])
			} else if part != "" {
				return nil, fmt.Errorf("%s: %s: label %q is neither `name` nor a shorthand (probe, gpu)", path, m[1], part)
			}
		}
		slices.Sort(metric.Labels)
		out = append(out, metric)
	}
	slices.SortFunc(out, func(a, b DocumentedMetric) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// MetricNames returns the metric names of the contract, sorted.
func MetricNames(path string) ([]string, error) {
	metrics, err := ReadMetricDoc(path)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(metrics))
	for i, m := range metrics {
		out[i] = m.Name
	}
	return out, nil
}

// UndocumentedMetrics returns the llmprobe_ metrics a PromQL expression names that
// are not in names (histogram _bucket, _count and _sum series count as their
// histogram). Quoted strings are label values, like job="llmprobe_gate",
// not metric names.
func UndocumentedMetrics(expr string, names []string) []string {
	var out []string
	for _, m := range metricRe.FindAllString(quotedRe.ReplaceAllString(expr, `""`), -1) {
		base := m
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			base = strings.TrimSuffix(base, suffix)
		}
		if !slices.Contains(names, base) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}
