package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/redact"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
)

// GateOptions are the flags of `llmprobe gate`.
type GateOptions struct {
	ConfigFile, Burst string
	// Output, if set, receives the report JSON too.
	Output      string
	StoragePath string
	// Baseline, if set, is the report file to compare with instead of the
	// burst's previous report.
	Baseline string
	GPU      bool
	// Stdout gets the report table, Stderr progress and errors.
	Stdout, Stderr io.Writer
}

// Exit codes of `llmprobe gate`, the contract with release pipelines.
const (
	GatePassed     = 0
	GateFailed     = 1 // the target was measured and failed a gate
	GateError      = 2 // a usage or configuration error
	GateUnmeasured = 3 // the target could not be measured, or the report not written
)

// Gate runs one burst (or its sweep) now, prints its table, stores its
// report, and returns the exit code. A preflight request goes first: a
// target that cannot answer it is not measured at all, and the gate says why.
func Gate(ctx context.Context, o GateOptions) int {
	cfg, err := config.LoadFile(o.ConfigFile)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	secrets := redact.New()
	secrets.Add(redact.Secrets(cfg))
	o.Stdout, o.Stderr = secrets.Writer(o.Stdout), secrets.Writer(o.Stderr)
	b, ok := cfg.Burst(o.Burst)
	if !ok {
		fmt.Fprintf(o.Stderr, "llmprobe gate: no burst %q in %s\n", o.Burst, o.ConfigFile)
		return GateError
	}
	var baseline *report.Report
	if o.Baseline != "" {
		if baseline, err = readReport(o.Baseline); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: --baseline: %v\n", err)
			return GateError
		}
	}
	t, _ := cfg.Target(b.Target)
	client, err := prober.NewClient(t)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	defer client.Close()
	scenarios := cfg.ScenariosOf(b)

	res := preflight(ctx, client, scenarios[0], b.Seed)
	if res.Outcome != prober.OutcomeSuccess {
		fmt.Fprintf(o.Stderr, "llmprobe gate: preflight request to target %s (%s) failed, the burst was not sent: %s: %s\n",
			t.Name, t.URL, res.Outcome, res.FailureText())
		return GateUnmeasured
	}
	fmt.Fprintf(o.Stderr, "preflight: target %s answered, first token after %s\n", t.Name, res.TTFT.Round(time.Millisecond))

	runner := burst.Runner{
		Client:   client,
		Store:    report.NewStore(o.StoragePath, secrets),
		Baseline: baseline,
		Progress: func(done, total int) {
			if done == total || done%10 == 0 {
				fmt.Fprintf(o.Stderr, "\r%s: %d/%d requests done", b.Name, done, total)
			}
		},
	}
	if o.StoragePath == "" {
		runner.Store = nil
	}
	if o.GPU {
		g := collector.NewGPU(log.NewNopLogger(), 2*time.Second)
		g.Start()
		defer g.Stop()
		runner.GPU = g
	}
	rep, saveErr := runner.Run(ctx, b, scenarios)
	fmt.Fprintln(o.Stderr)
	rep.WriteText(o.Stdout)
	code := GatePassed
	switch {
	case unmeasured(rep) != "":
		fmt.Fprintf(o.Stderr, "llmprobe gate: target %s could not be measured: %s\n", t.Name, unmeasured(rep))
		code = GateUnmeasured
	case ctx.Err() != nil:
		fmt.Fprintf(o.Stderr, "llmprobe gate: %s\n", rep.AbortReason)
		code = GateUnmeasured
	case !rep.Passed:
		code = GateFailed
	}
	if saveErr != nil {
		fmt.Fprintf(o.Stderr, "llmprobe gate: the report was not stored in %s: %v\n", o.StoragePath, saveErr)
		code = GateUnmeasured
	}
	if o.Output != "" {
		if err := report.WriteJSON(o.Output, rep, secrets); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: writing %s: %v\n", o.Output, err)
			code = GateUnmeasured
		}
	}
	return code
}

// preflight sends one request of the burst's first scenario, measured like
// any other, before the burst is sent.
func preflight(ctx context.Context, c *prober.Client, s config.Scenario, seed uint64) *prober.Result {
	p, maxTokens := prompt.NewBuilder(s, seed^0x9e3779b97f4a7c15).Next()
	return c.Do(ctx, prober.Request{Scenario: s, Traffic: prober.TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
}

// unmeasured says why a run measured nothing of the target ("" when it did):
// no request was sent, or none got an answer.
func unmeasured(rep *report.Report) string {
	switch {
	case rep.Requests == 0:
		return "no request was sent"
	case rep.Outcomes[prober.OutcomeConnectionError] == rep.Requests:
		return fmt.Sprintf("every request failed to connect (%s)", topFailure(rep))
	}
	return ""
}

func topFailure(rep *report.Report) string {
	if len(rep.Failures) == 0 {
		return "no reason recorded"
	}
	f := rep.Failures[0]
	return f.Phase + ": " + f.Reason + ": " + f.Example
}

// readReport loads a report JSON file, as `llmprobe gate --output` writes it.
func readReport(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a report: %w", path, err)
	}
	if r.ID == "" {
		return nil, errors.New(path + " is not a report: it has no id")
	}
	return &r, nil
}
