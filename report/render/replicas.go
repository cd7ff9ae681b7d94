package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/report"
)

// replicaHeader names replicaRows' columns.
func replicaHeader() []string {
	return []string{"replica", "ok/sent", "TTFT p50", "TTFT p99", "e2e p50", "e2e p99"}
}

// replicaRows are the run by replica, each percentile with its evidence.
func replicaRows(r *report.Report) [][]string {
	rows := make([][]string, 0, len(r.Replicas))
	for _, rep := range r.Replicas {
		rows = append(rows, []string{rep.Replica, fmt.Sprintf("%d/%d", rep.Succeeded, rep.Requests),
			ms(rep.TTFT, rep.TTFT.P50), pct(rep.TTFT, "p99"), ms(rep.E2E, rep.E2E.P50), pct(rep.E2E, "p99")})
	}
	return rows
}

// SlowestReplicaText names the replica with the highest TTFT p50 (e2e's
// where no request had a first token) against the fastest: a fact of the
// run, not a verdict; "" with fewer than two replicas to compare.
func SlowestReplicaText(r *report.Report) string {
	metric, of := "TTFT", func(rep report.ReplicaSummary) (float64, int) { return rep.TTFT.P50, rep.TTFT.Count }
	if len(r.Latency) > 0 && r.Latency["ttft"].Count == 0 {
		metric, of = "e2e", func(rep report.ReplicaSummary) (float64, int) { return rep.E2E.P50, rep.E2E.Count }
	}
	var slow, fast *report.ReplicaSummary
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		v, n := of(*rep)
		if n == 0 {
			continue
		}
		if sv, _ := of(deref(slow)); slow == nil || v > sv {
			slow = rep
		}
		if fv, _ := of(deref(fast)); fast == nil || v < fv {
			fast = rep
		}
	}
	if slow == nil || slow == fast {
		return ""
	}
	sv, sn := of(*slow)
	fv, fn := of(*fast)
	return fmt.Sprintf("slowest replica by %s p50: %s, %s over %d requests, against %s, %s over %d", metric, slow.Replica, figure.Ms(sv), sn, fast.Replica, figure.Ms(fv), fn)
}

func deref(r *report.ReplicaSummary) report.ReplicaSummary {
	if r == nil {
		return report.ReplicaSummary{}
	}
	return *r
}

// writeReplicas writes the by-replica table and the slowest replica.
func writeReplicas(out io.Writer, r *report.Report) {
	if len(r.Replicas) == 0 {
		return
	}
	fmt.Fprintln(out, "\nby replica (the target's replicas header; other: a value not configured):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(replicaHeader(), "\t")+"\t")
	for _, row := range replicaRows(r) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	if s := SlowestReplicaText(r); s != "" {
		fmt.Fprintln(out, s)
	}
}

// markdownReplicas writes the by-replica table.
func markdownReplicas(b *strings.Builder, r *report.Report) {
	if len(r.Replicas) == 0 {
		return
	}
	b.WriteString("\nBy replica:\n\n| " + strings.Join(replicaHeader(), " | ") + " |\n|---|--:|--:|--:|--:|--:|\n")
	for _, row := range replicaRows(r) {
		b.WriteString("| " + md(strings.Join(row, " | ")) + " |\n")
	}
	if s := SlowestReplicaText(r); s != "" {
		fmt.Fprintf(b, "\n%s.\n", md(s))
	}
}
