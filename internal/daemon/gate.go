package daemon

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// GateOptions are the flags of `llmprobe gate`.
type GateOptions struct {
	ConfigFile, Burst string
	// Output, if set, receives the report JSON too.
	Output      string
	StoragePath string
	GPU         bool
	// Stdout gets the report table, Stderr progress and errors.
	Stdout, Stderr io.Writer
}

// Exit codes of `llmprobe gate`, the contract with release pipelines.
const (
	GatePassed = 0
	GateFailed = 1
	GateError  = 2 // a usage or configuration error
)

// Gate runs one burst (or its sweep) now, prints its table, stores its
// report, and returns the exit code.
func Gate(ctx context.Context, o GateOptions) int {
	cfg, err := config.LoadFile(o.ConfigFile)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	b, ok := cfg.Burst(o.Burst)
	if !ok {
		fmt.Fprintf(o.Stderr, "llmprobe gate: no burst %q in %s\n", o.Burst, o.ConfigFile)
		return GateError
	}
	t, _ := cfg.Target(b.Target)
	client, err := prober.NewClient(t)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	defer client.Close()
	runner := burst.Runner{
		Client: client,
		Store:  report.NewStore(o.StoragePath),
		Progress: func(done, total int) {
			if done == total || done%10 == 0 {
				fmt.Fprintf(o.Stderr, "\r%s: %d/%d requests done", b.Name, done, total)
			}
		},
	}
	if o.GPU {
		g := collector.NewGPU(log.NewNopLogger(), 2*time.Second)
		g.Start()
		defer g.Stop()
		runner.GPU = g
	}
	rep, saveErr := runner.Run(ctx, b, cfg.ScenariosOf(b))
	fmt.Fprintln(o.Stderr)
	if saveErr != nil {
		fmt.Fprintf(o.Stderr, "llmprobe gate: report storage %s: %v\n", o.StoragePath, saveErr)
	}
	rep.WriteText(o.Stdout)
	if o.Output != "" {
		if err := report.WriteJSON(o.Output, rep); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: writing %s: %v\n", o.Output, err)
			return GateError
		}
	}
	if !rep.Passed {
		return GateFailed
	}
	return GatePassed
}
