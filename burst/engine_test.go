package burst

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/sim"
)

func engineClient(t *testing.T, target config.Target, em config.EngineMetrics) *prober.Client {
	t.Helper()
	target.EngineMetrics = &em
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A burst against the sim reads the sim's vLLM-named histograms before and
// after: the server's figures count exactly the requests llmprobe sent, its
// TTFT is its queue plus its prefill (the sim's own model, exactly, in the
// means the sums give), and the client's TTFT is above the server's by the
// network and HTTP share, a few milliseconds on loopback.
func TestBurstReportsEngineMetrics(t *testing.T) {
	// A small batch: requests queue.
	rep, simURL := engineBurst(t, 2, config.ArrivalPoisson, 2)
	e := rep.EngineMetrics
	if e.Family != "vllm" || !strings.Contains(e.FamilySource, "target_info detected engine llmprobe-sim") || e.URL != simURL+"/metrics" || e.Model != "m" {
		t.Errorf("family %q (%s) url %s model %q", e.Family, e.FamilySource, e.URL, e.Model)
	}
	if !e.Before.Time.Before(rep.Start) || !e.After.Time.After(rep.End) {
		t.Errorf("scrapes at %s and %s do not bracket the run %s – %s", e.Before.Time, e.After.Time, rep.Start, rep.End)
	}
	if rep.Outcomes[prober.OutcomeSuccess] != rep.Requests {
		t.Fatalf("outcomes %v", rep.Outcomes)
	}
	fig := func(m string) enginemetrics.Figure {
		f, ok := e.Lookup(m)
		if !ok || f.NA != "" || f.Mean == nil {
			t.Fatalf("%s: %+v", m, f)
		}
		return f
	}
	ttft, queue, prefill := fig("ttft"), fig("queue"), fig("prefill")
	for _, f := range []enginemetrics.Figure{ttft, queue, prefill, fig("e2e"), fig("decode"), fig("tpot")} {
		if int(*f.Count) != e.ClientRequests {
			t.Errorf("%s counted %g requests, llmprobe sent %d", f.Metric, *f.Count, e.ClientRequests)
		}
	}
	if e.ClientRequests != rep.Requests+2 || e.Note != "" {
		t.Errorf("client requests %d (note %q)", e.ClientRequests, e.Note)
	}
	if d := *ttft.Mean - (*queue.Mean + *prefill.Mean); math.Abs(d) > 1e-6 {
		t.Errorf("server ttft mean %.6f != queue %.6f + prefill %.6f", *ttft.Mean, *queue.Mean, *prefill.Mean)
	}
	if *queue.Mean <= 0 || *prefill.Mean < 0.020 {
		t.Errorf("queue mean %.4f prefill mean %.4f: the sim queues with batch 2 and prefills in 20 ms", *queue.Mean, *prefill.Mean)
	}
	// Each quantile's estimate lies within its bucket.
	for _, q := range ttft.Quantiles {
		if q.Value < q.BucketLower || (q.BucketUpper != nil && q.Value > *q.BucketUpper) {
			t.Errorf("ttft %+v outside its bucket", q)
		}
	}
	// Client minus server: the network share, positive and small on loopback.
	// The client counts warmup out; the means differ by that too, so the
	// check is loose.
	client := rep.Latency["ttft"]
	slack := 0.05
	if rep.ErrorBound != nil && rep.ErrorBound.Max != nil {
		slack += *rep.ErrorBound.Max // a loaded machine's own delays
	}
	if d := client.Mean - *ttft.Mean; d < -0.005 || d > slack {
		t.Errorf("client ttft mean %.4f, server %.4f: difference %.4f", client.Mean, *ttft.Mean, d)
	}
	var rows int
	for _, r := range e.ClientVsServer {
		if r.Metric == "ttft" && r.Client != nil && r.Server != nil {
			rows++
			// A value is client − server; else the bucket bounds the
			// difference: client − upper to client − lower.
			switch {
			case r.Difference != nil:
				if math.Abs(*r.Difference-(*r.Client-*r.Server)) > 1e-12 {
					t.Errorf("row %+v", r)
				}
			case r.NA != "": // a bucket above the client's figure, or unbounded
				if r.DifferenceUpper == nil || *r.DifferenceUpper >= 0 && r.ServerBucketUpper != nil {
					t.Errorf("row %+v: n/a, yet its interval is bounded and not wholly negative", r)
				}
			case r.DifferenceLower == nil || r.DifferenceUpper == nil || r.ServerBucketUpper == nil ||
				math.Abs(*r.DifferenceLower-(*r.Client-*r.ServerBucketUpper)) > 1e-12 || math.Abs(*r.DifferenceUpper-(*r.Client-*r.ServerBucketLower)) > 1e-12:
				t.Errorf("row %+v: neither a value nor the bucket's interval", r)
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d ttft comparison rows, want mean p50 p90 p99", rows)
	}
	var text, md, junit bytes.Buffer
	render.Text(&text, rep)
	if err := render.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := render.JUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	// JUnit names the engine's view; its table is in the text and the report
	// JSON, not repeated in every CI log.
	if !strings.Contains(junit.String(), `<property name="engine_metrics" value="vllm from `) || strings.Contains(junit.String(), "client − server") {
		t.Errorf("junit lacks the engine's summary or repeats its table:\n%s", junit.String())
	}
	for _, want := range []string{"engine metrics (server-wide, all clients): vllm from " + simURL + "/metrics", "client − server", "ttft p50: client"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| ttft | p50 |") {
		t.Errorf("markdown lacks the comparison:\n%s", md.String())
	}
}

// A metrics endpoint that fails, in any way, never fails the burst: the
// report carries the reason where the engine's figures would be.
func TestEngineMetricsFailuresNeverFailTheBurst(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	before, err := os.ReadFile("../enginemetrics/testdata/vllm-after.txt")
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile("../enginemetrics/testdata/vllm-before.txt")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	release := make(chan struct{})
	defer close(release)
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404 Not Found"},
		{"501", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no metrics", http.StatusNotImplemented) }, "HTTP 501 Not Implemented: the engine serves no metrics"},
		{"hang", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, "timeout: "},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<<not prometheus>>\n") }, "unparseable page"},
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			page := bytes.Repeat([]byte("# a line of a page far too large for any engine\n"), enginemetrics.MaxPageBytes/48+1)
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			w.Write(page)
		}, "page larger than 8 MiB"},
		{"restart", func(w http.ResponseWriter, r *http.Request) {
			if served.Add(1)%2 == 1 {
				w.Write(before)
			} else {
				w.Write(after) // every counter went back: a new process
			}
		}, enginemetrics.ErrRestarted},
	} {
		t.Run(c.name, func(t *testing.T) {
			faulty := httptest.NewServer(c.handler)
			defer faulty.Close()
			em := config.DefaultEngineMetrics
			em.URL, em.Family, em.Timeout = faulty.URL+"/metrics", "vllm", config.Duration(time.Second)
			client := engineClient(t, testkit.Target(srv.URL, config.APICompletions), em)
			b := burstOf(config.ArrivalConstant, 20, 0)
			b.Requests = 3
			start := time.Now()
			rep, err := Runner{Client: client}.Run(context.Background(), plan.BurstOf(b, testkit.Scenario()))
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed || rep.Requests != 3 || rep.Outcomes[prober.OutcomeSuccess] != 3 {
				t.Errorf("the burst suffered: passed %v, %d requests, outcomes %v", rep.Passed, rep.Requests, rep.Outcomes)
			}
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("took %s", took)
			}
			e := rep.EngineMetrics
			if e == nil || !strings.Contains(e.Error, c.want) {
				t.Fatalf("engine metrics error %q, want %q", render.EngineSummary(e), c.want)
			}
			for _, f := range e.Figures {
				if f.NA == "" || f.Mean != nil {
					t.Errorf("figure %+v has a value", f)
				}
			}
			var text bytes.Buffer
			render.Text(&text, rep)
			if !strings.Contains(text.String(), "n/a: ") || !strings.Contains(text.String(), c.want) {
				t.Errorf("text report lacks the reason %q:\n%s", c.want, text.String())
			}
		})
	}
}

// An old report, or one for a target without engine_metrics, says n/a.
func TestNoEngineMetricsSaysNA(t *testing.T) {
	var text bytes.Buffer
	render.Text(&text, &report.Report{})
	if !strings.Contains(text.String(), "engine metrics (server-wide, all clients): n/a: no engine metrics in this report") {
		t.Errorf("text:\n%s", text.String())
	}
}

// The engine's own figures say where TTFT went as load grows: past
// capacity its queue takes the larger share, as the client sees it too.
func TestEngineQueueShareGrowsWithLoad(t *testing.T) {
	c, _ := serialSim(t, 1) // 10/s capacity
	em := config.DefaultEngineMetrics
	target := c.Target()
	c = engineClient(t, target, em)
	share := map[float64]float64{}
	for _, rate := range []float64{5, 12} {
		rep := runAt(t, c, burstOf(config.ArrivalConstant, rate, 2*time.Second))
		e := rep.EngineMetrics
		if e == nil || e.Error != "" {
			t.Fatalf("at %g/s: %s", rate, render.EngineSummary(e))
		}
		ttft, _ := e.Lookup("ttft")
		queue, _ := e.Lookup("queue")
		prefill, _ := e.Lookup("prefill")
		if ttft.Mean == nil || queue.Mean == nil || prefill.Mean == nil {
			t.Fatalf("at %g/s: ttft %+v queue %+v prefill %+v", rate, ttft, queue, prefill)
		}
		client := rep.Latency["ttft"].Mean
		share[rate] = *queue.Mean / *ttft.Mean
		t.Logf("%4.0f%% of capacity: client ttft mean %6.1fms = server queue %6.1fms + prefill %5.1fms + network and client %5.1fms (queue share %.0f%%)",
			rate*10, 1000*client, 1000**queue.Mean, 1000**prefill.Mean, 1000*(client-*ttft.Mean), 100*share[rate])
	}
	if share[12] < 2*share[5] || share[12] < 0.5 {
		t.Errorf("queue share of the server's TTFT %.2f at 50%% of capacity, %.2f at 120%%: overload does not show in the engine's queue", share[5], share[12])
	}
}

// A sweep reads the page between its steps: the report (its best step's)
// counts that step's requests only.
func TestSweepStepsHaveTheirOwnEngineWindow(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 5*time.Millisecond, 2*time.Millisecond })
	c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), config.DefaultEngineMetrics)
	b := burstOf(config.ArrivalConstant, 10, 0)
	b.Requests = 4
	b.Sweep = &config.Sweep{Rates: []float64{10, 20}}
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, testkit.Scenario()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sweep) != 2 || rep.MaxRateUnderSLO == nil || *rep.MaxRateUnderSLO != 20 {
		t.Fatalf("sweep %+v", rep.Sweep)
	}
	e := rep.EngineMetrics
	if e == nil || e.Error != "" {
		t.Fatalf("engine metrics: %s", render.EngineSummary(e))
	}
	if f, _ := e.Lookup("e2e"); f.Count == nil || *f.Count != 4 {
		t.Errorf("the best step's window counted %v requests, want its 4", f.Count)
	}
	if !e.Before.Time.After(rep.Start.Add(-time.Second)) || e.Before.Time.After(rep.Start) {
		t.Errorf("the step's first read at %s, its run from %s", e.Before.Time, rep.Start)
	}
}

// A shard starts at a fixed instant: a hanging engine page is cut before
// it, so the shard's requests leave on time.
func TestEngineReadKeepsAShardOnTime(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 5*time.Millisecond, 2*time.Millisecond })
	release := make(chan struct{})
	defer close(release)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	em := config.DefaultEngineMetrics
	em.URL, em.Family, em.Timeout = hang.URL+"/metrics", "vllm", config.Duration(2*time.Second)
	c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), em)
	b := burstOf(config.ArrivalConstant, 20, 0)
	b.Requests = 4
	start := time.Now().Add(400 * time.Millisecond)
	rep, err := Runner{Client: c, Start: start}.Run(context.Background(), plan.BurstOf(b, testkit.Scenario()))
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Latency["dispatch_delay"]; d.Count != 4 || d.Max > 0.1 {
		t.Errorf("dispatch delay %+v: the engine read made the shard late", d)
	}
	if e := rep.EngineMetrics; e == nil || !strings.Contains(e.Error, "the scrape before failed: timeout") {
		t.Errorf("engine metrics: %s", render.EngineSummary(e))
	}
}

// Issue 26: the engine's gauges are read during the burst, not only before
// and after (when an overloaded engine's queue is empty again). With one
// slot and requests arriving faster than it serves them, the reads during
// the run see requests waiting, and the report says they queued for a slot.
func TestGaugesSampledDuringBurst(t *testing.T) {
	// 30 requests over 1.5 s, each holding the one slot ~70 ms: the
	// queue grows from the start and drains for about a second after.
	rep, _ := engineBurst(t, 1, config.ArrivalConstant, 0)
	e := rep.EngineMetrics
	g, ok := e.Gauge(enginemetrics.GaugeWaiting)
	if !ok || g.Samples == 0 || g.Max == nil || *g.Max <= 0 || g.Mean == nil || *g.Min > *g.Mean || *g.Mean > *g.Max {
		t.Fatalf("requests_waiting during the run: %+v", g)
	}
	if *g.After != 0 {
		t.Errorf("requests_waiting after the run %g: the queue had drained", *g.After)
	}
	if run, _ := e.Gauge(enginemetrics.GaugeRunning); run.Samples != g.Samples || *run.Max > 1 {
		t.Errorf("requests_running during the run: %d reads, max %g; want %d reads, at most one slot", run.Samples, *run.Max, g.Samples)
	}
	if !strings.Contains(e.Queued, "queued for a slot") {
		t.Errorf("queued %q", e.Queued)
	}
	var text bytes.Buffer
	render.Text(&text, rep)
	if !strings.Contains(text.String(), "(during the run: min ") || !strings.Contains(text.String(), "queued for a slot") {
		t.Errorf("text report lacks the gauges during the run:\n%s", text.String())
	}
}

// engineBurst runs 1.5 s at 20 requests/s against a sim of maxBatch slots
// (20 ms prefill, 10 ms per token) that the burst reads the engine page of.
func engineBurst(t *testing.T, maxBatch int, process string, warmup int) (*report.Report, string) {
	t.Helper()
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.MaxBatch, c.MaxQueue = maxBatch, 1000
		c.PrefillBase, c.DecodeBase, c.DecodePerSeq = 20*time.Millisecond, 10*time.Millisecond, 0
	})
	c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), config.DefaultEngineMetrics)
	b := burstOf(process, 20, 1500*time.Millisecond)
	b.Warmup = config.Warmup{Requests: warmup}
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.EngineMetrics; e == nil || e.Error != "" {
		t.Fatalf("engine metrics %+v", e)
	}
	return rep, srv.URL
}

// A burst reads the draft model's acceptance from each family's own
// figures: vLLM's and llama.cpp's counter deltas, SGLang's gauges read
// during the run; each matches what the sim was told within a point, and
// a sim with no draft model says n/a, never 0.
func TestBurstReportsSpecDecode(t *testing.T) {
	for _, tc := range []struct {
		engine string
		spec   bool
		source string
	}{
		{"", true, "counter deltas"}, {sim.EngineSGLang, true, "the engine's own averages"}, {sim.EngineLlamaCPP, true, "counter deltas"},
		{"", false, "no draft model"}, {sim.EngineLlamaCPP, false, "no draft between the scrapes"},
	} {
		t.Run(tc.engine+"/"+strconv.FormatBool(tc.spec), func(t *testing.T) {
			srv, _ := testkit.StartSim(t, func(c *sim.Config) {
				c.Engine, c.PrefillBase, c.DecodeBase = tc.engine, 2*time.Millisecond, 2*time.Millisecond
				if tc.spec {
					c.SpecDecode.DraftTokens, c.SpecDecode.Acceptance = 3, 0.7
				}
			})
			c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), config.DefaultEngineMetrics)
			rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(burstOf(config.ArrivalConstant, 20, time.Second), burstScenario()))
			if err != nil {
				t.Fatal(err)
			}
			sd := rep.EngineMetrics.SpecDecode
			if sd == nil {
				t.Fatalf("no speculative decoding in %+v", rep.EngineMetrics)
			}
			var text bytes.Buffer
			render.Text(&text, rep)
			if !tc.spec {
				if sd.AcceptanceRate != nil || !strings.Contains(sd.NA, tc.source) || !strings.Contains(text.String(), "speculative decoding: n/a ("+sd.NA) {
					t.Errorf("no draft model: %+v\n%s", sd, text.String())
				}
				return
			}
			if sd.NA != "" || math.Abs(*sd.AcceptanceRate-0.7) > 0.01 || math.Abs(*sd.MeanAcceptanceLength-3.1) > 0.03 || !strings.Contains(sd.Source, tc.source) {
				t.Fatalf("spec decode %+v (rate %v, length %v)", sd, sd.AcceptanceRate, sd.MeanAcceptanceLength)
			}
			if !strings.Contains(text.String(), "speculative decoding: acceptance rate 70.0%, mean acceptance length 3.10 tokens a step") {
				t.Errorf("the text report lacks the acceptance:\n%s", text.String())
			}
		})
	}
}

// Disaggregated prefill: a burst reads the KV transfers from vLLM's NIXL
// histogram and SGLang's (in milliseconds) as the engine's aggregate: the
// mean exactly what the sim was told, each percentile in the bucket that
// holds it, every transfer counted; beside the TTFT split, which holds
// it. Without a KV connector: n/a.
func TestBurstReportsKVTransfer(t *testing.T) {
	for _, tc := range []struct {
		engine   string
		transfer time.Duration
	}{{"", 30 * time.Millisecond}, {sim.EngineSGLang, 30 * time.Millisecond}, {"", 0}} {
		t.Run(tc.engine+"/"+tc.transfer.String(), func(t *testing.T) {
			srv, _ := testkit.StartSim(t, func(c *sim.Config) {
				c.Engine, c.PrefillBase, c.DecodeBase, c.KVTransfer = tc.engine, 2*time.Millisecond, 2*time.Millisecond, tc.transfer
			})
			c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), config.DefaultEngineMetrics)
			rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(burstOf(config.ArrivalConstant, 20, time.Second), burstScenario()))
			if err != nil {
				t.Fatal(err)
			}
			kv := rep.EngineMetrics.KVTransfer
			if kv == nil {
				t.Fatalf("no KV transfer figure: %+v", rep.EngineMetrics)
			}
			var text bytes.Buffer
			render.Text(&text, rep)
			if tc.transfer == 0 {
				if kv.Mean != nil || !strings.Contains(kv.NA, "no disaggregated prefill") || !strings.Contains(text.String(), "kv transfer: n/a (no disaggregated prefill") {
					t.Errorf("no KV connector: %+v\n%s", kv, text.String())
				}
				return
			}
			if kv.NA != "" || kv.Count == nil || int(*kv.Count) != rep.Requests || math.Abs(*kv.Mean-tc.transfer.Seconds()) > 1e-9 || kv.Unit != enginemetrics.UnitTransfers {
				t.Fatalf("kv transfer %+v (count %v of %d requests, mean %v)", kv, kv.Count, rep.Requests, kv.Mean)
			}
			q, ok := kv.Quantile("p50")
			if !ok || q.BucketLower > 0.03 || q.BucketUpper == nil || *q.BucketUpper < 0.03 {
				t.Errorf("p50 %+v: its bucket must hold 30 ms", q)
			}
			if ttft := rep.Latency["ttft"]; ttft.P50 < tc.transfer.Seconds() {
				t.Errorf("client TTFT p50 %.4f s is below the transfer it holds", ttft.P50)
			}
			if !strings.Contains(text.String(), "kv transfer (the engine's aggregate over its ") || !strings.Contains(text.String(), "mean 30.0ms, p50 in 25–50ms") {
				t.Errorf("the text report lacks the KV transfer:\n%s", text.String())
			}
		})
	}
}

// A burst spread over a LoRA adapter reads vLLM's adapter info: how many
// the engine serves at once, and none running once the run drained.
func TestBurstReadsLoRAInfo(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.PrefillBase, c.DecodeBase, c.Adapters = 2*time.Millisecond, 2*time.Millisecond, []string{"sql-lora", "chat-lora"}
	})
	c := engineClient(t, testkit.Target(srv.URL, config.APICompletions), config.DefaultEngineMetrics)
	s := burstScenario()
	s.Adapters = []config.Adapter{{Name: "sql-lora"}}
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(burstOf(config.ArrivalConstant, 20, 500*time.Millisecond), s))
	if err != nil {
		t.Fatal(err)
	}
	l := rep.EngineMetrics.LoRA
	if l == nil || l.MaxLoRA != "2" || len(l.Running) != 0 {
		t.Fatalf("lora %+v", l)
	}
	var text bytes.Buffer
	render.Text(&text, rep)
	if !strings.Contains(text.String(), "LoRA adapters at the end: running none; waiting none; at most 2 at once") {
		t.Errorf("the text report lacks the LoRA line:\n%s", text.String())
	}
}
