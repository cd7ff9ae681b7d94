// Command streams measures the prober under many concurrent streams: the
// dispatch delay of scheduled requests and the client heap per in-flight
// stream. The simulated engine runs in a child process, so its memory does
// not count against the prober's.
//
//	go run ./bench/streams -streams 500
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/bench/internal/simchild"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func main() {
	simchild.ServeIfChild(simConfig())
	streams := flag.Int("streams", 500, "concurrent streams")
	tokens := flag.Int("tokens", 200, "output tokens per stream")
	spread := flag.Duration("spread", time.Second, "the requests are due evenly over this time")
	flag.Parse()
	if err := run(*streams, *tokens, *spread); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// simConfig has room for every stream.
func simConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.MaxQueue = 4096, 4096
	cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq = 10*time.Millisecond, 0, 10*time.Millisecond, 0
	return cfg
}

func run(streams, tokens int, spread time.Duration) error {
	url, stop, err := simchild.Start()
	if err != nil {
		return err
	}
	defer stop()

	target := config.DefaultTarget
	target.Name, target.URL, target.API, target.Model = "sim", url, config.APIChat, "sim-model"
	target.HTTPClientConfig = promconfig.DefaultHTTPClientConfig
	client, err := prober.NewClient(target)
	if err != nil {
		return err
	}
	scenario := config.DefaultScenario
	scenario.Name = "bench"
	scenario.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	scenario.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: tokens}

	// One warm-up request opens the path; then a heap baseline.
	prompts := prompt.NewBuilder(scenario, 1)
	p, mt := prompts.Next()
	client.Do(context.Background(), prober.Request{Scenario: scenario, Prompt: p, MaxTokens: mt, Sched: time.Now()})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	// Every request's prompt is built before the clock starts, as a burst runner does.
	reqs := make([]prober.Request, streams)
	start := time.Now().Add(200 * time.Millisecond)
	for i := range reqs {
		p, mt := prompts.Next()
		reqs[i] = prober.Request{Scenario: scenario, Traffic: prober.TrafficBurst, Prompt: p, MaxTokens: mt,
			Sched: start.Add(time.Duration(i) * spread / time.Duration(streams))}
	}
	var inFlight, peak atomic.Int64
	var peakHeap atomic.Uint64
	results := make([]*prober.Result, streams)
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(reqs[i].Sched))
			n := inFlight.Add(1)
			if n > peak.Load() {
				peak.Store(n)
			}
			results[i] = client.Do(context.Background(), reqs[i])
			inFlight.Add(-1)
		}()
	}
	// Sample the heap while every stream is open: after the last is due and
	// before the first can finish (tokens × 10 ms).
	time.Sleep(time.Until(start.Add(spread + 300*time.Millisecond)))
	open := inFlight.Load()
	runtime.GC()
	var atPeak runtime.MemStats
	runtime.ReadMemStats(&atPeak)
	peakHeap.Store(atPeak.HeapInuse)
	wg.Wait()

	var dispatch, ttft []time.Duration
	outcomes := map[prober.Outcome]int{}
	for _, r := range results {
		outcomes[r.Outcome]++
		dispatch = append(dispatch, r.DispatchDelay)
		if r.Outcome == prober.OutcomeSuccess {
			ttft = append(ttft, r.TTFT)
		}
	}
	slices.Sort(dispatch)
	slices.Sort(ttft)
	q := func(s []time.Duration, p float64) time.Duration {
		if len(s) == 0 {
			return 0
		}
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	fmt.Printf("streams=%d tokens=%d spread=%s cores=%d outcomes=%v\n", streams, tokens, spread, runtime.GOMAXPROCS(0), outcomes)
	fmt.Printf("in flight at the heap sample: %d (peak %d)\n", open, peak.Load())
	fmt.Printf("dispatch delay: p50=%s p99=%s max=%s\n", q(dispatch, 0.5), q(dispatch, 0.99), dispatch[len(dispatch)-1])
	fmt.Printf("TTFT: p50=%s p99=%s\n", q(ttft, 0.5), q(ttft, 0.99))
	if open > 0 {
		fmt.Printf("client heap per in-flight stream: %.1f KiB (heap in use %.1f MiB at the sample, %.1f MiB before)\n",
			float64(int64(peakHeap.Load())-int64(base.HeapInuse))/float64(open)/1024,
			float64(peakHeap.Load())/(1<<20), float64(base.HeapInuse)/(1<<20))
	}
	return nil
}
