// Command burst measures the burst runner against the simulated engine:
//
//   - the highest arrival rate at which the dispatcher keeps dispatch delay
//     p99 within 1 ms (sim in a child process, so it does not share the
//     prober's scheduler);
//
//   - the error of measured TTFT against the sim's own record of when it
//     wrote each request's first token (sim in process, one clock).
//
//     go run ./bench/burst
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/bench/internal/simchild"
	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

func main() {
	simchild.ServeIfChild(simConfig())
	rates := flag.String("rates", "50,100,200,400,800,1200,1600", "arrival rates to try, per second")
	seconds := flag.Duration("duration", 5*time.Second, "measured time per rate")
	flag.Parse()
	if err := dispatchRates(*rates, *seconds); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := ttftError(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func simConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.MaxQueue = 4096, 100000
	cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq = 5*time.Millisecond, 0, 5*time.Millisecond, 0
	cfg.Faults.RoleOnlyFirstChunk = false
	return cfg
}

func client(url string) (*prober.Client, error) {
	t := config.DefaultTarget
	t.Name, t.URL, t.API, t.Model = "sim", url, config.APICompletions, "sim-model"
	t.HTTPClientConfig = promconfig.DefaultHTTPClientConfig
	return prober.NewClient(t)
}

func scenario() config.Scenario {
	s := config.DefaultScenario
	s.Name = "bench"
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 32}
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 4}
	return s
}

func burstAt(rate float64, d time.Duration) config.Burst {
	b := config.DefaultBurst
	b.Name, b.Target = "bench", "sim"
	b.Scenarios = []config.WeightedScenario{{Scenario: "bench", Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: rate, Burstiness: 1}
	b.Duration = config.Duration(d)
	b.Warmup = config.Warmup{Duration: config.Duration(time.Second)}
	b.MaxConcurrency = 4096
	return b
}

func dispatchRates(list string, d time.Duration) error {
	url, stop, err := simchild.Start()
	if err != nil {
		return err
	}
	defer stop()
	c, err := client(url)
	if err != nil {
		return err
	}
	best := 0.0
	for _, f := range strings.Split(list, ",") {
		var rate float64
		if _, err := fmt.Sscan(f, &rate); err != nil {
			return fmt.Errorf("rate %q: %w", f, err)
		}
		rep, err := burst.Runner{Client: c}.Run(context.Background(), burstAt(rate, d), []config.Scenario{scenario()})
		if err != nil {
			return err
		}
		dd := rep.Latency["dispatch_delay"]
		achieved := 0.0
		if rep.AchievedRate != nil {
			achieved = *rep.AchievedRate
		}
		fmt.Printf("rate %6.0f/s: achieved %7.1f/s, %d requests %v, dispatch delay p50 %.3fms p99 %.3fms max %.3fms, ttft p99 %.1fms\n",
			rate, achieved, rep.Requests, rep.Outcomes, 1000*dd.P50, 1000*dd.P99, 1000*dd.Max, 1000*rep.Latency["ttft"].P99)
		if dd.P99 <= 0.001 && rep.Outcomes[prober.OutcomeSuccess] == rep.Requests {
			best = rate
		}
	}
	fmt.Printf("highest rate with dispatch delay p99 <= 1ms: %.0f/s\n\n", best)
	return nil
}

// firstTokenRecorder wraps the sim and notes, per prompt, when the sim wrote
// the first chunk that carries text.
type firstTokenRecorder struct {
	next http.Handler
	mu   sync.Mutex
	at   map[string]time.Time
}

type recordingWriter struct {
	http.ResponseWriter
	rec    *firstTokenRecorder
	key    string
	stored bool
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if !w.stored && bytes.Contains(p, []byte(`"text":"`)) && !bytes.Contains(p, []byte(`"text":""`)) {
		w.stored = true
		w.rec.mu.Lock()
		w.rec.at[w.key] = time.Now()
		w.rec.mu.Unlock()
	}
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (r *firstTokenRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	var b struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(body, &b)
	r.next.ServeHTTP(&recordingWriter{ResponseWriter: w, rec: r, key: b.Prompt}, req)
}

// collected keeps every measured result of a burst.
type collected struct {
	mu  sync.Mutex
	all []*prober.Result
}

func (c *collected) Observe(r *prober.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, r)
}

func ttftError() error {
	e, err := sim.New(simConfig())
	if err != nil {
		return err
	}
	defer e.Close()
	rec := &firstTokenRecorder{next: e.Handler(), at: map[string]time.Time{}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, err := client(srv.URL)
	if err != nil {
		return err
	}
	// Rebuild the burst's prompts to match results to the sim's record.
	const rate = 50
	b := burstAt(rate, 10*time.Second)
	results := &collected{}
	if _, err := (burst.Runner{Client: c, Observer: results}).Run(context.Background(), b, []config.Scenario{scenario()}); err != nil {
		return err
	}
	// Due times are distinct and increasing, so sorted results line up with
	// the plan's measured arrivals and their prompts.
	slices.SortFunc(results.all, func(a, b *prober.Result) int { return a.Sched.Compare(b.Sched) })
	builder := prompt.NewBuilder(scenario(), b.Seed)
	var texts []string
	n := uint64(0)
	for a := range burst.Plan(b, rate) {
		p, _ := builder.At(n)
		n++
		if !a.Warmup {
			texts = append(texts, p.Text)
		}
	}
	var errs []float64
	for i, res := range results.all {
		if i >= len(texts) || res.Outcome != prober.OutcomeSuccess {
			continue
		}
		rec.mu.Lock()
		at, ok := rec.at[texts[i]]
		rec.mu.Unlock()
		if !ok {
			continue
		}
		errs = append(errs, res.Sched.Add(res.TTFT).Sub(at).Seconds())
	}
	if len(errs) == 0 {
		return fmt.Errorf("no request matched the sim's record")
	}
	s := report.Summarize(errs)
	fmt.Printf("TTFT error (prober's first token - sim's first write), %d requests at %d/s: p50 %.3fms p99 %.3fms max %.3fms min %.3fms\n",
		s.Count, rate, 1000*s.P50, 1000*s.P99, 1000*s.Max, 1000*s.Min)
	return nil
}
