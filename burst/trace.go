package burst

import (
	"iter"
	"sync"

	"github.com/llmprobe/llmprobe/burst/plan"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/replay"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
)

// traceStats counts, for the report, what a replay sent other than the
// trace says. The dispatcher, the plan's reader and the workers all write
// it; a nil one counts nothing.
type traceStats struct {
	mu  sync.Mutex
	out report.TraceReplay
}

func (s *traceStats) add(f func(*report.TraceReplay)) {
	if s != nil {
		s.mu.Lock()
		f(&s.out)
		s.mu.Unlock()
	}
}

// Opened, Skipped and Stopped hear the plan's reads (plan.Replay).
func (s *traceStats) Opened(format string) {
	s.add(func(o *report.TraceReplay) { o.Format = format })
}

func (s *traceStats) Skipped(line error) {
	s.add(func(o *report.TraceReplay) {
		o.SkippedLines++
		if o.Error == "" {
			o.Error = line.Error()
		}
	})
}

func (s *traceStats) Stopped(err error) {
	s.add(func(o *report.TraceReplay) { o.Error = err.Error() })
}

// shardPlan is the runner's share of b's plan at rate; a trace replay
// tells stats what it read besides its records.
func shardPlan(b config.Burst, rate float64, s shard.Shard, stats *traceStats) iter.Seq[plan.Arrival] {
	if stats == nil {
		return plan.Share(b, rate, s, nil)
	}
	stats.add(func(o *report.TraceReplay) { o.File, o.Speedup = b.Arrival.File, b.Arrival.Speedup })
	return plan.Share(b, rate, s, stats)
}

// traceLengths is what a trace arrival sends under scenario s: the trace's
// prompt and output lengths, each clamped to the scenario's maximum (what
// the configuration's memory check sized the burst for) and to at least 1,
// and the tokens of its shared blocks.
func traceLengths(a plan.Arrival, s config.Scenario, stats *traceStats) (prompt, output, prefix int) {
	prompt, output = int(a.Input), int(a.Output)
	maxPrompt, maxOutput := s.PromptTokens.Maximum(), s.OutputTokens.Maximum()
	if prompt > maxPrompt {
		prompt = maxPrompt
		stats.add(func(o *report.TraceReplay) { o.ClampedPrompt++ })
	}
	if output > maxOutput {
		output = maxOutput
		stats.add(func(o *report.TraceReplay) { o.ClampedOutput++ })
	}
	prompt, output = max(prompt, 1), max(output, 1)
	if n := len(a.Blocks) / 8; n > 0 {
		// The nonce and at least one token of the request's own follow them.
		prefix = min(n*replay.BlockTokens, prompt-5)
	}
	return prompt, output, max(prefix, 0)
}
