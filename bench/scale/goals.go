package main

import (
	"cmp"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// A goal of the cost issue: its figure as measured in this run, against
// its target. Met is nil where the run did not measure it.
type goal struct {
	Name     string `json:"goal"`
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      *bool  `json:"met"`
}

func met(ok bool) *bool { return &ok }

// goals reads the goals off the rows of one run (the first where -runs
// repeats the ladder; the CPU ratio is the median over the runs), and the
// render and idle RSS figures measured apart.
func goals(rows []Row, render, rss *[2]float64) []goal {
	first := func(prefix string) *Row {
		for i := range rows {
			if strings.HasPrefix(rows[i].Name, prefix) {
				return &rows[i]
			}
		}
		return nil
	}
	var out []goal
	if g, ok := costGoal(rows); ok {
		out = append(out, g)
	}
	if g, ok := spikeGoal(rows); ok {
		out = append(out, g)
	}
	if r := first("dispatch "); r != nil && r.Dispatch.P99 != nil {
		out = append(out, goal{"dispatch delay, " + strings.TrimPrefix(r.Name, "dispatch "), "p99 ≤ 1 ms, the rate held",
			fmt.Sprintf("p99 %.3f ms, %s/s achieved", *r.Dispatch.P99, num(r.AchievedRate, 1)),
			met(*r.Dispatch.P99 <= 1 && r.AchievedRate != nil && *r.AchievedRate >= 0.98*r.Rate)})
	}
	if r := first("pacer "); r != nil && r.Dispatch.P99 != nil {
		out = append(out, goal{"the pacer alone, " + strings.TrimPrefix(r.Name, "pacer "), "lateness p99 ≤ 100 µs",
			fmt.Sprintf("p50 %.0f µs, p99 %.0f µs", 1000**r.Dispatch.P50, 1000**r.Dispatch.P99), met(*r.Dispatch.P99 <= 0.1)})
	}
	var streams *Row
	for i := range rows {
		if strings.HasSuffix(rows[i].Name, " streams") && rows[i].HeapPerStreamKiB != nil && (streams == nil || rows[i].PeakStreams > streams.PeakStreams) {
			streams = &rows[i]
		}
	}
	if streams != nil {
		out = append(out, goal{"heap per open stream, " + streams.Name, "≤ 16 KiB",
			fmt.Sprintf("%.1f KiB (and %s KiB of goroutine stacks)", *streams.HeapPerStreamKiB, num(streams.StackPerStreamKiB, 1)), met(*streams.HeapPerStreamKiB <= 16)})
	}
	if render != nil {
		out = append(out, goal{"/metrics render, the budget's page, OpenMetrics + gzip", "≤ 10 ms, median of 5, every series observed since the last scrape",
			fmt.Sprintf("%.1f ms (%.1f ms with nothing observed between scrapes)", render[0], render[1]), met(render[0] <= 10)})
	}
	if rss != nil {
		out = append(out, goal{"idle RSS, demo config", "≤ 30 MiB", fmt.Sprintf("%.1f MiB, %.1f MiB of it anonymous (the rest is the binary's pages)", rss[0], rss[1]), met(rss[0] <= 30)})
	}
	return out
}

func printGoals(w io.Writer, gs []goal) {
	if len(gs) == 0 {
		return
	}
	fmt.Fprintln(w, "\ngoals:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\ttarget\tmeasured\tmet\t")
	for _, g := range gs {
		m := "n/a"
		if g.Met != nil {
			m = map[bool]string{true: "yes", false: "no"}[*g.Met]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", g.Name, g.Target, g.Measured, m)
	}
	tw.Flush()
}

// renderMs is the median wall time of five renders of the budget's page as
// OpenMetrics + gzip, from the daemon's render benchmark: as a real scrape
// finds it, every canary series observed since the last one, and with
// nothing observed between renders (its histograms' protobufs cached).
func renderMs() (*[2]float64, error) {
	out, err := exec.Command("go", "test", "-run", "^$", "-bench", "MetricsRender/^(canary-observed|canary)$/openmetrics-gzip$", "-benchtime", "20x", "-count", "5", "./app/daemon/").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("the render benchmark: %v\n%s", err, out)
	}
	var medians [2]float64
	for i, page := range []string{"canary-observed", "canary"} {
		var ms []float64
		for _, m := range regexp.MustCompile(`(?m)^BenchmarkMetricsRender/`+page+`/openmetrics-gzip\S*\s+\d+\s+([\d.]+) ns/op`).FindAllSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			ms = append(ms, v/1e6)
		}
		if len(ms) != 5 {
			return nil, fmt.Errorf("the render benchmark printed %d results of the %s page, want 5:\n%s", len(ms), page, out)
		}
		slices.Sort(ms)
		medians[i] = ms[2]
	}
	return &medians, nil
}

// idleRSS is the built daemon's resident memory on the demo config, a
// minute after it is ready (bench/rss), and its anonymous part.
func idleRSS(bin string) (*[2]float64, error) {
	out, err := exec.Command("go", "run", "./bench/rss", "-bin", bin).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("bench/rss: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`VmRSS ([\d.]+) MiB.* RssAnon ([\d.]+) MiB`).FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("bench/rss printed no VmRSS and RssAnon:\n%s", out)
	}
	var v [2]float64
	v[0], _ = strconv.ParseFloat(string(m[1]), 64)
	v[1], _ = strconv.ParseFloat(string(m[2]), 64)
	return &v, nil
}

// ratioRun is one run's row that carries a ratio; ratioRuns sorts them:
// the goals judge the median run (each run measures both figures on the
// same machine minutes apart, and a shared machine moves both).
type ratioRun struct {
	ratio float64
	row   *Row
}

func ratioRuns(rows []Row, ratio func(*Row) (float64, bool)) []ratioRun {
	var runs []ratioRun
	for i := range rows {
		if v, ok := ratio(&rows[i]); ok {
			runs = append(runs, ratioRun{v, &rows[i]})
		}
	}
	slices.SortFunc(runs, func(a, b ratioRun) int { return cmp.Compare(a.ratio, b.ratio) })
	return runs
}

// spread says the median's runs, where there are several.
func spread(runs []ratioRun) string {
	if len(runs) < 2 {
		return ""
	}
	return fmt.Sprintf(" (the median of %d runs: %.2f× to %.2f×)", len(runs), runs[0].ratio, runs[len(runs)-1].ratio)
}

// costGoal is the CPU per request beside the bare reader's, on the median run.
func costGoal(rows []Row) (goal, bool) {
	runs := ratioRuns(rows, func(r *Row) (float64, bool) {
		if !strings.HasPrefix(r.Name, "cost ") || r.CPUPerRequestMs == nil || r.FloorCPUPerRequestMs == nil {
			return 0, false
		}
		return *r.CPUPerRequestMs / *r.FloorCPUPerRequestMs, true
	})
	if len(runs) == 0 {
		return goal{}, false
	}
	same := true
	for _, run := range runs {
		r := run.row
		same = same && r.Succeeded == r.Requests && r.Matched == r.Succeeded && r.FloorComplete == r.FloorRequests
	}
	mid := runs[(len(runs)-1)/2]
	r := mid.row
	measured := fmt.Sprintf("%.3f ms against %.3f ms: %.2f×", *r.CPUPerRequestMs, *r.FloorCPUPerRequestMs, mid.ratio) + spread(runs)
	measured += fmt.Sprintf("; %d of %d succeeded with every token (bare reader: %d of %d)", r.Matched, r.Requests, r.FloorComplete, r.FloorRequests)
	return goal{"CPU per streamed request, " + strings.TrimPrefix(r.Name, "cost "), "≤ 1.25 × a bare net/http reader's, same outcomes and tokens",
		measured, met(mid.ratio <= 1.25 && same)}, true
}

// spikeGoal is the spike, a finding rather than a gate: whether one
// thread polling every connection could reach 0.5 ms per request.
func spikeGoal(rows []Row) (goal, bool) {
	runs := ratioRuns(rows, func(r *Row) (float64, bool) {
		if r.PollerCPUPerRequestMs == nil || r.FloorCPUPerRequestMs == nil {
			return 0, false
		}
		return *r.PollerCPUPerRequestMs / *r.FloorCPUPerRequestMs, true
	})
	if len(runs) == 0 {
		return goal{}, false
	}
	mid := runs[(len(runs)-1)/2]
	r := mid.row
	measured := fmt.Sprintf("%.3f ms, %.2f× the bare reader's", *r.PollerCPUPerRequestMs, mid.ratio) + spread(runs)
	measured += fmt.Sprintf("; %d of %d with every token", r.PollerComplete, r.PollerRequests)
	return goal{"spike: one thread polls every connection, " + strings.TrimPrefix(r.Name, "cost "), "a finding: ≤ 0.5 ms per request?",
		measured, met(*r.PollerCPUPerRequestMs <= 0.5 && r.PollerComplete == r.PollerRequests)}, true
}
