// Package gate runs llmprobe's release gates — one burst now (gate), one
// burst's requests to two targets in alternating rounds (compare), a split
// burst's shards made one report (report merge) — each returning an
// Outcome, whose exit code is the contract with release pipelines.
package gate

// Outcome is how a gate ended; its value is the command's exit code.
type Outcome int

// The outcomes, the contract with release pipelines.
const (
	Passed     Outcome = 0 // every judged objective shown met (compare: within tolerance, or better)
	Failed     Outcome = 1 // the target was measured and a gate shown missed (compare: a metric shown worse)
	UsageError Outcome = 2 // a usage or configuration error
	// Unmeasured: not enough evidence (an interval across its target or
	// tolerance), measured with nothing judged, failures llmprobe's own
	// delay may explain, the target could not be measured, the report was
	// not written, or the named baseline is not comparable.
	Unmeasured Outcome = 3
)

// ExitCode is the process's exit code for o.
func (o Outcome) ExitCode() int { return int(o) }
