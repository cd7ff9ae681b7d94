// Package gate runs llmprobe's release gates — one burst now (gate), one
// burst's requests to two targets in alternating rounds (compare), a split
// burst's shards made one report (report merge) — each returning an
// Outcome, whose exit code is the contract with release pipelines.
package gate

// Outcome is how a gate ended; its value is the command's exit code.
type Outcome int

// The outcomes, the contract with release pipelines.
const (
	Passed     Outcome = 0
	Failed     Outcome = 1 // the target was measured and failed a gate (compare: a metric is worse)
	UsageError Outcome = 2 // a usage or configuration error
	// Unmeasured: the target could not be measured, a saturated client
	// failed it, the report was not written, the named baseline is not
	// comparable, or a comparison is inconclusive.
	Unmeasured Outcome = 3
)

// ExitCode is the process's exit code for o.
func (o Outcome) ExitCode() int { return int(o) }
