package web

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/target"
)

// An upgrade run's change and verdict are on its report page and on
// /bursts, in words and numbers; one without a baseline says so.
func TestUpgradeOnPages(t *testing.T) {
	before := recordedReport(t)
	before.ID, before.Burst, before.Upgrade = "up-20261101T000000Z", "up", nil
	after := recordedReport(t)
	after.ID, after.Burst = "up-20261102T000000Z", "up"
	after.ExpectUpgrade(report.Facts{Engine: before.Engine, Version: "0.0.9", Model: before.Model}, 0.1)
	report.Judge(after, before, nil)
	lone := recordedReport(t)
	lone.ID, lone.Burst = "lone-20261102T000000Z", "lone"
	lone.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.0.9", Model: lone.Model}, 0.1)
	lone.RegressionSkipped = "no report of burst lone from vllm 0.0.9 (model m), before the change, to compare with"
	report.Judge(lone, nil, nil)
	srv, _ := pagesOver(t, before, after, lone)

	_, page := testkit.Get(srv.URL + "/bursts/" + after.ID)
	page = html.UnescapeString(page)
	wantAll(t, "the upgrade run's report page", page, `id="upgrade"`, after.Upgrade.Summary, "0.0.9", before.ID, `<table class="upgrade">`)
	// Each change's p-value as a number, never a pointer's address.
	upgrade := page[strings.Index(page, `<table class="upgrade">`):]
	upgrade = upgrade[:strings.Index(upgrade, "</table>")]
	for _, c := range after.Upgrade.Changes {
		if cell := `<td class="num">` + pValue(c.PValue) + `</td>`; c.PValue != nil && !strings.Contains(upgrade, cell) {
			t.Errorf("the upgrade table lacks %s's p-value %s", c.Metric, cell)
		}
	}
	if strings.Contains(page, "%!") {
		t.Errorf("the page has a formatting error: %s", page[strings.Index(page, "%!"):][:60])
	}
	if !strings.Contains(after.Upgrade.Summary, "→") {
		t.Errorf("summary %q names no change", after.Upgrade.Summary)
	}
	_, page = testkit.Get(srv.URL + "/bursts/" + lone.ID)
	wantAll(t, "a report without a baseline", html.UnescapeString(page), "There is no verdict: no report of burst lone from vllm 0.0.9")
	_, page = testkit.Get(srv.URL + "/bursts")
	page = html.UnescapeString(page)
	wantAll(t, "/bursts", page, "Upgrade run: "+after.Upgrade.Summary, "Upgrade run: "+lone.Upgrade.Summary)
}

// A scheduled run after the upgrade run is the newest, and /bursts still
// shows the upgrade verdict under it, linked.
func TestLastUpgradeStaysOnBursts(t *testing.T) {
	before := recordedReport(t)
	before.ID, before.Burst, before.Upgrade = "up-20261101T000000Z", "up", nil
	upgraded := recordedReport(t)
	upgraded.ID, upgraded.Burst = "up-20261102T000000Z", "up"
	upgraded.ExpectUpgrade(report.Facts{Engine: before.Engine, Version: "0.0.9", Model: before.Model}, 0.1)
	report.Judge(upgraded, before, nil)
	later := recordedReport(t)
	later.ID, later.Burst, later.Upgrade = "up-20261103T000000Z", "up", nil
	store := store.New(t.TempDir(), nil)
	for _, r := range []*report.Report{before, upgraded, later} {
		if err := store.Save(r, 5); err != nil {
			t.Fatal(err)
		}
	}
	targets := target.NewSet(log.NewNopLogger())
	t.Cleanup(targets.Stop)
	site := New(Options{Targets: targets, Store: store, Recent: 5, Failures: 5})
	site.Configure(testkit.Config(t, `targets: [{name: t, url: "http://127.0.0.1:1"}]
scenarios: [{name: s}]
bursts:
  - {name: up, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 5, schedule: {every: 1h, on_engine_change: {settle: 1m}}}
`))
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for range 2 { // the second from the cache
		_, page := testkit.Get(srv.URL + "/bursts")
		wantAll(t, "/bursts", html.UnescapeString(page), `Last upgrade run <a href="/bursts/`+upgraded.ID+`">`+upgraded.ID+`</a>: `+upgraded.Upgrade.Summary)
	}
}
