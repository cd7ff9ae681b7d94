package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/target"
)

// The landing page's last hour: a sparkline per figure of each canary pair
// with its newest value beside it, n/a in words where a figure does not
// apply (an embeddings answer's TTFT) or has no samples (a refused
// target's); and each failure shown once: the probes' table marks the
// recent ones, the older ones are listed apart.
func TestLandingPageTrendAndFailuresOnce(t *testing.T) {
	sim, _ := testkit.StartSim(t, nil)
	cfg := testkit.Config(t, fmt.Sprintf(`targets:
  - {name: chat, url: %[1]q}
  - {name: embed, url: %[1]q, api: embeddings}
  - {name: down, url: %[2]q}
scenarios:
  - {name: s, prompt_tokens: 8, output_tokens: 4}
  - {name: q, inputs: 2, prompt_tokens: 8}
canary:
  probes:
    - {targets: [chat, down], scenarios: [s]}
    - {targets: [embed], scenarios: [q]}
`, sim.URL, testkit.RefusedURL(t)))
	targets := target.NewSet(log.NewNopLogger())
	t.Cleanup(targets.Stop)
	targets.Apply(context.Background(), cfg)
	// The page reads the trend at 30 s into a minute, whenever the test runs.
	now := time.Now().Truncate(time.Minute).Add(30 * time.Second)
	site := New(Options{Targets: targets, Store: store.New(t.TempDir(), nil), Recent: 2, Failures: 5, Requests: 20,
		Schedules: func() []config.Pair { return cfg.CanaryPairs() }, Now: func() time.Time { return now }})
	site.Configure(cfg)
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	scenario := map[string]config.Scenario{"chat": cfg.Scenarios[0], "down": cfg.Scenarios[0], "embed": cfg.Scenarios[1]}
	var downIDs []int
	n := 0
	for _, c := range targets.Clients() {
		s := scenario[c.Target().Name]
		for i := range 3 {
			p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, uint64(i)).Next()
			r := c.Do(context.Background(), prober.Request{Scenario: s, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
			r.Sched = now.Add(-time.Duration(i) * time.Second)
			if i == 0 {
				r.Sched = now.Add(-5 * time.Minute) // the first of each pair five minutes ago: two points
			}
			site.Observe(r)
			if n++; c.Target().Name == "down" {
				downIDs = append(downIDs, n)
			}
		}
	}
	_, page := get(t, srv.URL, "/")
	row := func(pair string) string {
		m := regexp.MustCompile(`(?s)<tr class="trend" data-pair="` + pair + `">.*?</tr>`).FindString(page)
		if m == "" {
			t.Fatalf("the last hour has no row for %s:\n%s", pair, page)
		}
		return m
	}
	wantAll(t, "the landing page", page, `<h2 id="last-hour">Last hour</h2>`, "<th>TTFT p99 per minute</th>", "a hollow one is the minute's max")
	chat := row("chat · s")
	wantAll(t, "chat's trend", chat, `<svg class="spark ttft"`, `<svg class="spark tpot"`, `<svg class="spark goodput"`,
		"max of 2, this minute", "<b>100%</b>", "2 of 2 good, this minute", `class="too-few"`, "5 min ago: TTFT ")
	if pts := strings.Count(chat, "<circle"); pts != 6 {
		t.Errorf("chat's trend draws %d points, want 2 minutes × 3 figures", pts)
	}
	embed := row("embed · q")
	if strings.Count(embed, "n/a: an embeddings answer has no tokens") != 2 || strings.Count(embed, "<svg") != 1 {
		t.Errorf("embeddings' trend: want n/a in words for TTFT and TPOT and goodput drawn:\n%s", embed)
	}
	down := row("down · s")
	wantAll(t, "the refused target's trend", down, "n/a: no probe succeeded in the last hour", "<b>0%</b>", "0 of 2 good, this minute")

	// The refused target's 3 failures: the 2 recent marked in the probes'
	// table, the oldest listed apart; each once.
	for _, id := range downIDs {
		if c := strings.Count(page, fmt.Sprintf(`href="/probe?id=%d"`, id)); c != 1 {
			t.Errorf("failure %d is shown %d times, want once", id, c)
		}
	}
	older := regexp.MustCompile(`(?s)<table class="older-failures">.*?</table>`).FindAllString(page, -1)
	if len(older) != 1 || !strings.Contains(older[0], fmt.Sprintf(`href="/probe?id=%d"`, downIDs[0])) {
		t.Errorf("older failures: %q, want one table with failure %d", older, downIDs[0])
	}
}
