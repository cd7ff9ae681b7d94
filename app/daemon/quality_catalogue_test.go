package daemon

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
)

// The failure catalogue's wrong answers, end to end: against the sim
// answering each way wrong, a daemon's canaries succeed and fail their
// check (quality_checks_total{result="failed"} counts them, none passes,
// none is good), the target stays up, each request's log says why, and
// the burst's report has every request a success that is not good.
func TestQualityCatalogue(t *testing.T) {
	for _, tc := range testkit.QualityFaults() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.Shaped = tc.Shaped })
			path := testkit.ConfigFile(t, testkit.QualityConfig(tc, srv.URL))
			storage := t.TempDir()
			d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage, HistoryRecent: 5, HistoryFailures: 5})
			series := func(name, labels string) *regexp.Regexp {
				return regexp.MustCompile(`(?m)^llmprobe_` + name + `\{` + labels + `[^}]*scenario="s",target="faulty",traffic="canary"\} ([0-9]+)`)
			}
			failed := series("quality_checks_total", `model="m",result="failed",`)
			var metrics string
			testkit.WaitUntil(t, "a failed quality check and the burst's report", 20*time.Second, func() bool {
				_, metrics = d.get("/metrics")
				rep, _ := store.New(storage, nil).Latest("catalogue")
				return failed.MatchString(metrics) && failed.FindStringSubmatch(metrics)[1] != "0" && rep != nil
			})
			for name, labels := range map[string]string{"quality_checks_total": `model="m",result="passed",`, "good_requests_total": `model="m",`} {
				if m := series(name, labels).FindStringSubmatch(metrics); m != nil && m[1] != "0" {
					t.Errorf("%s{%s…} is %s, want none", name, labels, m[1])
				}
			}
			if !strings.Contains(metrics, `llmprobe_target_up{target="faulty"} 1`) || !series("requests_total", `model="m",outcome="success",`).MatchString(metrics) {
				t.Errorf("a wrong answer took the target down, or was no success:\n%s", grepLines(metrics, "faulty"))
			}

			// The request's log says why it is not good.
			_, landing := d.get("/")
			link := regexp.MustCompile(`/probe\?id=[0-9]+`).FindString(landing)
			_, log := d.get(link)
			if link == "" || !strings.Contains(log, html.EscapeString("answer check failed: "+tc.Reason)) {
				t.Errorf("the request's log (%s) does not say %q:\n%s", link, tc.Reason, log)
			}

			rep, _ := store.New(storage, nil).Latest("catalogue")
			if rep.Outcomes[prober.OutcomeSuccess] != rep.Requests || rep.Requests != 6 || rep.Goodput.Ratio == nil || *rep.Goodput.Ratio != 0 || len(rep.Failures) != 0 {
				t.Errorf("report: outcomes %v of %d, goodput %v, failures %v; want 6 successes, none good", rep.Outcomes, rep.Requests, rep.Goodput.Ratio, rep.Failures)
			}
		})
	}
}
