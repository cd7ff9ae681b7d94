package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/target"
)

// The landing page says each comparison in its line; a comparison's
// request is found by its id and stays out of the canary probes.
func TestLandingPageComparisons(t *testing.T) {
	line := "upgrade, scenario chat: candidate vllm-0.12 against vllm-0.11, 60 pairs in 10m: TPOT p50 +31 % (95 % CI +24…+38 %), worse"
	site := New(Options{Targets: target.NewSet(log.NewNopLogger()), Store: store.New("", nil), Recent: 5, Failures: 5, Requests: 5,
		Comparisons: func() []string { return []string{line} }})
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := timelineResult()
	r.Traffic = prober.TrafficComparison
	site.Observe(r)
	code, page := get(t, srv.URL, "/")
	want := `<h2>Comparisons</h2>
<ul class="comparisons"><li>upgrade, scenario chat: candidate vllm-0.12 against vllm-0.11, 60 pairs in 10m: TPOT p50 &#43;31 % (95 % CI &#43;24…&#43;38 %), worse</li>`
	if code != http.StatusOK || !strings.Contains(page, want) {
		t.Errorf("landing page (%d) lacks\n%s\n%s", code, want, page)
	}
	if strings.Contains(page, "?id=1") {
		t.Error("a comparison's request is listed among the canary probes")
	}
	if code, page := get(t, srv.URL, "/probe?id="+r.RequestID); code != http.StatusOK || !strings.Contains(page, "(comparison)") {
		t.Errorf("the comparison request's page (%d):\n%s", code, page)
	}

	// Without comparisons the section is not there.
	bare := New(Options{Targets: target.NewSet(log.NewNopLogger()), Store: store.New("", nil)})
	mux = http.NewServeMux()
	bare.Register(mux)
	srv2 := httptest.NewServer(mux)
	defer srv2.Close()
	if _, page := get(t, srv2.URL, "/"); strings.Contains(page, "Comparisons") {
		t.Error("a Comparisons section without comparisons")
	}
}
