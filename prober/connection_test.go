package prober

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

// countingServer serves h and counts the connections it accepted.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// fastSim is the sim with a few milliseconds per request, mutated by f.
func fastSim(t *testing.T, f func(*sim.Config)) *sim.Engine {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Model = "m"
	cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq = time.Millisecond, 0, time.Millisecond, 0
	if f != nil {
		f(&cfg)
	}
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// sequential sends n requests one after the other through one client.
func sequential(t *testing.T, url string, n int) []*Result {
	t.Helper()
	c := newClient(t, testkit.Target(url, config.APIChat))
	s := testkit.Scenario()
	b := prompt.NewBuilder(s, prompt.Source{}, 1)
	out := make([]*Result, n)
	for i := range out {
		p, maxTokens := b.Next()
		out[i] = c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	}
	return out
}

// Keep-alive stays on: one client's sequential requests to a server that
// keeps connections open share one (two at most, should one idle out).
func TestSequentialRequestsReuseTheConnection(t *testing.T) {
	srv, conns := countingServer(t, fastSim(t, nil).Handler())
	for i, res := range sequential(t, srv.URL, 100) {
		if res.Outcome != OutcomeSuccess {
			t.Fatalf("request %d: %s", i, res.FailureText())
		}
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("100 sequential requests opened %d connections, want at most 2", n)
	}
}

// A server that closes each connection after a streamed answer while
// advertising keep-alive (llama.cpp's server) costs no request: one sent
// into a connection closing under it is sent again.
func TestServerClosingAfterEachStreamFailsNothing(t *testing.T) {
	srv, conns := countingServer(t, fastSim(t, func(c *sim.Config) { c.Faults.CloseAfterStream = true }).Handler())
	results := sequential(t, srv.URL, 100)
	retried := 0
	for i, res := range results {
		if res.Outcome != OutcomeSuccess {
			t.Fatalf("request %d: %s\n%s", i, res.FailureText(), logOf(res))
		}
		if res.Timings.Retry != "" {
			retried++
		}
	}
	if n := conns.Load(); n < 100 {
		t.Errorf("%d connections for 100 requests: the server did not close each one", n)
	}
	t.Logf("%d of 100 requests sent again", retried)
}

// hangUpOnReuse serves h on each connection's first request and closes the
// connection on the next one, hold after reading it whole, answering
// nothing: the race above, every time.
func hangUpOnReuse(h http.Handler, hold time.Duration) (http.Handler, func(*http.Server)) {
	type served struct{}
	wrap := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.Context().Value(served{}).(*atomic.Int64)
		if n.Add(1) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(hold) // the server's own slowness, not a wait for the client
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	return wrap, func(s *http.Server) {
		s.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, served{}, new(atomic.Int64))
		}
	}
}

// A request sent on a reused connection that the server closed before any
// byte of an answer is sent once more, on a new connection, and succeeds;
// the retry is in its log and in Timings.Retry, and its latencies count
// from t_sched, the failed attempt's time included. (On main the second
// request failed: connection_reset, "EOF".)
func TestRequestOnAClosedReusedConnectionIsSentAgain(t *testing.T) {
	const hold = 30 * time.Millisecond
	h, setup := hangUpOnReuse(fastSim(t, nil).Handler(), hold)
	srv := httptest.NewUnstartedServer(h)
	setup(srv.Config)
	srv.Start()
	t.Cleanup(srv.Close)
	// The retry's connection is kept no longer: the next request opens a
	// new one, and the one after reuses it and is hung up on; every other
	// request, when each answer's connection is back in the pool before the
	// next request (on a loaded machine it may not be: then fewer).
	retried := 0
	for i, res := range sequential(t, srv.URL, 10) {
		if res.Outcome != OutcomeSuccess {
			t.Fatalf("request %d: %s\n%s", i, res.FailureText(), logOf(res))
		}
		onReused := res.Timings.Retry != ""
		if onReused {
			retried++
		}
		switch {
		case i == 0 && onReused:
			t.Errorf("request %d, on a new connection, was sent again (%s)", i, res.Timings.Retry)
		case onReused && res.Timings.Retry != transport.RetryEOF:
			t.Errorf("request %d: retry %q, want %q", i, res.Timings.Retry, transport.RetryEOF)
		case onReused && !strings.Contains(logOf(res), "sent again"):
			t.Errorf("request %d: the log does not say it was sent again:\n%s", i, logOf(res))
		case onReused && res.Timings.ConnReused:
			t.Errorf("request %d: the retry went out on a reused connection again", i)
		case onReused && (res.TTFT < hold || res.E2E < hold):
			t.Errorf("request %d: TTFT %s, E2E %s: the %s the server held the first attempt is not in them", i, res.TTFT, res.E2E, hold)
		}
	}
	if retried == 0 {
		t.Error("no request went out on a connection the server then closed: nothing was sent again")
	}
	t.Logf("%d of 10 requests sent again (5 when every answer's connection is pooled before the next request)", retried)
}

// Only a reused connection earns a retry: a server that hangs up on a new
// one fails the request, and sees it once.
func TestNoRetryOnANewConnection(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	res := sequential(t, srv.URL, 1)[0]
	if res.Outcome != OutcomeConnectionError || res.Timings.Retry != "" || requests.Load() != 1 {
		t.Errorf("%s, retry %q, %d requests seen; want a connection_error sent once", res.FailureText(), res.Timings.Retry, requests.Load())
	}
}

// Nor does a request the server began to answer: the second request gets
// half a status line and is not sent again.
func TestNoRetryAfterAResponseByte(t *testing.T) {
	h, setup := hangUpOnReuse(fastSim(t, nil).Handler(), 0)
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if conn, buf, err := http.NewResponseController(w).Hijack(); err == nil {
			_, _ = buf.WriteString("HTTP/1.1 2")
			_ = buf.Flush()
			conn.Close()
		}
	}))
	setup(srv.Config)
	srv.Start()
	t.Cleanup(srv.Close)
	results := sequential(t, srv.URL, 2)
	if res := results[1]; res.Outcome != OutcomeConnectionError || res.Timings.Retry != "" || requests.Load() != 2 {
		t.Errorf("%s, retry %q, %d requests seen; want the second to fail, sent once", res.FailureText(), res.Timings.Retry, requests.Load())
	}
}

// The same server under concurrent load, as a burst meets it: many idle
// connections closing at once, none of their requests lost.
func TestServerClosingAfterEachStreamUnderLoadFailsNothing(t *testing.T) {
	srv, _ := countingServer(t, fastSim(t, func(c *sim.Config) { c.Faults.CloseAfterStream = true }).Handler())
	c := newClient(t, testkit.Target(srv.URL, config.APIChat))
	s := testkit.Scenario()
	const workers, each = 8, 40
	results := make(chan *Result, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := prompt.NewBuilder(s, prompt.Source{}, uint64(w))
			for range each {
				p, maxTokens := b.Next()
				results <- c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
			}
		}()
	}
	wg.Wait()
	close(results)
	retried := map[string]int{}
	for res := range results {
		if res.Outcome != OutcomeSuccess {
			t.Errorf("%s\n%s", res.FailureText(), logOf(res))
		}
		retried[res.Timings.Retry]++
	}
	t.Logf("retries by reason of %d requests: %v", workers*each, retried)
}

// oneSlowConnection accepts one connection, after delay, and says when it
// let it through; no other, until it closes: a TLS handshake that outlives
// the request that asked for it, and the only connection there is.
type oneSlowConnection struct {
	net.Listener
	delay          time.Duration
	first          atomic.Bool
	accepted, done chan struct{}
	closeOnce      sync.Once
}

func (l *oneSlowConnection) Accept() (net.Conn, error) {
	if l.first.Swap(true) {
		<-l.done
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	time.Sleep(l.delay) // the server's slowness under test, not a wait for the client
	close(l.accepted)
	return c, err
}

func (l *oneSlowConnection) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// A connection whose dial outlived the request that asked for it (that
// request timed out in the TLS handshake) waits in the pool: the next
// request that takes it goes out on a connection that never carried a
// response, so it is not "reused", and the dial it did not make is not
// its DNS, connect or TLS time. (On main: reused="true", "connection
// reused".)
func TestAConnectionDialledForATimedOutRequestIsNotReused(t *testing.T) {
	srv := httptest.NewUnstartedServer(fastSim(t, nil).Handler())
	slow := &oneSlowConnection{Listener: srv.Listener, delay: 300 * time.Millisecond, accepted: make(chan struct{}), done: make(chan struct{})}
	srv.Listener = slow
	srv.StartTLS()
	t.Cleanup(srv.Close)
	target := testkit.Target(srv.URL, config.APIChat)
	target.Timeout = config.Duration(150 * time.Millisecond)
	target.HTTPClientConfig.TLSConfig.InsecureSkipVerify = true
	c := newClient(t, target)
	s := testkit.Scenario()
	b := prompt.NewBuilder(s, prompt.Source{}, 1)
	send := func() *Result {
		p, maxTokens := b.Next()
		return c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	}
	if first := send(); first.Outcome != OutcomeTimeout || first.Phase != transport.PhaseTLS {
		t.Fatalf("first request: %s in %s, want a timeout in the TLS handshake\n%s", first.Outcome, first.Phase, logOf(first))
	}
	// The handshake goes on; the next request finds it in the pool or
	// waits for it (its own dial is never accepted).
	<-slow.accepted
	second := send()
	tm := second.Timings
	if second.Outcome != OutcomeSuccess || tm.ConnReused || !tm.OtherDial || tm.Connect != 0 || tm.TLS != 0 {
		t.Fatalf("second request: %s, timings %+v; want a success on the earlier request's connection, not reused, no dial of its own\n%s", second.Outcome, tm, logOf(second))
	}
	if log := logOf(second); !strings.Contains(log, "connection new, dialled for an earlier request") {
		t.Errorf("log does not say whose dial the connection was:\n%s", log)
	}
	third := send()
	if !third.Timings.ConnReused || third.Timings.OtherDial != true {
		t.Errorf("third request: timings %+v, want the connection reused", third.Timings)
	}
}
