package collector

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/prober"
)

const (
	acceptOpenMetrics = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	acceptProtobuf    = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// tooLong is a request id longer than an exemplar may be.
var tooLong = strings.Repeat("x", 121)

// exposed is a probe with every kind of series, behind an Exposition with
// another collector beside it, whose families sort before, between and
// after the probe's.
func exposed(t *testing.T) *Exposition {
	t.Helper()
	p := NewProbe()
	p.now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	p.Configure(testConfig(t, "300ms"))
	// Request ids become exemplars: a hex one, one that needs escaping, and
	// one too long for an exemplar, which is counted without one.
	for i, model := range []string{"m", "we\"ird\\mo\ndel ü"} {
		r := successResult("a")
		r.Model = model
		r.RequestID = "we\"ird\\i\nd ü"
		r.Timings.TTFB = 100 * time.Millisecond
		r.Quality = &prober.QualityResult{Passed: i == 0}
		// Past a million, the text format writes counts as 1.2e+06.
		r.PromptTokensReported = 12_345_678
		r.ITL = make([]time.Duration, 1_000_003)
		for j := range r.ITL {
			r.ITL[j] = time.Duration(j%300) * time.Millisecond
		}
		p.Observe(r)
	}
	failed := &prober.Result{Target: "b", Model: "m", Scenario: "s", Traffic: prober.TrafficBurst, Sched: time.Unix(1001, 0),
		Outcome: prober.OutcomeHTTPError, HTTPStatus: 500, Phase: "headers", Reason: "http_status",
		Checks: []prober.Check{{Objective: "ttft"}, {Objective: "tpot"}}, RequestID: tooLong,
		DispatchDelay: time.Millisecond}
	p.Observe(failed)
	ok := successResult("b")
	ok.RequestID = "0af7651916cd43dd8448eb211c80319c"
	ok.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: 50 * time.Microsecond}, {Component: prober.ComponentConnect, D: time.Millisecond},
		{Component: prober.ComponentEngineQueue, D: 100 * time.Millisecond}, {Component: prober.ComponentEnginePrefill, D: 190 * time.Millisecond},
		{Component: prober.ComponentNetwork, D: 8950 * time.Microsecond}}
	// A reasoning model: its reasoning series, with exemplars.
	ok.TTFTReasoning, ok.TTFTAnswer, ok.ReasoningTokens, ok.AnswerTokens, ok.ReasoningSource = 300*time.Millisecond, 2500*time.Millisecond, 2, 1, prober.TokensFromChunks
	p.Observe(ok)
	// A conversation's turns: the turn series.
	for turn := 1; turn <= 2; turn++ {
		r := successResult("c")
		r.Scenario, r.Turn, r.RequestID = "s", turn, "1af7651916cd43dd8448eb211c80319c"
		p.Observe(r)
	}
	// Burst traffic carries them too; a TTFT past every bucket puts one on +Inf.
	slow := successResult("b")
	slow.Traffic, slow.RequestID, slow.TTFT, slow.E2E = prober.TrafficBurst, "4bf92f3577b34da6a3ce929d0e0e4736", time.Hour, 2*time.Hour
	p.Observe(slow)
	p.Started("a", "s", "canary")

	reg := prometheus.NewRegistry()
	for _, name := range []string{"aaa_first", "llmprobe_probe_zzz", "zzz_last"} {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "A neighbour."})
		g.Set(0.25)
		reg.MustRegister(g)
	}
	return NewExposition(reg, p)
}

func get(t *testing.T, h http.Handler, accept, encoding, query string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics"+query, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body := rec.Body.Bytes()
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return resp, string(body)
}

// families splits a page into its families' header lines and their
// samples, sorted: within a family the order of series is free.
func families(page string) [][]string {
	var out [][]string
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "# HELP ") || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], line)
	}
	for _, f := range out {
		slices.Sort(f)
	}
	return out
}

// The pages Exposition writes itself hold what promhttp writes from the
// same metrics, line for line, in the text format and in OpenMetrics.
func TestExpositionMatchesClientGolang(t *testing.T) {
	e := exposed(t)
	std := promhttp.HandlerFor(e, promhttp.HandlerOpts{EnableOpenMetrics: true})
	for _, c := range []struct{ name, accept, contentType string }{
		{"text", "", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"},
		{"openmetrics", acceptOpenMetrics, "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, got := get(t, e, c.accept, "", "")
			wantResp, want := get(t, std, c.accept, "", "")
			if ct := resp.Header.Get("Content-Type"); ct != wantResp.Header.Get("Content-Type") || ct != c.contentType {
				t.Errorf("Content-Type %q, promhttp says %q, want %q", ct, wantResp.Header.Get("Content-Type"), c.contentType)
			}
			for _, s := range []string{`llmprobe_inter_token_latency_seconds_count{model="we\"ird\\mo\ndel ü",scenario="s",target="a",traffic="canary"}`, "llmprobe_probe_zzz", "llmprobe_in_flight_requests{",
				"llmprobe_time_to_first_answer_token_seconds_bucket{", "llmprobe_time_to_first_reasoning_token_seconds_count{", `llmprobe_reasoning_output_tokens_total{kind="answer"`} {
				if !strings.Contains(got, s) {
					t.Errorf("the page lacks %s", s)
				}
			}
			// Exemplars, in OpenMetrics only: a request's id on the bucket of
			// each of its observations, canary and burst, +Inf included.
			exemplars := []string{
				`llmprobe_time_to_first_token_seconds_bucket{model="m",scenario="s",target="b",traffic="canary",le="0.3"} 1 # {trace_id="0af7651916cd43dd8448eb211c80319c"} 0.3 1.7e+09` + "\n",
				`llmprobe_inter_token_latency_seconds_bucket{model="we\"ird\\mo\ndel ü",scenario="s",target="a",traffic="canary",le="0.001"} 6668 # {trace_id="we\"ird\\i\nd ü"} 0.001 1.7e+09` + "\n",
				`llmprobe_time_to_first_token_seconds_bucket{model="m",scenario="s",target="b",traffic="burst",le="+Inf"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 3600.0 1.7e+09` + "\n",
				`llmprobe_request_duration_seconds_bucket{model="m",scenario="s",target="b",traffic="burst",le="7680.0"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 7200.0 1.7e+09` + "\n",
				`llmprobe_ttft_component_seconds_bucket{component="engine_queue",model="m",scenario="s",target="b",traffic="canary",le="0.1"} 1 # {trace_id="0af7651916cd43dd8448eb211c80319c"} 0.1 1.7e+09` + "\n",
			}
			for _, ex := range exemplars {
				if c.name == "openmetrics" && !strings.Contains(got, ex) {
					t.Errorf("the page lacks the exemplar line %s", ex)
				}
			}
			if c.name == "openmetrics" && strings.Count(got, "# {trace_id=") < 20 {
				t.Errorf("%d exemplars on the page, want one per observed bucket", strings.Count(got, "# {trace_id="))
			}
			if strings.Contains(got, tooLong) {
				t.Error("an id too long for an exemplar is on the page")
			}
			if c.name == "text" && strings.Contains(got, "trace_id") {
				t.Error("the text format has exemplars")
			}
			gf, wf := families(got), families(want)
			if len(gf) != len(wf) {
				t.Fatalf("%d families, promhttp writes %d\n%s", len(gf), len(wf), got)
			}
			for i := range gf {
				if !slices.Equal(gf[i], wf[i]) {
					t.Errorf("family %d differs\n got: %q\nwant: %q", i, gf[i], wf[i])
				}
			}
		})
	}
}

func TestExpositionFormats(t *testing.T) {
	e := exposed(t)
	_, plain := get(t, e, acceptOpenMetrics, "", "")
	if !strings.HasSuffix(plain, "\n# EOF\n") {
		t.Errorf("OpenMetrics page does not end with # EOF")
	}
	// Prometheus asks for gzip: same page, compressed.
	resp, zipped := get(t, e, acceptOpenMetrics, "gzip", "")
	if resp.Header.Get("Content-Encoding") != "gzip" || zipped != plain {
		t.Errorf("gzip: Content-Encoding %q, same page %v", resp.Header.Get("Content-Encoding"), zipped == plain)
	}
	// As promhttp negotiates: identity first among equals, gzip;q=0 refused.
	for _, enc := range []string{"identity, gzip", "gzip;q=0", "br"} {
		if resp, _ := get(t, e, acceptOpenMetrics, enc, ""); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q gave %q, want no encoding", enc, resp.Header.Get("Content-Encoding"))
		}
	}
	if resp, _ := get(t, e, acceptOpenMetrics, "deflate, gzip;q=0.5", ""); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip;q=0.5 was not taken")
	}

	// Protobuf, for native histograms, goes through client_golang whole.
	resp, body := get(t, e, acceptProtobuf, "", "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		t.Fatalf("protobuf scrape got %q", ct)
	}
	var fams []*dto.MetricFamily
	dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		fams = append(fams, f)
	}
	want, err := e.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != len(want) {
		t.Errorf("protobuf page has %d families, want %d", len(fams), len(want))
	}
	var native bool
	exemplars := map[string]bool{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			native = native || len(m.GetHistogram().GetPositiveSpan()) > 0
			for _, b := range m.GetHistogram().GetBucket() {
				if e := b.GetExemplar(); e != nil && e.GetTimestamp() != nil && len(e.GetLabel()) == 1 && e.GetLabel()[0].GetName() == "trace_id" {
					exemplars[f.GetName()+" "+e.GetLabel()[0].GetValue()] = true
				}
			}
		}
	}
	if !native {
		t.Error("protobuf page has no native histogram buckets")
	}
	// Bucket exemplars, with timestamps: Prometheus takes them for the
	// native histogram too.
	if !exemplars["llmprobe_time_to_first_token_seconds 4bf92f3577b34da6a3ce929d0e0e4736"] {
		t.Errorf("protobuf page lacks the burst request's TTFT exemplar; it has %v", exemplars)
	}

	// name[] filters, as promhttp does.
	_, only := get(t, e, "", "", "?name[]=llmprobe_requests_total")
	if !strings.Contains(only, "llmprobe_requests_total{") || strings.Contains(only, "llmprobe_probe_success") {
		t.Errorf("name[] filter: %s", only)
	}
}

// Results, reloads and scrapes at once (for -race): every page parses.
func TestExpositionUnderLoad(t *testing.T) {
	p := NewProbe()
	p.Configure(testConfig(t, "300ms"))
	e := NewExposition(prometheus.NewRegistry(), p)
	var wg sync.WaitGroup
	for _, target := range []string{"a", "b"} {
		wg.Go(func() {
			for i := range 300 {
				r := successResult(target)
				r.Traffic = []string{prober.TrafficCanary, prober.TrafficBurst}[i%2]
				p.Observe(r)
			}
		})
	}
	wg.Go(func() {
		for _, ttft := range []string{"200ms", "250ms", "300ms"} {
			p.Configure(testConfig(t, ttft))
		}
	})
	for range 20 {
		_, page := get(t, e, "", "gzip", "")
		parser := expfmt.NewTextParser(model.LegacyValidation)
		if _, err := parser.TextToMetricFamilies(strings.NewReader(page)); err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
	}
	wg.Wait()
}
