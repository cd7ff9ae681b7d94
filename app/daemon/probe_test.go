package daemon

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// /probe answers what docs/probe.md lists, with the type and labels it
// says, for a good request and for a failed one.
func TestProbeMetricsAreDocumented(t *testing.T) {
	contract, err := testkit.ReadMetricDoc("../../docs/probe.md")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := testkit.StartSim(t, nil)
	d := startProbeDaemon(t, srv.URL)
	got := map[string]testkit.DocumentedMetric{}
	for _, q := range []string{"scenario=chat&target=" + srv.URL, "scenario=chat&target=http://127.0.0.1:1", "scenario=agent&target=" + srv.URL} {
		code, body := d.get("/probe?" + q)
		if code != http.StatusOK {
			t.Fatalf("/probe?%s: %d %s", q, code, body)
		}
		testkit.PromtoolCheckMetrics(t, body)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range fams {
			labels := []string{}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if !slices.Contains(labels, l.GetName()) {
						labels = append(labels, l.GetName())
					}
				}
			}
			slices.Sort(labels)
			got[name] = testkit.DocumentedMetric{Name: name, Type: strings.ToLower(f.GetType().String()), Labels: labels}
		}
	}
	for _, c := range contract {
		g, ok := got[c.Name]
		switch {
		case !ok:
			t.Errorf("%s is in docs/probe.md but /probe never answered it", c.Name)
		case g.Type != c.Type || !slices.Equal(g.Labels, append([]string{}, c.Labels...)):
			t.Errorf("%s is a %s with labels %v; docs/probe.md says %s with %v", c.Name, g.Type, g.Labels, c.Type, c.Labels)
		}
		delete(got, c.Name)
	}
	for name := range got {
		t.Errorf("/probe answers %s, which docs/probe.md does not list", name)
	}
}

// A hanging target: the scrape's timeout bounds the request (less the
// margin), and no more than maxProbesInFlight hang at once.
func TestProbeBudgetAndConcurrency(t *testing.T) {
	release := make(chan struct{})
	var hung atomic.Int64
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
			return
		case "/v1/chat/completions":
			// Read the body, so the server sees the client go away.
			_, _ = io.Copy(io.Discard, r.Body)
			hung.Add(1)
			defer hung.Add(-1)
		default:
			http.NotFound(w, r)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hanging.Close()
	defer unblock()
	d := startProbeDaemon(t, hanging.URL)

	probe := func(timeout string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, d.base+"/probe?scenario=chat&target="+hanging.URL, nil)
		if timeout != "" {
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
		}
		return testkit.Do(req)
	}
	code, body := probe("1")
	if code != http.StatusOK || !strings.Contains(body, `llmprobe_probe_outcome{outcome="timeout"} 1`) {
		t.Fatalf("a hanging target under a 1s scrape timeout: %d\n%s", code, body)
	}

	testkit.WaitUntil(t, "the timed-out request gone from the target", 10*time.Second, func() bool { return hung.Load() == 0 })
	// Fill every slot with a request that hangs until released; the next
	// one is refused with the reason.
	var wg sync.WaitGroup
	for range maxProbesInFlight {
		wg.Add(1)
		go func() { defer wg.Done(); probe("") }()
	}
	testkit.WaitUntil(t, "every /probe slot taken", 10*time.Second, func() bool {
		return hung.Load() == maxProbesInFlight
	})
	code, body = probe("1")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, fmt.Sprintf("%d /probe requests are in flight", maxProbesInFlight)) {
		t.Errorf("with every slot taken: %d %q", code, body)
	}
	unblock()
	wg.Wait()
	if code, body := probe("1"); code != http.StatusOK {
		t.Errorf("after the slots freed: %d %s", code, body)
	}
}

func startProbeDaemon(t *testing.T, url string) *running {
	t.Helper()
	cfg := fmt.Sprintf(`targets: [{name: configured, url: %q}]
scenarios:
  - name: chat
    prompt_tokens: 16
    output_tokens: 4
    slo: {ttft: 5s, tpot: 1s, e2e: 10s, stall: 5s}
  - {name: agent, prompt_tokens: 16, output_tokens: 32, %s, tool_choice: required}
canary: {interval: 1h}
probe: {timeout: 30s}
`, url, testkit.WeatherTool)
	path := testkit.ConfigFile(t, cfg)
	return startDaemon(t, Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
}
