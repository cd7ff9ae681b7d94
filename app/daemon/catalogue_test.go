package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
)

// The failure catalogue, end to end: for each way a target breaks, a daemon
// runs canaries and a burst against it. Each case checks the outcome and
// reason in the burst report (every planned request accounted for), the
// failure metric and target_up, and the one log line that says the target
// went down and why. (The gate's tests try it too.)
func TestFailureCatalogue(t *testing.T) {
	for _, tc := range testkit.Faults() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			cfg := testkit.FaultConfig(tc, tc.URL(t))
			path := testkit.ConfigFile(t, cfg)

			// The daemon: canaries and the burst.
			logs := &testkit.Buffer{}
			storage := t.TempDir()
			d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage, HistoryRecent: 5, HistoryFailures: 5,
				Logger: level.NewFilter(log.NewLogfmtLogger(logs), level.AllowInfo())})
			store := store.New(storage, nil)
			var rep *report.Report
			testkit.WaitUntil(t, "the burst's report and the target-down line", 20*time.Second, func() bool {
				rep, _ = store.Latest("catalogue")
				return rep != nil && strings.Contains(logs.String(), `msg="target down"`)
			})

			// The report: every planned request, each with the outcome and why.
			if rep.Outcomes[prober.Outcome(tc.Outcome)] != rep.Requests || rep.Requests+notSentCount(rep) != rep.PlannedRequests || rep.PlannedRequests != 6 {
				t.Errorf("report: %d planned, %d sent, outcomes %v, not sent %v; want every sent one %s", rep.PlannedRequests, rep.Requests, rep.Outcomes, rep.NotSent, prober.Outcome(tc.Outcome))
			}
			if len(rep.Failures) == 0 || rep.Failures[0].Phase != tc.Phase || rep.Failures[0].Reason != tc.Reason || !strings.Contains(rep.Failures[0].Example, tc.In) {
				t.Errorf("report failures %+v; want %s in %s, %q", rep.Failures, tc.Reason, tc.Phase, tc.In)
			}
			if rep.Passed || rep.Latency["ttft"].Count != 0 {
				t.Errorf("passed %v with %d TTFT samples", rep.Passed, rep.Latency["ttft"].Count)
			}

			// The metrics.
			_, metrics := d.get("/metrics")
			failures := regexp.MustCompile(`(?m)^llmprobe_request_failures_total\{[^}]*phase="` + tc.Phase + `",reason="` + tc.Reason + `",[^}]*target="faulty"[^}]*\} [1-9]`)
			if !failures.MatchString(metrics) || !strings.Contains(metrics, `llmprobe_target_up{target="faulty"} 0`) ||
				!strings.Contains(metrics, `llmprobe_target_phase_duration_seconds{phase="connect",target="faulty"}`) {
				t.Errorf("/metrics lacks the failure (%s in %s), target_up 0 or the phase gauges:\n%s", tc.Reason, tc.Phase, grepLines(metrics, "faulty"))
			}

			// The log: one line that says the target went down, and why;
			// nothing per request.
			out := logs.String()
			down := grepLines(out, `msg="target down"`)
			if strings.Count(out, `msg="target down"`) != 1 || !strings.Contains(down, "level=warn") || !strings.Contains(down, "reason="+tc.Reason) {
				t.Errorf("want one warn line saying the target is down with reason %s; the log:\n%s", tc.Reason, out)
			}
			// At most: the target down, and its info unavailable.
			if n := strings.Count(out, "level=warn"); n > 2 {
				t.Errorf("%d warn lines for one broken target: per-request logging?\n%s", n, out)
			}
		})
	}
}

func notSentCount(rep *report.Report) int {
	n := 0
	for _, ns := range rep.NotSent {
		n += ns.Count
	}
	return n
}

// A burst in progress when a reload removes it, or when llmprobe stops, is
// stopped with that reason, and its report is written before Run returns.
func TestStoppedBurstsAreReported(t *testing.T) {
	hang := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) { testkit.EventStream(w); testkit.WaitForClient(r) })
	burstConfig := func(names ...string) string {
		cfg := fmt.Sprintf(`targets: [{name: slow, url: %q, model: m, api: completions, timeout: 30s}]
scenarios: [{name: kept, prompt_tokens: 8, output_tokens: 4}, {name: removed, prompt_tokens: 8, output_tokens: 4}]
canary: {probes: [{targets: [], scenarios: [kept], interval: 1h}]}
bursts:
`, hang.URL)
		for _, n := range names {
			cfg += fmt.Sprintf("  - {name: %s, target: slow, scenarios: [{scenario: %s}], arrival: {rate: 20}, duration: 1m, schedule: {on_start: true}}\n", n, n)
		}
		return cfg
	}
	path := testkit.ConfigFile(t, burstConfig("kept", "removed"))
	storage := t.TempDir()
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage})
	testkit.WaitUntil(t, "both bursts' requests in flight", 10*time.Second, func() bool {
		_, metrics := d.get("/metrics")
		inFlight := regexp.MustCompile(`llmprobe_in_flight_requests\{scenario="(kept|removed)",target="slow",traffic="burst"\} [1-9]`)
		return len(inFlight.FindAllString(metrics, -1)) == 2
	})
	if err := os.WriteFile(path, []byte(burstConfig("kept")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	store := store.New(storage, nil)
	testkit.WaitUntil(t, "the removed burst's report", 10*time.Second, func() bool {
		rep, _ := store.Latest("removed")
		return rep != nil
	})
	if err := d.shutdown(); err != nil {
		t.Fatal(err)
	}
	for burst, why := range map[string]string{"removed": "a configuration reload removed", "kept": "llmprobe is shutting down"} {
		rep, err := store.Latest(burst)
		if err != nil || rep == nil {
			t.Fatalf("%s: no report (%v)", burst, err)
		}
		if !rep.Aborted || !strings.Contains(rep.AbortReason, why) || rep.Outcomes[prober.OutcomeCancelled] == 0 ||
			len(rep.NotSent) != 1 || !strings.Contains(rep.NotSent[0].Reason, why) || rep.Requests+notSentCount(rep) != rep.PlannedRequests {
			t.Errorf("%s: aborted %v (%s), outcomes %v, not sent %v, %d planned", burst, rep.Aborted, rep.AbortReason, rep.Outcomes, rep.NotSent, rep.PlannedRequests)
		}
	}
}
