package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
)

func withID(r *prober.Result, n int) *prober.Result {
	r.RequestID = fmt.Sprintf("%032x", n)
	return r
}

// timelineResult is a streamed request with every phase recorded: a burst
// request that waited for the concurrency cap, on a new TLS connection,
// with a long answer.
func timelineResult() *prober.Result {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	r := &prober.Result{
		Target: "t", Scenario: "s", Model: "m", Traffic: prober.TrafficBurst, RequestID: "4bf92f3577b34da6a3ce929d0e0e4736",
		Sched: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), DispatchDelay: ms(0.5), QueueWait: ms(20),
		Outcome: prober.OutcomeSuccess, HTTPStatus: 200, Good: true,
		Timings: transport.Timings{DNS: ms(1), Connect: ms(2), TLS: ms(3), FirstByte: ms(40), TTFB: ms(70)},
		TTFT:    ms(95), OutputChunks: 300, OutputTokens: 301, TokenSource: prober.TokensFromUsage,
	}
	r.Note("POST http://t/v1/chat/completions")
	for i := range 300 {
		gap := ms(10)
		if i == 150 {
			gap = ms(900) // a stall in the middle of the answer
		}
		r.ITL = append(r.ITL, gap)
		r.MaxGap = max(r.MaxGap, gap)
	}
	r.E2E = r.TTFT + ms(10*299+900) + ms(1)
	return r
}

func TestTimeline(t *testing.T) {
	tl := TimelineOf(timelineResult())
	var got []string
	for _, e := range tl.Events {
		at := "–"
		if e.Known {
			at = e.At.String()
		}
		got = append(got, e.Name+" "+at+" "+e.Took.String())
	}
	want := []string{
		"due (t_sched) 0s 0s",
		"released by the schedule 500µs 500µs",
		"sent 20.5ms 20ms",
		"DNS – 1ms", "connect – 2ms", "TLS handshake – 3ms",
		"request written 30ms 9.5ms",
		"first byte 70ms 40ms",
		"first token 95ms 25ms",
		"end of stream 3.986s 3.891s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	g := tl.Gaps
	// 20 first, 10 last, and the stall between them: 31 rows.
	if g.Count != 300 || len(g.Rows) != GapsHead+GapsTail+1 || g.Elided != 300-len(g.Rows) || g.Longest != 900*time.Millisecond {
		t.Fatalf("gaps: %d counted, %d rows, %d elided, longest %v", g.Count, len(g.Rows), g.Elided, g.Longest)
	}
	stall := g.Rows[GapsHead]
	if !stall.Longest || stall.N != 152 || stall.Skipped != 150-GapsHead || stall.At != 95*time.Millisecond+151*10*time.Millisecond+890*time.Millisecond {
		t.Errorf("the stall's row: %+v", stall)
	}
	if last := g.Rows[len(g.Rows)-1]; last.N != 301 || last.At != 95*time.Millisecond+10*299*time.Millisecond+900*time.Millisecond {
		t.Errorf("the last token's row: %+v", last)
	}

	// A request refused before a token: no token rows, the failure at the end.
	refused := &prober.Result{Outcome: prober.OutcomeRejected, HTTPStatus: 429, Phase: "headers", Reason: "http_status", Error: "HTTP 429",
		DispatchDelay: time.Millisecond, Timings: transport.Timings{ConnReused: true, FirstByte: 4 * time.Millisecond, TTFB: 6 * time.Millisecond}, E2E: 7 * time.Millisecond}
	tl = TimelineOf(refused)
	last := tl.Events[len(tl.Events)-1]
	if tl.Gaps.Count != 0 || !last.Bad || last.Name != "failed: rejected" || last.Note != "headers: HTTP 429 [http_status]" || last.At != 7*time.Millisecond {
		t.Errorf("refused request's timeline: %+v", tl)
	}
}

// A burst request is found by the id its exemplars carry, with its whole
// timeline; an id no longer held is a 404 that says what is kept and where
// else to look; a malformed one a 400.
func TestProbePageByRequestID(t *testing.T) {
	site := New(Options{Recent: 5, Failures: 5, Requests: 2, Schedules: func() []config.Pair { return nil }})
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := timelineResult()
	site.Observe(r)
	for _, path := range []string{"/probe?id=" + r.RequestID, "/probe?id=" + strings.ToUpper(r.RequestID), "/probe?id=1"} {
		code, page := get(t, srv.URL, path)
		for _, want := range []string{
			"<code>4bf92f3577b34da6a3ce929d0e0e4736</code>", "(burst)", `id="timeline"`,
			"<td>sent</td><td>20.5 ms</td><td>20.0 ms</td><td>queue wait: for a slot under the burst&#39;s concurrency cap</td>",
			"<td>first token</td><td>95.0 ms</td>", "<td>TLS handshake</td><td>–</td><td>3.0 ms</td>",
			"<td>end of stream</td><td>3986.0 ms</td>",
			`900.0 ms (longest)`, "… 130 tokens left out", "269 gaps in the middle are left out",
		} {
			if code != 200 || !strings.Contains(page, want) {
				t.Errorf("GET %s (%d) lacks %q", path, code, want)
			}
		}
	}
	if testing.Verbose() {
		_, page := get(t, srv.URL, "/probe?id="+r.RequestID)
		t.Log(page)
	}

	// Two more push it out of the ring of 2.
	for i := range 2 {
		site.Observe(withID(timelineResult(), i))
	}
	code, page := get(t, srv.URL, "/probe?id="+r.RequestID)
	for _, want := range []string{"Probe 4bf92f3577b34da6a3ce929d0e0e4736 is not held", "the last 2 requests of any traffic", "it holds 2 now", `href="/bursts"`, "X-Request-Id", "instance"} {
		if code != http.StatusNotFound || !strings.Contains(page, want) {
			t.Errorf("an evicted id (%d) lacks %q:\n%s", code, want, page)
		}
	}
	if code, page := get(t, srv.URL, "/probe?id=99"); code != http.StatusNotFound || !strings.Contains(page, "numbered 99") {
		t.Errorf("an unknown probe number: %d\n%s", code, page)
	}
	for _, id := range []string{"x", "4bf92f3577b34da6a3ce929d0e0e473", "4bf92f3577b34da6a3ce929d0e0e473g", ""} {
		if code, page := get(t, srv.URL, "/probe?id="+id); code != http.StatusBadRequest || !strings.Contains(page, "32 hex digits") {
			t.Errorf("id %q: %d %s, want 400", id, code, page)
		}
	}
}

// A request's page shows its traceparent, where its TTFT went, part by part
// with its share, and what the engine reported; a request without a first
// token or without engine timings says n/a with why.
func TestProbePageShowsTheTTFTSplit(t *testing.T) {
	site := New(Options{Recent: 5, Failures: 5, Requests: 5, Schedules: func() []config.Pair { return nil }})
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	r := timelineResult()
	r.TraceParent = "00-" + r.RequestID + "-00f067aa0ba902b7-01"
	r.Engine = &prober.EngineTimings{Source: prober.TimingsVLLM, Queue: 40 * time.Millisecond, HasQueue: true, Prefill: 30 * time.Millisecond, HasPrefill: true, CachedPromptTokens: -1}
	r.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: 500 * time.Microsecond}, {Component: prober.ComponentClientQueue, D: 20 * time.Millisecond},
		{Component: prober.ComponentConnect, D: 4500 * time.Microsecond}, {Component: prober.ComponentEngineQueue, D: 40 * time.Millisecond},
		{Component: prober.ComponentEnginePrefill, D: 30 * time.Millisecond}, {Component: prober.ComponentNetwork, D: 0}}
	site.Observe(r)
	_, page := get(t, srv.URL, "/probe?id="+r.RequestID)
	for _, want := range []string{
		"<code>00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01</code>",
		`id="ttft-split"`, "Consecutive parts of this request's TTFT (95.0 ms)",
		"<td>engine_queue</td><td>40.0 ms</td><td>42.1%</td>", "<td>network</td><td>0.0 ms</td><td>0.0%</td>",
		"vllm_metrics: queue 40.0 ms, prefill 30.0 ms",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	failed := withID(timelineResult(), 7)
	failed.OutputChunks, failed.TTFTParts, failed.Engine = 0, nil, nil
	site.Observe(failed)
	_, page = get(t, srv.URL, "/probe?id="+failed.RequestID)
	for _, want := range []string{"n/a: no output token arrived", "engine timings</th><td>n/a: the answer carried none"} {
		if !strings.Contains(page, want) {
			t.Errorf("a request without a first token: the page lacks %q", want)
		}
	}
}
