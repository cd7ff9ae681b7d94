package chart

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/app/web/history"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

var now = time.Date(2026, 11, 28, 15, 0, 30, 0, time.UTC)

// streamed is a canary answer due at sched, TTFT ttft and TPOT a tenth of it.
func streamed(sched time.Time, ttft time.Duration, good bool) *prober.Result {
	return &prober.Result{Outcome: prober.OutcomeSuccess, Good: good, Sched: sched, TTFT: ttft, TPOT: ttft / 10, OutputTokens: 8, OutputChunks: 8}
}

// A minute with enough samples draws its p99 filled, one with too few its
// max hollow; minutes without results break the line; the newest minute's
// figure stands beside the line, saying which it is.
func TestTrendSparklines(t *testing.T) {
	var tr history.Trend
	for i := range 400 { // 20 minutes ago: 400 samples, 1..400 ms
		tr.Observe(streamed(now.Add(-20*time.Minute), time.Duration(i+1)*time.Millisecond, true))
	}
	tr.Observe(streamed(now.Add(-19*time.Minute), 50*time.Millisecond, true)) // then one minute of 3
	tr.Observe(streamed(now.Add(-19*time.Minute), 70*time.Millisecond, false))
	tr.Observe(&prober.Result{Outcome: prober.OutcomeTimeout, Sched: now.Add(-19 * time.Minute)})
	tr.Observe(streamed(now.Add(-time.Second), 30*time.Millisecond, true)) // and this minute, after a gap

	row := Trend(tr.Points(now), config.APIChat)
	ttft := row.TTFT
	if ttft.NA != "" || len(ttft.Points) != 3 || len(ttft.Lines) != 2 {
		t.Fatalf("TTFT: n/a %q, %d points, %d lines; want 3 points in 2 runs", ttft.NA, len(ttft.Points), len(ttft.Lines))
	}
	p99, few, last := ttft.Points[0], ttft.Points[1], ttft.Points[2]
	if p99.Hollow || !strings.Contains(p99.Title, "TTFT 396.0 ms, p99 of 400") {
		t.Errorf("400 samples: %+v, want the filled p99: 396.01 ms, stats.Quantile of 1..400 ms", p99)
	}
	if !few.Hollow || !strings.Contains(few.Title, "TTFT 70.0 ms, the max of 2 samples: too few for a p99, which needs 368") {
		t.Errorf("2 samples: %+v, want their max, hollow and said so", few)
	}
	if ttft.Value != "30.0 ms" || ttft.Note != "max of 1, this minute" || !last.Hollow {
		t.Errorf("beside the line: %q %q, want this minute's max: the last whole minute has none", ttft.Value, ttft.Note)
	}
	// Once the last whole minute has a figure, it stands beside the line:
	// the current minute is still filling.
	tr.Observe(streamed(now.Add(-time.Minute), 90*time.Millisecond, true))
	if ttft = Trend(tr.Points(now), config.APIChat).TTFT; ttft.Value != "90.0 ms" || ttft.Note != "max of 1, 1 min ago" {
		t.Errorf("beside the line: %q %q, want the last whole minute's", ttft.Value, ttft.Note)
	}
	if p99.Y >= few.Y || few.Y >= last.Y || p99.Y < ttft.Top || last.Y > ttft.Bottom || ttft.TopText != "400 ms" {
		t.Errorf("y: %v, %v, %v in %v..%v up to %q: a higher figure must sit higher, inside the plot", p99.Y, few.Y, last.Y, ttft.Top, ttft.Bottom, ttft.TopText)
	}
	if p99.X >= few.X || few.X >= last.X || last.X > ttft.Right {
		t.Errorf("x: %v, %v, %v: minutes in order, now at the right end %v", p99.X, few.X, last.X, ttft.Right)
	}
	g := row.Goodput
	if g.Value != "100%" || g.Note != "1 of 1 good, this minute" || len(g.Points) != 3 || !strings.Contains(g.Points[1].Title, "33% good, 1 of 3") {
		t.Errorf("goodput: %q %q, %d points, %q", g.Value, g.Note, len(g.Points), g.Points[1].Title)
	}
}

// n/a in words where a figure does not apply or has no samples, never an
// empty chart.
func TestTrendNotApplicable(t *testing.T) {
	var embed history.Trend
	embed.Observe(&prober.Result{Outcome: prober.OutcomeSuccess, Good: true, Sched: now})
	row := Trend(embed.Points(now), config.APIEmbeddings)
	if row.TTFT.NA != "n/a: an embeddings answer has no tokens" || row.TPOT.NA != row.TTFT.NA || row.Goodput.NA != "" {
		t.Errorf("embeddings: %q, %q, goodput %q", row.TTFT.NA, row.TPOT.NA, row.Goodput.NA)
	}
	var down history.Trend
	down.Observe(&prober.Result{Outcome: prober.OutcomeConnectionError, Sched: now})
	row = Trend(down.Points(now), config.APIChat)
	if row.TTFT.NA != "n/a: no probe succeeded in the last hour" || row.Goodput.Value != "0%" {
		t.Errorf("refused: TTFT %q, goodput %q", row.TTFT.NA, row.Goodput.Value)
	}
	var unstreamed history.Trend
	unstreamed.Observe(&prober.Result{Outcome: prober.OutcomeSuccess, Unstreamed: true, OutputTokens: 9, Sched: now})
	if row = Trend(unstreamed.Points(now), config.APIChat); !strings.HasPrefix(row.TPOT.NA, "n/a: no answer in the last hour had two tokens") {
		t.Errorf("unstreamed: TPOT %q", row.TPOT.NA)
	}
	row = Trend(nil, config.APIChat)
	if row.TTFT.NA != "n/a: no probe in the last hour" || row.Goodput.NA != "n/a: no probe in the last hour" {
		t.Errorf("no probe: %q, %q", row.TTFT.NA, row.Goodput.NA)
	}
}
