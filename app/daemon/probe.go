package daemon

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
)

// maxProbesInFlight bounds /probe requests measured at once: each holds a
// stream open, and whoever reaches /probe chooses how many they send.
const maxProbesInFlight = 16

// scrapeTimeoutMargin is left of Prometheus's scrape timeout for the answer
// to travel back, as blackbox_exporter does.
const scrapeTimeoutMargin = 500 * time.Millisecond

// probeHandler serves /probe?target=&scenario=: one request now, answered
// with its metrics from a fresh registry (blackbox_exporter's model), so a
// Prometheus job with service discovery decides what is probed. Its results
// stay out of /metrics and the landing page.
func (d *Daemon) probeHandler() http.HandlerFunc {
	slots := make(chan struct{}, maxProbesInFlight)
	return func(w http.ResponseWriter, r *http.Request) {
		running := d.safe.Get()
		if running == nil {
			http.Error(w, "no configuration loaded", http.StatusServiceUnavailable)
			return
		}
		cfg := running.Config
		q := r.URL.Query()
		scenario, err := probeScenario(running, q.Get("scenario"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// The slot first: a refused request builds no client.
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			http.Error(w, fmt.Sprintf("%d /probe requests are in flight already, the most llmprobe measures at once; try again later", maxProbesInFlight), http.StatusServiceUnavailable)
			return
		}
		client, closeClient, err := d.probeClient(cfg, q.Get("target"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer closeClient()

		ctx := r.Context()
		if budget, ok := scrapeBudget(r); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, budget)
			defer cancel()
		}
		p, maxTokens := scenario.Builder(uint64(time.Now().UnixNano())).Next()
		start := time.Now()
		res := client.Do(ctx, prober.Request{Scenario: scenario.Scenario, Traffic: "probe", Prompt: p, MaxTokens: maxTokens, Sched: start})
		elapsed := time.Since(start)
		d.tracer.Observe(res)
		if res.Outcome != prober.OutcomeSuccess {
			level.Debug(d.logger).Log("msg", "/probe failed", "target", client.Target().URL, "scenario", scenario.Name, "err", res.FailureText())
		}

		if q.Get("debug") == "true" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "Probe of %s with scenario %s: %s\n\nLog:\n%s\n", client.Target().URL, scenario.Name, probeVerdict(res), strings.Join(res.Log.Lines(), "\n"))
			return
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(probeMetrics(res, elapsed))
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}
}

// probeClient is a configured target's client (by name), or a new one for
// a URL with the probe: block's settings; close releases what it holds.
func (d *Daemon) probeClient(cfg *config.Config, target string) (*prober.Client, func(), error) {
	if target == "" {
		return nil, nil, fmt.Errorf("target parameter is missing: /probe?target=<URL or configured target name>&scenario=<name>")
	}
	for _, c := range d.targets.Clients() {
		if c.Target().Name == target {
			return c, func() {}, nil
		}
	}
	if _, ok := cfg.Target(target); ok {
		return nil, nil, fmt.Errorf("target %q is configured but not probed by this replica (--shard)", target)
	}
	if !strings.Contains(target, "://") {
		return nil, nil, fmt.Errorf("target %q is neither a configured target (%s) nor an http(s) URL", target, strings.Join(targetNames(cfg), ", "))
	}
	t, err := cfg.ProbeTarget(target)
	if err != nil {
		return nil, nil, err
	}
	c, err := prober.NewClient(t, prober.WithSampler(d.tracer))
	if err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

func probeScenario(p *plan.Plan, name string) (*plan.Scenario, error) {
	var names []string
	for _, s := range p.Scenarios {
		names = append(names, s.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("scenario parameter is missing; configured scenarios: %s", strings.Join(names, ", "))
	}
	s, ok := p.Scenario(name)
	if !ok {
		return nil, fmt.Errorf("scenario %q is not configured; configured scenarios: %s", name, strings.Join(names, ", "))
	}
	return s, nil
}

func targetNames(cfg *config.Config) []string {
	var out []string
	for _, t := range cfg.Targets {
		out = append(out, t.Name)
	}
	return out
}

// scrapeBudget is Prometheus's scrape timeout less the margin, when the
// scrape says it.
func scrapeBudget(r *http.Request) (time.Duration, bool) {
	s, err := strconv.ParseFloat(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64)
	if err != nil || s <= 0 {
		return 0, false
	}
	budget := time.Duration(s*float64(time.Second)) - scrapeTimeoutMargin
	return max(budget, 100*time.Millisecond), true
}

func probeVerdict(res *prober.Result) string {
	switch {
	case res.Outcome != prober.OutcomeSuccess:
		return "failed: " + string(res.Outcome) + ": " + res.FailureText()
	case !res.Good:
		return "succeeded, missing an objective"
	}
	return "succeeded, met every objective"
}

// probeMetrics is one /probe request as metrics: blackbox_exporter's
// probe_success and probe_duration_seconds, and llmprobe's measurements.
// A figure the request did not produce is absent, never 0.
func probeMetrics(res *prober.Result, elapsed time.Duration) prometheus.Collector {
	var ms []prometheus.Metric
	gauge := func(name, help string, v float64, labels ...string) {
		var names []string
		var values []string
		for i := 0; i+1 < len(labels); i += 2 {
			names, values = append(names, labels[i]), append(values, labels[i+1])
		}
		ms = append(ms, prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, names, nil), prometheus.GaugeValue, v, values...))
	}
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	success := res.Outcome == prober.OutcomeSuccess
	gauge("probe_success", "Whether the request succeeded.", bit(success))
	gauge("probe_duration_seconds", "How long the probe took, discovery of the model included.", elapsed.Seconds())
	if res.HTTPStatus != 0 {
		gauge("probe_http_status_code", "HTTP status of the response.", float64(res.HTTPStatus))
	}
	gauge("llmprobe_probe_good", "Whether the request succeeded and met every objective and quality check of its scenario.", bit(res.Good))
	for _, o := range prober.Outcomes {
		gauge("llmprobe_probe_outcome", "How the request ended: 1 for its outcome.", bit(res.Outcome == o), "outcome", string(o))
	}
	if !success {
		gauge("llmprobe_probe_failure", "Where (phase) and why (reason) the request failed.", 1, "phase", res.Phase, "reason", res.Reason)
	}
	if res.FirstTokenSeen() {
		gauge("llmprobe_probe_time_to_first_token_seconds", "Time from the request to its first output token.", res.TTFT.Seconds())
	}
	if success && res.FirstTokenSeen() {
		// As /metrics has them per series: blackbox_exporter's phases, for TTFT.
		for _, p := range res.TTFTParts {
			gauge("llmprobe_probe_ttft_component_seconds", "The request's TTFT in consecutive parts that add up to it.", p.D.Seconds(), "component", p.Component)
		}
	}
	if success {
		gauge("llmprobe_probe_request_duration_seconds", "Time from the request to the end of its stream.", res.E2E.Seconds())
		// Answers without tokens (embeddings, rerank) have no count and no
		// TPOT; an unstreamed answer has a count and no TPOT.
		if res.OutputTokens > 0 {
			gauge("llmprobe_probe_output_tokens", "Output tokens of the answer.", float64(res.OutputTokens))
		}
		if res.OutputTokens > 1 && res.FirstTokenSeen() {
			gauge("llmprobe_probe_time_per_output_token_seconds", "(E2E - TTFT) / (output tokens - 1).", res.TPOT.Seconds())
		}
	}
	if res.TTFTool > 0 {
		gauge("llmprobe_probe_time_to_first_tool_call_seconds", "Time from the request to its first tool-call delta.", res.TTFTool.Seconds())
	}
	if q := res.Quality; q != nil {
		gauge("llmprobe_probe_answer_check_passed", "Whether the answer passed its checks (quality, golden line, tool calls, response format).", bit(q.Passed))
	}
	checks := slices.Clone(res.Checks)
	slices.SortFunc(checks, func(a, b prober.Check) int { return strings.Compare(a.Objective, b.Objective) })
	for _, c := range checks {
		gauge("llmprobe_probe_slo_met", "Whether the request met each objective of its scenario.", bit(c.Met), "objective", c.Objective)
	}
	return constCollector(ms)
}

// constCollector serves a fixed set of metrics.
type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
