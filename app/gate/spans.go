package gate

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/tracing"
)

// startSpans turns on the tracing block of cfg, if any, for one run of cmd;
// false (said on stderr) when its exporter cannot be built.
func startSpans(cmd string, cfg *config.Config, stderr io.Writer) (*tracing.Exporter, bool) {
	exp := tracing.New(log.NewNopLogger())
	if err := exp.Configure(cfg); err != nil {
		fmt.Fprintf(stderr, "llmprobe %s: %v\n", cmd, err)
		return nil, false
	}
	return exp, true
}

// flushSpans exports the spans still queued, for at most 5 s (a collector
// that is down must not hold the exit), and says what became of them.
func flushSpans(cmd string, exp *tracing.Exporter, cfg *config.Config, stderr io.Writer) {
	if !exp.On() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = exp.Shutdown(ctx)
	n := exp.Counts()
	fmt.Fprintf(stderr, "llmprobe %s: spans to %s: %d exported, %d failed, %d dropped (queue full)\n", cmd, cfg.Tracing.Endpoint, n.Exported, n.Failed, n.Dropped)
}
