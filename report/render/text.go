// Package render writes burst reports for people and CI systems: the table
// `llmprobe gate` prints, a Markdown step summary, JUnit XML, and the words
// the HTML page shows.
package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// na formats a figure, or "n/a" without one.
func na(v *float64, format string, scale float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, scale**v)
}

// msNA is a latency in seconds as figure.Ms prints it, or "n/a" for nil.
func msNA(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return figure.Ms(*v)
}

// ms formats one of s's figures in milliseconds, or "n/a" without samples.
func ms(s stats.Summary, v float64) string {
	if s.Count == 0 {
		return "n/a"
	}
	return figure.Ms(v)
}

// retriesText says how many requests went out again on a new connection,
// "" when none did: "; 3 sent again on a new connection (server_closed_idle 3)".
func retriesText(r *report.Report) string {
	if len(r.Retries) == 0 {
		return ""
	}
	total, why := 0, make([]string, 0, len(r.Retries))
	for reason, n := range r.Retries {
		total += n
		why = append(why, fmt.Sprintf("%s %d", reason, n))
	}
	sort.Strings(why)
	return fmt.Sprintf("; %d sent again on a new connection, the reused one closed before any byte (%s)", total, strings.Join(why, ", "))
}

// TokensText says where the answers' output token counts came from, when
// not all from the server's usage, and how often the usage contradicted the
// stream: "output tokens: 18 answers from usage, 2 from the stream's deltas
// (usage below the deltas 2: the deltas counted)". "" when every count
// came from usage and none contradicted it.
func TokensText(r *report.Report) string {
	if len(r.TokenMismatches) == 0 && (len(r.TokenSources) == 0 || len(r.TokenSources) == 1 && r.TokenSources[prober.TokensFromUsage] > 0) {
		return ""
	}
	words := map[prober.TokenSource]string{prober.TokensFromUsage: "from usage", prober.TokensFromChunks: "from the stream's deltas", prober.TokensFromText: "estimated from the text"}
	var parts []string
	for _, s := range []prober.TokenSource{prober.TokensFromUsage, prober.TokensFromChunks, prober.TokensFromText} {
		if n := r.TokenSources[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, words[s]))
		}
	}
	line := "output tokens: answers " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		line = "output tokens: no answer counted"
	}
	if n := r.TokenMismatches[prober.TokenMismatchBelowDeltas]; n > 0 {
		line += fmt.Sprintf("; usage below the stream's deltas %d× (the deltas counted)", n)
	}
	if n := r.TokenMismatches[prober.TokenMismatchAboveMax]; n > 0 {
		line += fmt.Sprintf("; usage above max_tokens %d× (failed)", n)
	}
	return line
}

// QualityFailedText says why the first answers that failed their checks
// failed: "answer checks that failed, the first 2: golden line 2: …; …".
// "" when none failed.
func QualityFailedText(r *report.Report) string {
	if len(r.QualityFailed) == 0 {
		return ""
	}
	return fmt.Sprintf("answer checks that failed, the first %d: %s", len(r.QualityFailed), strings.Join(r.QualityFailed, "; "))
}

// TranscriptionText says what a transcriptions run's audio came to:
// "audio: 120.0s transcribed by 40 requests, RTFx 35.2, 3.00 audio s/s,
// WER 4.2% (13 errors in 310 reference words)". "" for other runs.
func TranscriptionText(r *report.Report) string {
	t := r.Transcription
	if t == nil {
		return ""
	}
	line := fmt.Sprintf("audio: %.1fs transcribed by %d requests, RTFx %s, %s audio s/s", t.AudioSeconds, t.Requests, na(t.RTFx, "%.1f", 1), na(t.AudioPerSecond, "%.2f", 1))
	if t.WER == nil {
		return line + ", WER n/a (no clip with a reference transcript)"
	}
	return line + fmt.Sprintf(", WER %s (%d errors in %d reference words)", na(t.WER, "%.1f%%", 100), t.WordErrors, t.ReferenceWords)
}

// outcomeCounts lists how the planned requests ended: success=18,
// not_sent=2 (brake).
func outcomeCounts(r *report.Report) []string {
	out := make([]string, 0, len(r.Outcomes)+len(r.NotSent))
	for o, n := range r.Outcomes {
		out = append(out, fmt.Sprintf("%s=%d", o, n))
	}
	sort.Strings(out)
	for _, ns := range r.NotSent {
		out = append(out, fmt.Sprintf("not_sent=%d (%s)", ns.Count, ns.Reason))
	}
	return out
}

// Text writes the report as `llmprobe gate --verbose` prints it: Brief's
// lines, then every detail (all percentiles and their intervals, the
// client's error bound, the TTFT split, the turns, the engine's view).
func Text(out io.Writer, r *report.Report) {
	write(out, r, true)
}

// Brief writes the report top-down as `llmprobe gate` prints it: the
// verdict and why, what was measured, the gates, a short latency table and
// the goodput; the details are in Text and the report files.
func Brief(out io.Writer, r *report.Report) {
	write(out, r, false)
}

func write(out io.Writer, r *report.Report, verbose bool) {
	fmt.Fprintln(out, "gate: "+VerdictLine(r))
	if r.BaselineNote != "" {
		fmt.Fprintln(out, r.BaselineNote)
	}
	writeHead(out, r)
	writeVerdict(out, r)
	fmt.Fprintln(out)
	if verbose {
		writeLatency(out, r)
		writeIntervals(out, r)
		fmt.Fprintln(out, boundText(r))
		writeBreakdown(out, r)
		writeTurns(out, r)
		fmt.Fprintln(out)
	} else {
		writeShortLatency(out, r)
	}
	fmt.Fprintf(out, "throughput %s; goodput %s req/s, %s output tok/s, ratio %s%s\n", throughputText(r),
		na(r.Goodput.Requests, "%.2f", 1), na(r.Goodput.OutputTokens, "%.1f", 1), na(r.Goodput.Ratio, "%.1f%%", 100), goodputInterval(r))
	writeReplicas(out, r)
	writeRepeat(out, r)
	writeSweep(out, r)
	writeRegression(out, r)
	if verbose {
		writeEngine(out, r)
	}
	writeUpgrade(out, r)
	if !verbose && r.Requests > 0 {
		fmt.Fprintln(out, "details (percentile intervals, the client's error bound, the TTFT split, the engine's view): --verbose, and the report file")
	}
}

// VerdictLine is the run's verdict and why, as the gate's first line says
// it after "gate: ".
func VerdictLine(r *report.Report) string {
	if r.Passed && r.Shard != nil {
		return fmt.Sprintf("passed (%s measured its share and ran to its end; the merged report is the burst's verdict)", r.Shard)
	}
	return report.VerdictOf(r).Line()
}

// writeHead says what was measured and how the planned requests ended.
func writeHead(out io.Writer, r *report.Report) {
	fmt.Fprintf(out, "burst %s  target %s  model %s  engine %s %s  report %s\n", r.Burst, r.Target, r.Model, r.Engine, r.EngineVersion, r.ID)
	if len(r.Overrides) > 0 {
		fmt.Fprintf(out, "overridden for this run: %s\n", strings.Join(r.Overrides, " "))
	}
	writeSplit(out, r)
	fmt.Fprintf(out, "rate %.2f/s planned, %s/s achieved  %d of %d planned requests sent (+%d warmup)  %.1fs\n",
		r.Rate, na(r.AchievedRate, "%.2f", 1), r.Requests, r.PlannedRequests, r.WarmupRequests, r.DurationSeconds)
	fmt.Fprintf(out, "outcomes %s%s\n", strings.Join(outcomeCounts(r), " "), retriesText(r))
	if line := TranscriptionText(r); line != "" {
		fmt.Fprintln(out, line)
	}
	if line := QualityFailedText(r); line != "" {
		fmt.Fprintln(out, line)
	}
	if line := TokensText(r); line != "" {
		fmt.Fprintln(out, line)
	}
	if t := r.Trace; t != nil {
		fmt.Fprintf(out, "trace %s (%s, speedup %g): %d records replayed; %d prompts and %d outputs clamped to the scenario's maxima; %d lines skipped\n",
			t.File, t.Format, t.Speedup, t.Records, t.ClampedPrompt, t.ClampedOutput, t.SkippedLines)
		if t.Error != "" {
			fmt.Fprintf(out, "  trace: %s\n", t.Error)
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintln(out, "why requests failed:")
		for _, f := range r.Failures {
			status := ""
			if f.Status != 0 {
				status = fmt.Sprintf(" HTTP %d", f.Status)
			}
			fmt.Fprintf(out, "  %4d × %s%s, first %s, last %s: %s\n", f.Count, f.Outcome, status,
				f.First.Format("15:04:05.000"), f.Last.Format("15:04:05.000"), f.Text())
		}
	}
}

// writeLatency writes every latency's percentiles, mean and maximum.
func writeLatency(out io.Writer, r *report.Report) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tsamples\tp50\tp90\tp95\tp99\tp99.9\tmean\tmax\t")
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", m, s.Count, pct(s, "p50"), pct(s, "p90"), pct(s, "p95"), pct(s, "p99"), pct(s, "p99.9"), ms(s, s.Mean), ms(s, s.Max))
	}
	_ = tw.Flush()
}

// writeShortLatency writes p50, p90 and p99 of the latencies the
// objectives are set on, with their samples.
func writeShortLatency(out io.Writer, r *report.Report) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tsamples\tp50\tp90\tp99\t")
	metrics := []string{"ttft", "itl", "tpot", "e2e"}
	if r.Latency["ttft_tool"].Count > 0 || offersTools(r) {
		metrics = append(metrics, "ttft_tool") // n/a when no request called one
	}
	for _, m := range metrics {
		s := r.Latency[m]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", m, s.Count, pct(s, "p50"), pct(s, "p90"), pct(s, "p99"))
	}
	_ = tw.Flush()
}

// offersTools reports whether a scenario of r's burst has tools.
func offersTools(r *report.Report) bool {
	for _, sc := range r.Scenarios {
		if sc["tools"] != nil {
			return true
		}
	}
	return false
}

// writeVerdict writes the gates, what else failed the run, the GPUs and
// the client's saturation.
func writeVerdict(out io.Writer, r *report.Report) {
	fmt.Fprintln(out)
	for _, g := range r.Gates {
		verdict := "PASS"
		switch {
		case g.Skipped:
			verdict = "SKIP"
		case g.Undecided:
			verdict = "NOT ENOUGH EVIDENCE"
		case !g.Passed && inconclusive(r):
			verdict = "INCONCLUSIVE"
		case !g.Passed:
			verdict = "FAIL"
		}
		fmt.Fprintf(out, "%s  %s: %s\n", verdict, g.Name, g.Detail)
	}
	if r.Aborted {
		fmt.Fprintf(out, "FAIL  aborted: %s\n", r.AbortReason)
	}
	if r.Requests == 0 {
		fmt.Fprintln(out, "FAIL  no request was measured")
	}
	writeGPU(out, r)
	if r.ClientSaturated {
		fmt.Fprintf(out, "WARN  client saturated: %s; %s\n", saturationDetail(r), saturationConsequence(r))
	} else {
		fmt.Fprintf(out, "PASS  client not saturated: %s\n", saturationDetail(r))
	}
}

// writeSplit says what a shard's or a merged report is part of.
func writeSplit(out io.Writer, r *report.Report) {
	if p := r.Shard; p != nil {
		fmt.Fprintf(out, "%s of a split burst (its share of the %g/s: %.4g/s), offsets from %s, seed %d: %s\n",
			p, r.Rate, r.Rate/float64(p.Count), p.Start.Format(time.RFC3339Nano), r.Seed, p.PerShard)
	}
	if m := r.Merged; m != nil {
		ids := make([]string, len(m.Shards))
		for i, s := range m.Shards {
			ids[i] = s.ID
		}
		fmt.Fprintf(out, "merged from %d shards, offsets from %s: %s\n", len(m.Shards), m.Start.Format(time.RFC3339Nano), strings.Join(ids, " "))
		for _, a := range m.Approximate {
			fmt.Fprintf(out, "approximate: %s\n", a)
		}
	}
}

// regressionGateSkipped says a SKIP line of a regression gate already
// gave the reason.
func regressionGateSkipped(r *report.Report) bool {
	for _, g := range r.Gates {
		if g.Skipped && strings.HasPrefix(g.Name, "regression") {
			return true
		}
	}
	return false
}

func writeRegression(out io.Writer, r *report.Report) {
	g := r.Regression
	if g == nil {
		if r.RegressionSkipped != "" && !regressionGateSkipped(r) {
			fmt.Fprintf(out, "regression check skipped: %s\n", r.RegressionSkipped)
		}
		return
	}
	fmt.Fprintf(out, "regression vs %s:", g.PreviousID)
	for _, m := range g.Metrics {
		if m.Quantile != "p99" || (m.Metric != "ttft" && m.Metric != "tpot" && m.Metric != "e2e") {
			continue
		}
		var notes []string
		if m.TooFew {
			notes = append(notes, "too few")
		}
		if m.PValue != nil {
			sig := "not significant"
			if m.Significant {
				sig = "significant"
			}
			notes = append(notes, figure.P(*m.PValue)+", "+sig)
		}
		fmt.Fprintf(out, "  %s p99 %s", m.Metric, na(m.Ratio, "×%.2f", 1))
		if len(notes) > 0 {
			fmt.Fprintf(out, " (%s)", strings.Join(notes, "; "))
		}
	}
	fmt.Fprintln(out)
	if g.EngineVersionChanged {
		fmt.Fprintf(out, "engine version changed since %s: %s → %s\n", g.PreviousID, g.PreviousEngineVersion, r.EngineVersion)
	}
}

// writeUpgrade states an upgrade run's change and verdict.
func writeUpgrade(out io.Writer, r *report.Report) {
	u := r.Upgrade
	if u == nil {
		return
	}
	baseline := "no baseline"
	if u.BaselineID != "" {
		baseline = "vs " + u.BaselineID
	}
	fmt.Fprintf(out, "upgrade (%s): %s\n", baseline, u.Summary)
}

func writeGPU(out io.Writer, r *report.Report) {
	g := r.GPU
	if g == nil {
		return
	}
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

// writeBreakdown writes the TTFT split table.
func writeBreakdown(out io.Writer, r *report.Report) {
	b := r.TTFTBreakdown
	switch {
	case b == nil && r.Latency["ttft"].Count == 0:
		fmt.Fprintln(out, "\nTTFT split: n/a (no request had a first token to split: embeddings, rerank and unstreamed answers have none)")
		return
	case b == nil:
		fmt.Fprintln(out, "\nTTFT split: n/a (no successful request was split)")
		return
	}
	fmt.Fprintf(out, "\nTTFT split over %d requests; engine timings from %s\n", b.Requests, engineTimingsText(b, r.Engine))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "component\tsamples\tp50\tp90\tp99\tmean\tshare\t")
	for _, c := range b.Components {
		s := c.Summary
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.1f%%\t\n", c.Component, s.Count, ms(s, s.P50), pct(s, "p90"), pct(s, "p99"), ms(s, s.Mean), 100*c.Share)
	}
	_ = tw.Flush()
	if kv := KVTransferText(r.EngineMetrics); kv != "" {
		fmt.Fprintln(out, kv)
	}
}

// writeTurns writes the prefix cache line and the by-turn table, when
// there is one.
func writeTurns(out io.Writer, r *report.Report) {
	fmt.Fprintln(out, "\n"+PrefixCacheLine(r))
	if len(r.Turns) == 0 {
		return
	}
	fmt.Fprintln(out, "\n"+TurnsHeading(r.Turns)+":")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(turnHeader(), "\t")+"\t")
	for _, row := range turnRows(r) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
}

// throughputText is the run's throughput: requests, the inputs of an
// embeddings or rerank run, and output tokens.
func throughputText(r *report.Report) string {
	inputs := ""
	if r.Throughput.Inputs != nil {
		inputs = ", " + na(r.Throughput.Inputs, "%.1f", 1) + " inputs/s"
	}
	return na(r.Throughput.Requests, "%.2f", 1) + " req/s" + inputs + ", " + na(r.Throughput.OutputTokens, "%.1f", 1) + " output tok/s"
}
