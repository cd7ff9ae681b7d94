package render_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/stats"
)

// Percentiles whose samples came in runs of slow requests say what they
// are worth beside their intervals; evenly spread ones say nothing.
func TestWorthIsSaid(t *testing.T) {
	_, after := reporttest.GoldenPair(t)
	if got := render.WorthText(after); got != "" {
		t.Errorf("20 samples: %q, want nothing", got)
	}
	clustered := make([]float64, 900)
	for i := range clustered {
		clustered[i] = 0.05 + 0.001*float64(i%7)
		if i%300 < 150 {
			clustered[i] += 0.1
		}
	}
	after.Latency["ttft"] = stats.SummarizeInOrder(clustered)
	want := "ttft: p50 worth " + strconv.Itoa(after.Latency["ttft"].Worth("p50"))
	var text bytes.Buffer
	render.Text(&text, after)
	if got := render.WorthText(after); !strings.HasPrefix(got, want) || !strings.Contains(got, "of 900 samples") ||
		!strings.Contains(text.String(), "by batch means these are worth fewer independent samples, and their intervals are over that: "+got) {
		t.Errorf("clustered: %q, want it to start %q, and in the text:\n%s", got, want, text.String())
	}
	// The slowest 1 % in one run of nine: a p99 of 900 samples worth
	// fewer than the 368 it needs is too few, and says what it is worth.
	tail := make([]float64, 900)
	for i := range tail {
		tail[i] = 0.01 + 0.0001*float64(i%13)
		if i >= 400 && i < 409 {
			tail[i] = 0.1
		}
	}
	after.Latency["tpot"] = stats.SummarizeInOrder(tail)
	if got := render.TooFewText(after); !strings.Contains(got, "tpot: 900 samples, too few for p99 (worth ") {
		t.Errorf("too few: %q, want tpot's p99 with what it is worth", got)
	}
}
