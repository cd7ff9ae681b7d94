// Command longctx measures the peak resident memory of a built llmprobe
// running a long-context burst: `llmprobe gate` sends prompts of -tokens
// tokens, -concurrency at once, to the simulated engine in a child process
// (its prefill cost per token made small, so a 128k-token prompt takes
// milliseconds, not seconds, and its decode long enough that every slot
// fills). It prints the gate's peak RSS (the kernel's ru_maxrss of the
// exited process) and its peak anonymous RSS (polled), the most requests
// the engine ran at once, and how the requests ended. It builds nothing.
// ru_maxrss counts the binary's own mapped pages too, which differ by a few
// MiB with the page cache (a binary just written by go build maps more):
// compare binaries copied fresh, or by RssAnon.
//
//	make build && go run ./bench/longctx -bin bin/llmprobe
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/llmprobe/llmprobe/bench/internal/simchild"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
)

func main() {
	simchild.ServeIfChild()
	bin := flag.String("bin", "bin/llmprobe", "the llmprobe binary")
	tokens := flag.Int("tokens", 128<<10, "prompt tokens of every request")
	concurrency := flag.Int("concurrency", 10, "the burst's max_concurrency")
	requests := flag.Int("requests", 30, "measured requests")
	output := flag.Int("output", 256, "output tokens of every request")
	prefill := flag.Duration("prefill-per-token", time.Microsecond, "the engine's prefill cost per prompt token")
	decode := flag.Duration("decode-base", 10*time.Millisecond, "the engine's decode step with one sequence")
	flag.Parse()
	cfg := sim.DefaultConfig()
	cfg.PrefillPerToken, cfg.DecodeBase, cfg.MaxBatch = *prefill, *decode, 2**concurrency
	if err := run(*bin, cfg, *tokens, *concurrency, *requests, *output); err != nil {
		fmt.Fprintln(os.Stderr, "longctx:", err)
		os.Exit(1)
	}
}

// configYAML is the burst: every request due in the first seconds, so the
// concurrency cap holds the rest back and runs full.
const configYAML = `targets:
  - {name: sim, url: %q, api: chat, timeout: 120s}
scenarios:
  - {name: long, prompt_tokens: %d, output_tokens: %d}
bursts:
  - name: long
    target: sim
    scenarios: [{scenario: long}]
    arrival: {rate: %d}
    requests: %d
    max_concurrency: %d
`

func run(bin string, cfg sim.Config, tokens, concurrency, requests, output int) error {
	url, stop, err := simchild.Start(cfg)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "llmprobe-longctx-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "long.yml")
	if err := os.WriteFile(file, fmt.Appendf(nil, configYAML, url, tokens, output, 2*concurrency, requests, concurrency), 0o600); err != nil {
		return err
	}
	report := filepath.Join(dir, "report.json")
	cmd := exec.Command(bin, "gate", "--config.file="+file, "--burst=long", "--storage.path=", "--output="+report)
	logFile, err := os.Create(filepath.Join(dir, "gate.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile

	// Polled: the most the engine ran at once, and the gate's anonymous
	// memory (its heap and stacks; ru_maxrss also counts the binary's
	// pages, which vary with the page cache by a few MiB).
	var running, anon atomic.Int64
	done := make(chan struct{})
	polled := make(chan struct{})
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		defer close(polled)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				if n, err := engineMetric(url, "vllm:num_requests_running"); err == nil && int64(n) > running.Load() {
					running.Store(int64(n))
				}
				if kb, err := rssAnon(cmd.Process.Pid); err == nil && kb > anon.Load() {
					anon.Store(kb)
				}
			}
		}
	}()
	start := time.Now()
	err = cmd.Wait()
	close(done)
	<-polled
	code := cmd.ProcessState.ExitCode()
	if err != nil && code != 1 { // 1: measured, a gate failed
		log, _ := os.ReadFile(logFile.Name())
		return fmt.Errorf("gate: %v\n%s", err, log)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fmt.Errorf("no rusage for the gate process")
	}
	outcomes, err := outcomesOf(report)
	if err != nil {
		return err
	}
	// What the engine counted: the prompts arrived whole.
	promptTokens, err := engineMetric(url, "vllm:prompt_tokens_total")
	if err != nil {
		return err
	}
	fmt.Printf("llmprobe gate, %d requests of %d prompt tokens and %d output tokens, max_concurrency %d, engine prefill %s per token:\n",
		requests, tokens, output, concurrency, cfg.PrefillPerToken)
	fmt.Printf("  peak RSS %.1f MiB (ru_maxrss), peak RssAnon %.1f MiB (polled), %d running at once at the engine at most, outcomes %v, %.0f prompt tokens per request at the engine (the gate's preflight request included), %s, exit %d\n",
		float64(ru.Maxrss)/1024, float64(anon.Load())/1024, running.Load(), outcomes, promptTokens/float64(requests+1), time.Since(start).Round(100*time.Millisecond), code)
	return nil
}

// engineMetric reads one unlabelled sample from the engine's /metrics.
func engineMetric(url, name string) (float64, error) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) {
			return strconv.ParseFloat(f[len(f)-1], 64)
		}
	}
	return 0, fmt.Errorf("no %s on %s/metrics", name, url)
}

// rssAnon is RssAnon of /proc/PID/status, in kB.
func rssAnon(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no RssAnon in /proc/%d/status", pid)
}

// outcomesOf is the report's measured requests by outcome.
func outcomesOf(file string) (map[prober.Outcome]int, error) {
	r, err := store.Read(file)
	if err != nil {
		return nil, err
	}
	return r.Outcomes, nil
}
