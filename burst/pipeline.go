package burst

import (
	"errors"
	"fmt"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
)

// Pipeline is what becomes of a measured run's report, wired once for the
// daemon's schedules, the gate, a comparison's runs and a split burst's
// merge: judged against its baseline, then kept.
type Pipeline struct {
	// Store holds the previous report, for the regression verdict, and
	// keeps the new one; nil keeps none.
	Store *store.Store
	// Baseline, when set, is compared with instead of the previous report:
	// a baseline the user named, which is binding.
	Baseline *report.Report
}

// Finish judges rep, a run of a burst with maxRegression's gates whose
// store keeps keep reports (from: the facts before an engine change, for
// an upgrade run), and keeps it, even when the burst was cut short: a
// stopped burst is a result. The error is about reading or writing the
// store; the report is judged whatever it says.
func (p Pipeline) Finish(rep *report.Report, maxRegression []config.MaxRegression, keep int, from *report.Facts) error {
	previous, noBaseline, loadErr := p.baseline(rep.Burst, from)
	if rep.RegressionSkipped == "" {
		rep.RegressionSkipped = noBaseline
	}
	// The stored runs give a regression gate its figure's spread between
	// runs; a baseline the user named is binding.
	var history []*report.Report
	var histErr error
	if p.Store != nil && len(maxRegression) > 0 {
		history, histErr = p.Store.History(rep.Burst, max(keep, decide.MinHistory))
	}
	report.JudgeAgainst(rep, report.Baseline{Report: previous, Named: p.Baseline != nil, History: history}, maxRegression)
	if p.Store == nil {
		return loadErr
	}
	return errors.Join(loadErr, histErr, p.Store.Save(rep, keep))
}

// baseline is the report to compare with: the chosen one, else the stored
// previous one of the burst (for an upgrade run, the last from before the
// change). Without one it says why; without the previous
// report the run still counts, it only lacks a regression verdict.
func (p Pipeline) baseline(burst string, from *report.Facts) (*report.Report, string, error) {
	switch {
	case p.Baseline != nil:
		return p.Baseline, "", nil
	case p.Store == nil:
		return nil, "no report store to find a previous report in", nil
	case from != nil:
		prev, err := p.Store.LatestFrom(burst, *from)
		if err != nil {
			return nil, "the reports from before the engine change cannot be read: " + err.Error(), fmt.Errorf("reports of %s from %s: %w", burst, from, err)
		}
		if prev == nil {
			return nil, fmt.Sprintf("no report of burst %s from %s, before the change, to compare with", burst, from), nil
		}
		return prev, "", nil
	}
	prev, err := p.Store.Latest(burst)
	if err != nil {
		return nil, "the previous report cannot be read: " + err.Error(), fmt.Errorf("previous report of %s: %w", burst, err)
	}
	if prev == nil {
		return nil, "no previous report of burst " + burst, nil
	}
	return prev, "", nil
}
