package enginemetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

func scrapeOf(url string, timeout time.Duration) Scraper {
	return Scraper{Client: http.DefaultClient, URL: url, Timeout: timeout}
}

// Every way a metrics endpoint fails gives a page with its reason, bounded
// by the timeout and the size limit, never a panic or a hang.
func TestScrapeFaultyEndpoints(t *testing.T) {
	big := strings.Repeat("# padding line of a page far too large\n", MaxPageBytes/38+1)
	release := make(chan struct{})
	defer close(release)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404 Not Found: no metrics page at this URL"},
		{"501 llama.cpp without --metrics", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with `+"`--metrics`"+`"}}`, http.StatusNotImplemented)
		}, "HTTP 501 Not Implemented: the engine serves no metrics (llama.cpp answers so unless started with --metrics)"},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, "timeout: "},
		{"garbage", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "this is {not} prometheus\n\x00\x01") }, "unparseable page"},
		{"json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"iter": 1, "kvCacheStats": {}}]`)
		}, "it is JSON (trtllm-serve's /metrics is; its Prometheus page is /prometheus/metrics)"},
		{"oversized, announced", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			io.WriteString(w, big)
		}, "page larger than 8 MiB (8609367 bytes announced), not read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			start := time.Now()
			p := scrapeOf(srv.URL+"/metrics", 300*time.Millisecond).Scrape(context.Background())
			if p.OK() || !strings.Contains(p.Error, c.want) {
				t.Fatalf("error %q, want it to contain %q", p.Error, c.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if p.Duration <= 0 || p.Time.IsZero() {
				t.Errorf("page %+v carries no time", p)
			}
		})
	}
	// Streamed with no length: read up to the limit, then refused. A
	// generous timeout, so a slow machine still reaches the limit.
	t.Run("oversized, streamed", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) }))
		defer srv.Close()
		p := scrapeOf(srv.URL, 30*time.Second).Scrape(context.Background())
		if !strings.Contains(p.Error, "page larger than 8 MiB, not read") {
			t.Errorf("error %q", p.Error)
		}
	})
	t.Run("down", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL + "/metrics"
		srv.Close()
		p := scrapeOf(url, time.Second).Scrape(context.Background())
		if !strings.Contains(p.Error, "engine down: GET "+url) || !strings.Contains(p.Error, "refused") {
			t.Errorf("error %q", p.Error)
		}
	})
}

func TestScrapeRedactsAndParses(t *testing.T) {
	vllm, err := os.ReadFile("testdata/vllm-after.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			w.Write(vllm)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	p := scrapeOf(srv.URL+"/metrics", time.Second).Scrape(context.Background())
	if !p.OK() || p.families["vllm:time_to_first_token_seconds"] == nil || p.families["vllm:num_requests_waiting"] == nil {
		t.Fatalf("page %+v", p)
	}
	if len(p.families) > len(knownNames) {
		t.Errorf("the page keeps %d families, only known ones wanted", len(p.families))
	}
	s := scrapeOf(srv.URL+"/sk-secret-path", time.Second)
	s.Redact = func(x string) string { return strings.ReplaceAll(x, "sk-secret-path", "<secret>") }
	if p := s.Scrape(context.Background()); strings.Contains(p.Error, "sk-secret") {
		t.Errorf("secret in %q", p.Error)
	}
}

// An engine that answers only in OpenMetrics (client_golang writes the
// page, with an exemplar and # EOF) is refused with the reason, naming the
// Content-Type it sent; llmprobe asked for the text format.
func TestScrapeRefusesOpenMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vllm:time_to_first_token_seconds", Help: "TTFT.", Buckets: []float64{0.1, 0.2, 0.5}}, []string{"model_name"})
	reg.MustRegister(h)
	h.WithLabelValues("m").(prometheus.ExemplarObserver).ObserveWithExemplar(0.15, prometheus.Labels{"trace_id": "abc"})
	accept := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept <- r.Header.Get("Accept")
		mfs, err := reg.Gather()
		if err != nil {
			t.Error(err)
		}
		f := expfmt.NewFormat(expfmt.TypeOpenMetrics)
		w.Header().Set("Content-Type", string(f))
		enc := expfmt.NewEncoder(w, f)
		for _, mf := range mfs {
			_ = enc.Encode(mf)
		}
		_ = enc.(expfmt.Closer).Close()
	}))
	defer srv.Close()
	p := scrapeOf(srv.URL, time.Second).Scrape(context.Background())
	if got := <-accept; got != "text/plain;version=0.0.4" {
		t.Errorf("Accept %q, want the text format only", got)
	}
	if p.OK() || p.families != nil {
		t.Fatalf("an OpenMetrics page was read: %+v", p)
	}
	for _, want := range []string{`Content-Type "application/openmetrics-text; version=1.0.0; charset=utf-8"`, "Prometheus text format only", "no OpenMetrics parser"} {
		if !strings.Contains(p.Error, want) {
			t.Errorf("error %q does not say %q", p.Error, want)
		}
	}
}
