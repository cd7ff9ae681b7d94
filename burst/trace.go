package burst

import (
	"sync"

	"github.com/llmprobe/llmprobe/report"
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

// Replaying, Skipped, Stopped and Clamped hear the plan's reads and sizes
// (plan.Replay).
func (s *traceStats) Replaying(file, format string, speedup float64) {
	s.add(func(o *report.TraceReplay) { o.File, o.Format, o.Speedup = file, format, speedup })
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

func (s *traceStats) Clamped(prompt, output bool) {
	s.add(func(o *report.TraceReplay) {
		if prompt {
			o.ClampedPrompt++
		}
		if output {
			o.ClampedOutput++
		}
	})
}
