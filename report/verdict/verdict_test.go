package verdict_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config/workload"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/internal/reporttest"
	"github.com/llmprobe/llmprobe/report/verdict"
)

// A run overridden on the command line is no baseline for a configured
// run, nor the other way round.
func TestOverriddenRunsAreNotCompared(t *testing.T) {
	before, _ := reporttest.GoldenPair(t)
	b, s := reporttest.GoldenBurst()
	fa := reporttest.Fixture(t, "run-after.json")
	rep := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []workload.Scenario{s}})
	rep.Overrides = []string{"--rate=50"}
	verdict.Judge(rep, before, b.MaxRegression)
	if rep.Regression != nil || !strings.Contains(rep.RegressionSkipped, `overrides "", this run "--rate=50"`) {
		t.Errorf("regression %+v, skipped %q", rep.Regression, rep.RegressionSkipped)
	}
}
