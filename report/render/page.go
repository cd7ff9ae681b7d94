package render

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// Page is what the HTML page says of a report beyond its fields, in the
// words and cells the text and Markdown renderings use.
type Page struct {
	// SaturationDetail says what client_saturated was decided from;
	// BoundText spells out the client's error bound and its parts.
	SaturationDetail, BoundText string
	// PromptCacheText says what the engine's prefix cache served;
	// EngineTimingsText which requests carried the engine's own timings
	// ("" without a TTFT split).
	PromptCacheText, EngineTimingsText string
	// TurnHeader names the by-turn table's columns, TurnRows are its cells.
	TurnHeader []string
	TurnRows   [][]string
	// KneeText says where a sweep's max rate lies, PlanText the capacity
	// and cost it implies ("" and none without a sweep).
	KneeText string
	PlanText []string
	// CurveNote says what a starred cell of the sweep's curve means ("" none).
	CurveNote string
	// TooFew says which percentiles rest on too few samples ("" none);
	// RepeatHead and RepeatRows a repeated burst's run-level figures.
	TooFew     string
	RepeatHead string
	// RetriesText says how many requests went out again ("" none).
	RetriesText string
	// TokensText says where the token counts came from, when not all from
	// usage or when usage contradicted the stream ("" otherwise).
	TokensText string
	// TranscriptionText is a transcriptions run's audio figures ("" for others).
	TranscriptionText string
	// QualityFailedText is why the first failed answer checks failed.
	QualityFailedText string
	// KVTransferText is disaggregated prefill's KV transfer, beside the
	// TTFT split ("" without).
	KVTransferText string
	// ReplicaHeader and ReplicaRows are the run by replica, SlowestReplica
	// which was slowest ("" without replicas).
	ReplicaHeader  []string
	ReplicaRows    [][]string
	SlowestReplica string
	RepeatRows     [][4]string
}

// PageOf says the report in words for its HTML page.
func PageOf(r *report.Report) Page {
	p := Page{SaturationDetail: saturationDetail(r), BoundText: boundText(r), PromptCacheText: PrefixCacheLine(r),
		TurnHeader: turnHeader(), TurnRows: turnRows(r)}
	if r.Sweep != nil {
		p.KneeText, p.PlanText, p.CurveNote = kneeText(r), planText(r), curveFootnote(r)
	}
	if r.TTFTBreakdown != nil {
		p.EngineTimingsText = engineTimingsText(r.TTFTBreakdown, r.Engine)
	}
	p.TooFew = TooFewText(r)
	p.RetriesText = retriesText(r)
	p.TokensText = TokensText(r)
	p.TranscriptionText = strings.TrimPrefix(TranscriptionText(r), "audio: ")
	p.QualityFailedText = QualityFailedText(r)
	p.KVTransferText = KVTransferText(r.EngineMetrics)
	if len(r.Replicas) > 0 {
		p.ReplicaHeader, p.ReplicaRows, p.SlowestReplica = replicaHeader(), replicaRows(r), SlowestReplicaText(r)
	}
	if r.Repeat != nil {
		p.RepeatHead, p.RepeatRows = repeatHead(r), repeatRows(r)
	}
	return p
}

// saturationDetail says what client_saturated was decided from, for the
// gate table, the checks and the HTML page. A report written before the
// bound existed was decided by a fixed dispatch delay threshold.
func saturationDetail(r *report.Report) string {
	var shards []string
	if r.Merged != nil {
		for _, s := range r.Merged.Shards {
			if s.ClientSaturated {
				shards = append(shards, fmt.Sprintf("%d/%d", s.Index, len(r.Merged.Shards)))
			}
		}
	}
	if len(shards) > 0 {
		return fmt.Sprintf("shard %s saturated by its own error bound", strings.Join(shards, ", "))
	}
	e := r.ErrorBound
	if e == nil {
		var p99 *float64
		if d := r.Latency["dispatch_delay"]; d.Count > 0 {
			p99 = &d.P99
		}
		return fmt.Sprintf("dispatch delay p99 %s (a report without an error bound)", delay(p99))
	}
	what, v := "error bound p99", e.P99
	if v == nil {
		what, v = "dispatch delay p99 (read side not sampled)", e.DispatchDelay.P99
	}
	cmp := "≤"
	if e.Saturated() {
		cmp = ">"
	}
	return fmt.Sprintf("%s %s %s %s, a tenth of the tightest objective (%s)", what, delay(v), cmp, delay(&e.Limit), e.Objective)
}

// boundText spells out the bound and its parts in one line, "n/a" where
// the report has none.
func boundText(r *report.Report) string {
	e := r.ErrorBound
	if e == nil {
		return "client error bound n/a (the report predates it)"
	}
	s := fmt.Sprintf("client error bound p99 %s max %s = dispatch delay (p99 %s, max %s)",
		delay(e.P99), delay(e.Max), delay(e.DispatchDelay.P99), delay(e.DispatchDelay.Max))
	if rt := e.Runtime; rt != nil {
		s += fmt.Sprintf(" + scheduling latency (p99 %s, max %s, n=%d) + GC pauses (p99 %s, max %s, n=%d) + self-probe read delay (p99 %s, max %s, n=%d)",
			delay(rt.SchedLatency.P99), delay(rt.SchedLatency.Max), rt.SchedLatency.Count,
			delay(rt.GCPause.P99), delay(rt.GCPause.Max), rt.GCPause.Count,
			delay(rt.ReadDelay.P99), delay(rt.ReadDelay.Max), rt.ReadDelay.Count)
	} else {
		s += " + read side n/a (not sampled)"
	}
	return s + "; " + throttledText(r)
}

// throttledText says how long llmprobe's cgroup's CPU quota held it off
// its CPUs, counted in each request's read delay over its flight.
func throttledText(r *report.Report) string {
	t := report.Throttled(r)
	if t == nil {
		return "CPU throttling n/a (no cgroup's cpu.stat read)"
	}
	return fmt.Sprintf("CPU throttled %s in %d periods of its quota (in each request's read delay over its flight)", delay(&t.Seconds), t.Periods)
}

// delay formats a client delay (figure.Delay), "n/a" without samples.
func delay(seconds *float64) string {
	if seconds == nil {
		return "n/a"
	}
	return figure.Delay(*seconds)
}

// engineTimingsText says which requests carried the engine's own timings:
// "412 of 420 (vllm_metrics 412)", or why the server side is not split,
// with how to get the timings only from an engine that has them.
func engineTimingsText(b *report.TTFTBreakdown, engine string) string {
	n := 0
	var by string
	for src, k := range b.EngineTimings {
		n += k
		by += fmt.Sprintf(" %s %d", src, k)
	}
	if n == 0 {
		return fmt.Sprintf("none of %d requests, so the server side is one part (server_other): %s", b.Requests, prober.WhyNoTimings(engine, false))
	}
	return fmt.Sprintf("%d of %d requests (%s)", n, b.Requests, by[1:])
}

// turnRows are the by-turn table's cells, formatted for reading (n/a where
// no figure), shared by the text, Markdown and HTML reports.
func turnRows(r *report.Report) [][]string {
	rows := make([][]string, 0, len(r.Turns))
	for _, t := range r.Turns {
		s := t.TTFT
		rows = append(rows, []string{t.Scenario, fmt.Sprint(t.Turn), fmt.Sprintf("%d/%d", t.Succeeded, t.Requests),
			ms(s, s.P50), pct(s, "p90"), pct(s, "p99"), na(t.PromptTokens, "%.0f", 1), na(t.CachedTokens, "%.0f", 1)})
	}
	return rows
}

// turnHeader names turnRows' columns.
func turnHeader() []string {
	return []string{"scenario", "turn", "ok/sent", "TTFT p50", "p90", "p99", "prompt tokens", "cached tokens"}
}
