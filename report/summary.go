package report

import "github.com/llmprobe/llmprobe/stats"

// Summary holds exact statistics of a sample, in seconds, each percentile
// with its interval and the too-few mark (stats.Summary).
type Summary = stats.Summary

// Summarize computes exact percentiles and their intervals; it sorts xs
// in place.
func Summarize(xs []float64) Summary { return stats.Summarize(xs) }
