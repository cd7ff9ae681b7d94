// Package metricdoc reads the metric names documented in docs/metrics.md, so
// tests can hold code, rules and dashboards to that list.
package metricdoc

import (
	"os"
	"regexp"
	"slices"
	"strings"
)

var (
	rowRe    = regexp.MustCompile("(?m)^\\| `(llmprobe_[a-z_]+)` \\|")
	metricRe = regexp.MustCompile(`\bllmprobe_[a-z_]+\b`)
)

// Names returns the metric names of the table rows of the file, sorted.
func Names(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range rowRe.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out, nil
}

// Undocumented returns the llmprobe_ metrics a PromQL expression names that
// are not in names (histogram _bucket, _count and _sum series count as their
// histogram).
func Undocumented(expr string, names []string) []string {
	var out []string
	for _, m := range metricRe.FindAllString(expr, -1) {
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
