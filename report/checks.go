package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/llmprobe/llmprobe/internal/redact"
)

// Status of one check of a run.
type Status string

const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"  // the target was measured and missed
	StatusSkipped Status = "skipped" // could not be judged; does not fail the run
	StatusWarning Status = "warning" // does not fail the run, but casts doubt on it
	StatusError   Status = "error"   // the target could not be measured, or the report not kept
)

// Check is one verdict of a run, as CI systems list them: a gate, or a
// condition of the whole run.
type Check struct {
	Name   string
	Status Status
	Detail string
}

// Checks lists every verdict behind Passed: the run measured requests and
// ran to its end (the brake did not stop it), each gate, the sweep's knee,
// and, as a warning, a saturated client. A check fails exactly where Judge
// failed the run.
func (r *Report) Checks() []Check {
	var out []Check
	if r.Requests == 0 {
		out = append(out, Check{"measured", StatusFailed, fmt.Sprintf("no request was measured (%d planned)", r.PlannedRequests)})
	} else {
		out = append(out, Check{"measured", StatusPassed, fmt.Sprintf("%d of %d planned requests sent", r.Requests, r.PlannedRequests)})
	}
	if r.Aborted {
		out = append(out, Check{"completed", StatusFailed, "aborted: " + r.AbortReason})
	} else {
		out = append(out, Check{"completed", StatusPassed, "ran to its end"})
	}
	for _, g := range r.Gates {
		st := StatusPassed
		switch {
		case g.Skipped:
			st = StatusSkipped
		case !g.Passed:
			st = StatusFailed
		}
		out = append(out, Check{g.Name, st, g.Detail})
	}
	if r.Sweep != nil {
		if r.MaxRateUnderSLO != nil {
			out = append(out, Check{"sweep", StatusPassed, fmt.Sprintf("held the SLO up to %.2f/s of %d steps", *r.MaxRateUnderSLO, len(r.Sweep))})
		} else {
			out = append(out, Check{"sweep", StatusFailed, fmt.Sprintf("no step of %d held the SLO", len(r.Sweep))})
		}
	}
	if r.ClientSaturated {
		out = append(out, Check{"client_saturation", StatusWarning, r.saturation() + ": these numbers describe the prober, not the target"})
	} else {
		out = append(out, Check{"client_saturation", StatusPassed, "the prober kept up with the schedule"})
	}
	return out
}

// WriteFile writes what render makes to path atomically, with secrets
// masked in the whole text (nil secrets masks nothing).
func WriteFile(path string, secrets *redact.Redactor, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Dir(abs), filepath.Base(abs), func(w io.Writer) error {
		_, err := w.Write(secrets.Bytes(buf.Bytes()))
		return err
	})
}

// saturation says why the client counts as saturated: its dispatch delay,
// or, merged, which shards' was.
func (r *Report) saturation() string {
	var shards []string
	if r.Merged != nil {
		for _, s := range r.Merged.Shards {
			if s.ClientSaturated {
				shards = append(shards, fmt.Sprintf("%d/%d", s.Index, len(r.Merged.Shards)))
			}
		}
	}
	if len(shards) > 0 {
		return fmt.Sprintf("the dispatch delay p99 of shard %s passed %s", strings.Join(shards, ", "), clientSaturatedDispatchP99)
	}
	return fmt.Sprintf("dispatch delay p99 %.2fms > %s", 1000*r.Latency["dispatch_delay"].P99, clientSaturatedDispatchP99)
}
