package daemon

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// TestMetricsPageShards: the page encoded in shards, plain or as one gzip
// member per shard, is byte for byte what one encoder writes of the same
// families (promhttp's loop), in every format; Go's gzip reader (the
// scraper's) reads the members as one stream.
func TestMetricsPageShards(t *testing.T) {
	d, _ := renderDaemon(t, renderSetup{})
	mfs, err := gatherAll(d.pages)
	if err != nil {
		t.Fatal(err)
	}
	logger := stdlog.New(io.Discard, "", 0)
	for _, accept := range []string{"", acceptOpenMetrics, "application/openmetrics-text;version=0.0.1", acceptProtobuf,
		"text/plain;version=0.0.4;escaping=underscores"} {
		format := expfmt.NegotiateAccept(http.Header{"Accept": {accept}}, expfmt.DefaultOpenMetricsAcceptedFormats()...)
		var want bytes.Buffer
		enc := expfmt.NewEncoder(&want, format)
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.(expfmt.Closer).Close(); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 8} {
			for _, zip := range []bool{false, true} {
				parts := renderPage(mfs, format, n, zip, logger)
				if len(parts) > n || n > 1 && len(parts) < 2 {
					t.Errorf("%s: %d parts for %d shards", format, len(parts), n)
				}
				var page bytes.Buffer
				for _, p := range parts {
					page.Write(p.Bytes())
				}
				putBuffers(parts)
				got := page.Bytes()
				if zip {
					got = gunzip(t, got)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("%s in %d shards (gzip: %v): %d bytes differ from one encoder's %d", format, n, zip, len(got), want.Len())
				}
			}
		}
	}
}

// TestMetricsPage: the handler says what it sends (type, length, Vary),
// filters by name[] as promhttp does, and its gzipped page in shards is a
// text page promtool accepts.
func TestMetricsPage(t *testing.T) {
	d, _ := renderDaemon(t, renderSetup{})
	h := d.routes()
	get := func(url, accept, encoding string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Encoding", encoding)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", url, rec.Code, rec.Body)
		}
		if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(rec.Body.Len()); got != want {
			t.Errorf("GET %s: Content-Length %s, body %s", url, got, want)
		}
		if vary := strings.Join(rec.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept-Encoding") || !strings.Contains(vary, "Accept,") && !strings.HasSuffix(vary, "Accept") {
			t.Errorf("GET %s: Vary %q", url, vary)
		}
		return rec
	}
	rec := get("/metrics", "", "gzip")
	if rec.Header().Get("Content-Encoding") != "gzip" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("text page: %v", rec.Header())
	}
	testkit.PromtoolCheckMetrics(t, string(gunzip(t, rec.Body.Bytes())))

	const name = "llmprobe_time_to_first_token_seconds"
	rec = get("/metrics?name[]="+name+"&name[]=go_goroutines", acceptOpenMetrics, "")
	families := map[string]bool{}
	for line := range strings.Lines(rec.Body.String()) {
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			families[strings.Fields(f)[0]] = true
		}
	}
	if want := fmt.Sprint(map[string]bool{"llmprobe_time_to_first_token_seconds": true, "go_goroutines": true}); fmt.Sprint(families) != want || !strings.HasSuffix(rec.Body.String(), "# EOF\n") {
		t.Errorf("name[] filter: families %v, want %s; ends with # EOF: %v", families, want, strings.HasSuffix(rec.Body.String(), "# EOF\n"))
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
