package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

func get(t *testing.T, hc *http.Client, tr *Tracer, url string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(tr.Context(t.Context()), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// A request that got an answer has its phases, counted from when it was
// due; the next one reuses the connection. One to a closed port failed in
// connect, refused; a passed deadline and llmprobe's own cancel are named.
func TestTracer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	hc, err := NewClient(testkit.Target(srv.URL, config.APIChat))
	if err != nil {
		t.Fatal(err)
	}
	sched := time.Now().Add(-time.Millisecond)
	first, second := NewTracer(sched), NewTracer(sched)
	if err := get(t, hc, first, srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := get(t, hc, second, srv.URL); err != nil {
		t.Fatal(err)
	}
	a, b := first.Timings(), second.Timings()
	if a.ConnReused || a.Connect <= 0 || a.Wrote < time.Millisecond || a.TTFB < a.Wrote || a.FirstByte <= 0 {
		t.Errorf("first request: %+v; want a new connection, written and answered after its due time", a)
	}
	if !b.ConnReused || b.Connect != 0 {
		t.Errorf("second request: %+v; want the connection reused", b)
	}

	srv.Close()
	hc.CloseIdleConnections()
	refused := NewTracer(time.Now())
	err = get(t, hc, refused, srv.URL)
	if phase, reason := refused.Failed(t.Context(), err); phase != PhaseConnect || reason != ReasonRefused {
		t.Errorf("a closed port: %s, %s (%v); want connect, connection_refused", phase, reason, err)
	}
	past, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	if r := Reason(past, past.Err()); r != ReasonDeadline {
		t.Errorf("a passed deadline: %s", r)
	}
	stopped, stop := context.WithCancel(t.Context())
	stop()
	if r := Reason(stopped, stopped.Err()); r != ReasonCancelled {
		t.Errorf("a cancel: %s", r)
	}
	if r := Reason(t.Context(), errors.New("something else")); r != ReasonOther {
		t.Errorf("any other error: %s", r)
	}
}
