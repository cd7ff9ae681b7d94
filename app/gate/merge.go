package gate

import (
	"context"
	"fmt"
	"io"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/push"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/report/store"
)

// MergeOptions are the flags of `llmprobe report merge`.
type MergeOptions struct {
	// Files are the shards' report files; Output gets the merged report,
	// judged against Baseline's report where it names one.
	Files            []string
	Output, Baseline string
	// Push, if set, gets the merged run.
	Push           *push.Pusher
	Stdout, Stderr io.Writer
}

// Merge makes one report of a burst split over replicas from the reports
// of all its shards, finished by the one pipeline (judged against the
// named baseline), prints it, writes it and returns the outcome.
func Merge(o MergeOptions) Outcome {
	stdout, stderr := o.Stdout, o.Stderr
	parts := make([]report.ShardReport, 0, len(o.Files))
	for _, f := range o.Files {
		rep, err := store.Read(f)
		if err != nil {
			fmt.Fprintf(stderr, "llmprobe report merge: %v\n", err)
			return UsageError
		}
		parts = append(parts, report.ShardReport{Name: f, Report: rep})
	}
	var baseline *report.Report
	if o.Baseline != "" {
		var err error
		if baseline, err = store.Read(o.Baseline); err != nil {
			fmt.Fprintf(stderr, "llmprobe report merge: --baseline: %v\n", err)
			return UsageError
		}
	}
	merged, b, err := report.MergeShards(parts)
	if err != nil {
		fmt.Fprintf(stderr, "llmprobe report merge: %v\n", err)
		return UsageError
	}
	if baseline == nil {
		merged.RegressionSkipped = "no baseline given (llmprobe report merge --baseline FILE)"
	}
	_ = burst.Pipeline{Baseline: baseline}.Finish(merged, b.MaxRegression, 0, nil) // no store: nothing to read or write
	render.Text(stdout, merged)
	defer push.Publish(context.Background(), o.Push, "report merge", push.JobGate, merged, stderr)
	if err := store.WriteJSON(o.Output, merged, nil); err != nil {
		fmt.Fprintf(stderr, "llmprobe report merge: writing %s: %v\n", o.Output, err)
		return Unmeasured
	}
	switch {
	case merged.Requests == 0:
		fmt.Fprintf(stderr, "llmprobe report merge: no shard measured a request of burst %s\n", merged.Burst)
		return Unmeasured
	case report.Refused(merged) != "":
		fmt.Fprintf(stderr, "llmprobe report merge: --baseline %s: %s\n", o.Baseline, report.Refused(merged))
		return Unmeasured
	case merged.Verdict == decide.Inconclusive, merged.Verdict == decide.NotEnough, merged.Verdict == decide.NothingJudged:
		fmt.Fprintf(stderr, "llmprobe report merge: %s: %s\n", merged.Verdict, merged.VerdictReason)
		return Unmeasured
	case !merged.Passed:
		return Failed
	}
	return Passed
}
