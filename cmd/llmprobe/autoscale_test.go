package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// kedaQuery is the shipped ScaledObject's Prometheus query.
func kedaQuery(t *testing.T) string {
	t.Helper()
	var so struct {
		Spec struct {
			Triggers []struct {
				Type     string            `yaml:"type"`
				Metadata map[string]string `yaml:"metadata"`
			} `yaml:"triggers"`
		} `yaml:"spec"`
	}
	readYAML(t, "../../deploy/autoscaling/keda-scaledobject.yaml", &so)
	if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "prometheus" || so.Spec.Triggers[0].Metadata["query"] == "" {
		t.Fatalf("the ScaledObject's triggers: %+v", so.Spec.Triggers)
	}
	q := so.Spec.Triggers[0].Metadata["query"]
	var rules struct {
		ExternalRules []struct {
			MetricsQuery string `yaml:"metricsQuery"`
		} `yaml:"externalRules"`
	}
	readYAML(t, "../../deploy/autoscaling/prometheus-adapter-rules.yaml", &rules)
	if len(rules.ExternalRules) != 1 || strings.TrimSpace(rules.ExternalRules[0].MetricsQuery) != q {
		t.Errorf("the prometheus-adapter rule's query is not the ScaledObject's: %+v", rules.ExternalRules)
	}
	return q
}

// offer sends rate requests a second to the sim until stop closes.
func offer(url string, rate float64, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"load"}]}`))
				if err == nil {
					resp.Body.Close()
				}
			}()
		}
	}
}

// The autoscaling signal end to end: a sweep finds the sim's max rate under
// SLO, a real Prometheus scrapes llmprobe and the sim's own counters, and
// the shipped KEDA query asks for one replica below the knee and more past
// it; before any sweep it gives nothing.
func TestKEDAQueryFollowsTheKnee(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.MaxBatch = 8 })
	// Eight slots, each new request's 50 ms prefill stalling the batch: the
	// sweep holds at 4/s (32 requests within the SLO) and fails at 80/s.
	cfg := fmt.Sprintf(`targets:
  - {name: vllm, url: %q, timeout: 10s}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8, slo: {ttft: 300ms, target_ratio: 0.8}}
bursts:
  - name: knee
    target: vllm
    scenarios: [{scenario: chat}]
    arrival: {process: poisson}
    duration: 8s
    seed: 1
    sweep: {rates: [4, 80]}
    schedule: {every: 24h, on_start: true}
`, srv.URL)
	d := startDaemon(t, "--config.file="+testkit.ConfigFile(t, cfg))
	prom := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
  - job_name: vllm
    static_configs: [{targets: [%q]}]
`, strings.TrimPrefix(d.base, "http://"), strings.TrimPrefix(srv.URL, "http://")))
	query := kedaQuery(t)
	replicas := func() []promSample {
		got, err := promInstant(prom, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return got
	}

	testkit.WaitUntil(t, "Prometheus scraping llmprobe", 30*time.Second, func() bool {
		got, _ := promInstant(prom, `up{job="llmprobe"} == 1`)
		return len(got) == 1
	})
	// The sweep takes some 16 s; Prometheus scrapes every second.
	if swept, _ := promInstant(prom, `llmprobe_burst_last_run_timestamp_seconds`); len(swept) != 0 {
		t.Errorf("the sweep ended before Prometheus's first scrapes: the query without a sweep went unchecked")
	} else if got := replicas(); len(got) != 0 {
		t.Errorf("before any sweep the query gives %v, want nothing", got)
	}
	testkit.WaitUntil(t, "the sweep's max rate in Prometheus", 90*time.Second, func() bool {
		got, _ := promInstant(prom, `llmprobe_target_max_rate_under_slo{target="vllm", source="sweep"} == 4`)
		return len(got) == 1
	})

	// The load of each phase fills the query's rate window ([1m]) within
	// the wait; the sweep's own load leaves it in the first.
	for _, phase := range []struct {
		rate float64
		want func(int) bool
		says string
	}{{2, func(n int) bool { return n == 1 }, "1"}, {8, func(n int) bool { return n >= 2 }, "2 or more"}} {
		stop, wg := make(chan struct{}), &sync.WaitGroup{}
		wg.Add(1)
		go offer(srv.URL, phase.rate, stop, wg)
		var got []promSample
		testkit.WaitUntil(t, fmt.Sprintf("%s replicas at %g/s", phase.says, phase.rate), 120*time.Second, func() bool {
			got = replicas()
			if len(got) != 1 {
				return false
			}
			v, _ := strconv.ParseFloat(got[0].Value[1].(string), 64)
			return phase.want(int(v))
		})
		close(stop)
		wg.Wait()
		t.Logf("offered %g/s against a max rate of 4/s: the query asks for %v replicas", phase.rate, got[0].Value[1])
	}
}
