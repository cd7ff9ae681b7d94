package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// Every line the daemon writes, its own and exporter-toolkit's, parses as
// one shape in --log.format=logfmt and json (level, ts, caller, msg; no
// second time key), and the burst's line prints figures as the pages do.
func TestOneLogFormat(t *testing.T) {
	url := serveSim(t, func(*sim.Config) {})
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios: [{name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: 1s}}]
canary: {interval: 1s}
bursts:
  - {name: quick, target: sim, scenarios: [{scenario: s}], arrival: {rate: 20}, requests: 8, schedule: {on_start: true}}
`, url)
	path := testkit.ConfigFile(t, cfg)
	figures := map[string]*regexp.Regexp{"ttft_p99": regexp.MustCompile(`^\d+\.\dms$`), "goodput": regexp.MustCompile(`^\d+\.\d%$`)}
	for _, format := range []string{"logfmt", "json"} {
		t.Run(format, func(t *testing.T) {
			d := startDaemon(t, "--config.file="+path, "--no-collector.gpu", "--log.format="+format)
			d.waitFor(t, "the burst's line", func() bool { return strings.Contains(d.logs(), "burst finished") })
			seen := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(d.logs()), "\n") {
				l := testkit.ParseLogLine(t, format, line)
				if !l.HasShape(format) {
					t.Errorf("keys %v, want %v first and no time key: %s", l.Keys, testkit.LogLead, line)
				}
				if ts, err := time.Parse(time.RFC3339Nano, l.Values["ts"]); err != nil || ts.Location() != time.UTC {
					t.Errorf("ts %q is not an RFC 3339 time in UTC: %s", l.Values["ts"], line)
				}
				seen[l.Values["msg"]] = true
				if l.Values["msg"] != "burst finished" {
					continue
				}
				for key, want := range figures {
					if !want.MatchString(l.Values[key]) {
						t.Errorf("%s=%q, want it like the pages print it (%s): %s", key, l.Values[key], want, line)
					}
				}
			}
			for _, msg := range []string{"Listening on", "configuration loaded", "burst finished"} {
				if !seen[msg] {
					t.Errorf("no %q line (exporter-toolkit's and the daemon's own):\n%s", msg, d.logs())
				}
			}
		})
	}
}
