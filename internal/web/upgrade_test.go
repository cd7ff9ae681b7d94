package web

import (
	"html"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
)

// An upgrade run's change and verdict are on its report page and on
// /bursts, in words and numbers; one without a baseline says so.
func TestUpgradeOnPages(t *testing.T) {
	before := recordedReport(t)
	before.ID, before.Burst, before.Upgrade = "up-20261101T000000Z", "up", nil
	after := recordedReport(t)
	after.ID, after.Burst = "up-20261102T000000Z", "up"
	after.ExpectUpgrade(report.Facts{Engine: before.Engine, Version: "0.0.9", Model: before.Model}, 0.1)
	after.Judge(before)
	lone := recordedReport(t)
	lone.ID, lone.Burst = "lone-20261102T000000Z", "lone"
	lone.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.0.9", Model: lone.Model}, 0.1)
	lone.RegressionSkipped = "no report of burst lone from vllm 0.0.9 (model m), before the change, to compare with"
	lone.Judge(nil)
	srv, _ := pagesOver(t, before, after, lone)

	_, page := testkit.Get(srv.URL + "/bursts/" + after.ID)
	page = html.UnescapeString(page)
	wantAll(t, "the upgrade run's report page", page, `id="upgrade"`, after.Upgrade.Summary, "0.0.9", before.ID, `<table class="upgrade">`)
	if !strings.Contains(after.Upgrade.Summary, "→") {
		t.Errorf("summary %q names no change", after.Upgrade.Summary)
	}
	_, page = testkit.Get(srv.URL + "/bursts/" + lone.ID)
	wantAll(t, "a report without a baseline", html.UnescapeString(page), "There is no verdict: no report of burst lone from vllm 0.0.9")
	_, page = testkit.Get(srv.URL + "/bursts")
	page = html.UnescapeString(page)
	wantAll(t, "/bursts", page, "Upgrade run: "+after.Upgrade.Summary, "Upgrade run: "+lone.Upgrade.Summary)
}
