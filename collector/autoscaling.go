package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
)

var targetMaxRateDesc = prometheus.NewDesc(namespace+"_target_max_rate_under_slo",
	"The highest rate, requests per second, one instance of the target serves within its SLOs: the lower end of the knee interval of the newest sweep of a burst on the target (source sweep), or its autoscaling.max_rate_under_slo (source config). Absent when neither is known or the sweep is older than autoscaling.max_age. What an autoscaler divides the served rate by.",
	[]string{"target", "source"}, nil)

// maxRates exports each configured target's max rate under SLO: the
// configured figure, else the newest sweep's within its age.
func maxRates(ch chan<- prometheus.Metric, targets map[string]config.Autoscaling, last map[string]*report.Report, now time.Time) {
	for name, a := range targets {
		if a.MaxRateUnderSLO > 0 {
			ch <- prometheus.MustNewConstMetric(targetMaxRateDesc, prometheus.GaugeValue, a.MaxRateUnderSLO, name, "config")
			continue
		}
		var newest *report.Report
		for _, r := range last {
			if r.Target == name && r.MaxRateUnderSLO != nil && (newest == nil || r.End.After(newest.End)) {
				newest = r
			}
		}
		if newest != nil && now.Sub(newest.End) <= a.MaxAge.Std() {
			ch <- prometheus.MustNewConstMetric(targetMaxRateDesc, prometheus.GaugeValue, *newest.MaxRateUnderSLO, name, "sweep")
		}
	}
}
