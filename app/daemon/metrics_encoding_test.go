package daemon

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsEncoding: /metrics is gzipped only for a client that takes
// gzip (q-values honoured), says so, and varies on Accept-Encoding.
func TestMetricsEncoding(t *testing.T) {
	d := New(Options{StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
	t.Cleanup(d.stop)
	h := d.routes()
	for _, c := range []struct {
		accept string
		gzip   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=0", false},
		{"identity", false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", acceptOpenMetrics)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("Accept-Encoding %q: %d", c.accept, rec.Code)
		}
		if got := rec.Header().Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip: %v", c.accept, rec.Header().Get("Content-Encoding"), c.gzip)
		}
		if !strings.Contains(strings.Join(rec.Header().Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q lacks Accept-Encoding", c.accept, rec.Header().Values("Vary"))
		}
		var body io.Reader = rec.Body
		if c.gzip {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/openmetrics-text") || !strings.HasSuffix(string(b), "# EOF\n") {
			t.Errorf("Accept-Encoding %q: %s page does not end with # EOF", c.accept, rec.Header().Get("Content-Type"))
		}
	}
}
