package report

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/config"
)

// WriteText writes the report as the human table `llmprobe gate` prints.
func (r *Report) WriteText(out io.Writer) {
	fmt.Fprintf(out, "burst %s  target %s  model %s  engine %s %s\n", r.Burst, r.Target, r.Model, r.Engine, r.EngineVersion)
	fmt.Fprintf(out, "rate %.2f/s planned, %.2f/s achieved  %d requests (+%d warmup)  %.1fs\n", r.Rate, r.AchievedRate, r.Requests, r.WarmupRequests, r.DurationSeconds)
	outcomes := make([]string, 0, len(r.Outcomes))
	for o, n := range r.Outcomes {
		outcomes = append(outcomes, fmt.Sprintf("%s=%d", o, n))
	}
	sort.Strings(outcomes)
	fmt.Fprintf(out, "outcomes %v\n\n", outcomes)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tp50\tp90\tp95\tp99\tp99.9\tmean\tmax\t")
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		ms := func(v float64) string { return fmt.Sprintf("%.1fms", 1000*v) }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", m, ms(s.P50), ms(s.P90), ms(s.P95), ms(s.P99), ms(s.P999), ms(s.Mean), ms(s.Max))
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "\nthroughput %.2f req/s, %.1f output tok/s; goodput %.2f req/s, %.1f output tok/s, ratio %.1f%%\n",
		r.Throughput.Requests, r.Throughput.OutputTokens, r.Goodput.Requests, r.Goodput.OutputTokens, 100*r.Goodput.Ratio)
	for _, s := range r.Sweep {
		verdict := "pass"
		if !s.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(out, "sweep %.2f/s: achieved %.2f/s goodput %.1f%% ttft p99 %.1fms %s\n", s.Rate, s.AchievedRate, 100*s.GoodputRatio, 1000*s.TTFTP99, verdict)
	}
	if r.MaxRateUnderSLO != nil {
		fmt.Fprintf(out, "max rate under SLO: %.2f/s\n", *r.MaxRateUnderSLO)
	}
	if g := r.Regression; g != nil {
		fmt.Fprintf(out, "regression vs %s:", g.PreviousID)
		for _, m := range g.Metrics {
			if m.Quantile != "p99" || (m.Metric != "ttft" && m.Metric != "tpot" && m.Metric != "e2e") {
				continue
			}
			fmt.Fprintf(out, "  %s p99 x%.2f", m.Metric, m.Ratio)
			if m.PValue != nil {
				sig := "not significant"
				if m.Significant {
					sig = "significant"
				}
				fmt.Fprintf(out, " (p=%.2g, %s)", *m.PValue, sig)
			}
		}
		fmt.Fprintln(out)
		if g.EngineVersionChanged {
			fmt.Fprintf(out, "engine version changed since %s: %s -> %s\n", g.PreviousID, g.PreviousEngineVersion, r.EngineVersion)
		}
	}
	fmt.Fprintln(out)
	for _, g := range r.Gates {
		verdict := "PASS"
		if !g.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(out, "%s  %s: %s\n", verdict, g.Name, g.Detail)
	}
	if r.Aborted {
		fmt.Fprintf(out, "FAIL  aborted: %s\n", r.AbortReason)
	}
	if g := r.GPU; g != nil {
		fmt.Fprintf(out, "GPUs: %d x %v, driver %s, CUDA %s", g.Count, g.Names, g.DriverVersion, g.CUDAVersion)
		if g.JoulesPerOutputToken != nil {
			fmt.Fprintf(out, "; %.3f J per output token", *g.JoulesPerOutputToken)
		}
		if g.MeanPowerWatts != nil {
			fmt.Fprintf(out, ", mean power %.0f W", *g.MeanPowerWatts)
		}
		if g.MaxTemperatureCelsius != nil {
			fmt.Fprintf(out, ", max %.0f °C", *g.MaxTemperatureCelsius)
		}
		fmt.Fprintln(out)
	}
	if r.ClientSaturated {
		fmt.Fprintf(out, "WARN  client saturated: dispatch delay p99 %.2fms > %s; these numbers describe the prober\n", 1000*r.Latency["dispatch_delay"].P99, clientSaturatedDispatchP99)
	}
	if r.Passed {
		fmt.Fprintln(out, "gate: passed")
	} else {
		fmt.Fprintln(out, "gate: FAILED")
	}
}
