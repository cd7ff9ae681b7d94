package burst

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/sim"
)

// A burst through a gateway in front of three sims, one of them slower to
// prefill, the gateway naming each in x-served-by: the report's table by
// replica has the two configured ones by name and the third as other, and
// names the slow one.
func TestBurstByReplica(t *testing.T) {
	fast, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 2*time.Millisecond, 2*time.Millisecond })
	slow, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 60*time.Millisecond, 2*time.Millisecond })
	backends := []struct {
		name string
		url  string
	}{{"pod-a", fast.URL}, {"pod-b", slow.URL}, {"pod-unlisted", fast.URL}}
	// One proxy a backend, each with a transport of its own: no other test
	// of the package closes its connections.
	proxies := make([]*httputil.ReverseProxy, len(backends))
	for i, b := range backends {
		u, _ := url.Parse(b.url)
		transport := &http.Transport{MaxIdleConnsPerHost: 64}
		t.Cleanup(transport.CloseIdleConnections)
		proxies[i] = &httputil.ReverseProxy{
			Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
			Transport:     transport,
			FlushInterval: -1, // stream as it comes
			ErrorLog:      log.New(io.Discard, "", 0),
		}
	}
	var n atomic.Uint64
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1) % uint64(len(backends))
		w.Header().Set("X-Served-By", backends[i].name)
		proxies[i].ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)
	target := testkit.Target(gateway.URL, config.APICompletions)
	target.Replicas = &config.Replicas{Header: "x-served-by", Values: []string{"pod-a", "pod-b"}}
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(burstOf(config.ArrivalConstant, 30, time.Second), burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Replicas) != 3 || rep.Replicas[0].Replica != "pod-a" || rep.Replicas[1].Replica != "pod-b" || rep.Replicas[2].Replica != config.ReplicaOther {
		t.Fatalf("replicas %+v", rep.Replicas)
	}
	total := 0
	for _, r := range rep.Replicas {
		total += r.Requests
		// The test's gateway (net/http/httputil) cuts a stream now and then
		// under -race (1 or 2 of 30, stream_cut): attribution is what is
		// tested, so a failure must still be counted to its replica.
		if r.Succeeded < r.Requests*8/10 || r.TTFT.Count != r.Succeeded {
			t.Errorf("replica %s: %d of %d succeeded, %d TTFT samples; failures %+v", r.Replica, r.Succeeded, r.Requests, r.TTFT.Count, rep.Failures)
		}
	}
	if total != rep.Requests {
		t.Errorf("%d requests by replica of %d", total, rep.Requests)
	}
	if a, b := rep.Replicas[0].TTFT.P50, rep.Replicas[1].TTFT.P50; b < a+0.04 {
		t.Errorf("TTFT p50 pod-a %.4f s, pod-b %.4f s: pod-b prefills 58 ms slower", a, b)
	}
	var text strings.Builder
	render.Text(&text, rep)
	if !strings.Contains(text.String(), "slowest replica by TTFT p50: pod-b, ") || !strings.Contains(text.String(), "by replica (the target's replicas header") {
		t.Errorf("the text report does not name the slow replica:\n%s", text.String())
	}
}
