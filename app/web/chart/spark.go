package chart

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/llmprobe/llmprobe/app/web/history"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
)

// Size of a sparkline: an hour of minutes in 180 pixels (three a minute), the axis' top
// written above the line and its time span under it.
const (
	sparkWidth, sparkHeight            = 180, 50
	sparkTop, sparkBottom, sparkPad    = 12, 38, 2
	ttftColor, tpotColor, goodputColor = "#4e79a7", "#f28e2b", "#59a14f"
)

// Spark is a sparkline of one figure of a canary pair over the last hour:
// a point per minute with results, lines joining consecutive minutes, and
// the newest figure beside it. NA, when set, replaces the chart: the
// figure does not apply or has no samples in the hour.
type Spark struct {
	Class, Label, Color      string
	Width, Height            int
	Left, Right, Top, Bottom float64
	TopText                  string // the axis' top, with its unit; the bottom is 0
	Lines                    []string
	Points                   []sparkPoint
	Value, Note              string // "118.0 ms", "max of 4, 1 min ago"
	NA                       string
	rank                     int // of the figure beside the line: see newest
}

// sparkPoint is one minute; Hollow marks a max standing in for a p99
// from too few samples.
type sparkPoint struct {
	X, Y   float64
	Hollow bool
	Title  string
}

// TrendRow is one canary pair's last hour: TTFT p99, TPOT p99 and goodput.
type TrendRow struct {
	TTFT, TPOT, Goodput Spark
}

// Trend draws a canary pair's last hour from its minutes (oldest first,
// the last the current one): TTFT and TPOT p99 and goodput per minute.
// A minute with fewer samples than a p99 needs (368; a canary every 15 s
// gives 4) draws its max as a hollow point, named so: the p99 of so few
// is the max in all but name, and drawing only minutes that can carry a
// p99 would leave most trends empty. api is the target's: an embeddings or
// rerank answer has no tokens, so its TTFT and TPOT say n/a, not "no
// samples".
func Trend(points []history.Point, api config.API) TrendRow {
	tokens := ""
	if api == config.APIEmbeddings || api == config.APIRerank {
		tokens = fmt.Sprintf("n/a: an %s answer has no tokens", api)
	}
	return TrendRow{
		TTFT:    tailSpark(points, "ttft", "TTFT", ttftColor, tokens, func(p history.Point) history.Tail { return p.TTFT }),
		TPOT:    tailSpark(points, "tpot", "TPOT", tpotColor, tokens, func(p history.Point) history.Tail { return p.TPOT }),
		Goodput: goodputSpark(points),
	}
}

func newSpark(class, label, color string) Spark {
	return Spark{Class: "spark " + class, Label: label, Color: color, Width: sparkWidth, Height: sparkHeight,
		Left: sparkPad, Right: sparkWidth - sparkPad, Top: sparkTop, Bottom: sparkBottom}
}

// x is the middle of minute i of n.
func (s *Spark) x(i, n int) float64 {
	return s.Left + (float64(i)+0.5)*(s.Right-s.Left)/float64(n)
}

// ago says when minute i of n was: the last is the current one.
func ago(i, n int) string {
	switch m := n - 1 - i; m {
	case 0:
		return "this minute"
	case 1:
		return "1 min ago"
	default:
		return fmt.Sprintf("%d min ago", m)
	}
}

// newest keeps minute i's figure (of n, oldest first) as the one beside
// the line if it is the newest that says most about now: the last whole
// minute's, else the current minute's (still filling), else the newest
// before them. Called oldest first.
func (s *Spark) newest(i, n int, value, note string) {
	rank := 1
	switch i {
	case n - 2:
		rank = 3
	case n - 1:
		rank = 2
	}
	if rank >= s.rank {
		s.Value, s.Note, s.rank = value, note, rank
	}
}

// plot sets the y axis from 0 to a nice top over values and draws the
// points, joining consecutive minutes.
func (s *Spark) plot(xs []float64, ys []float64, hollow []bool, titles []string, top float64, unit string) {
	_, top = niceTicks(top, 3)
	s.TopText = tickText(top) + unit
	y := func(v float64) float64 { return s.Bottom - v/top*(s.Bottom-s.Top) }
	var line strings.Builder
	end := func() {
		if line.Len() > 0 {
			s.Lines = append(s.Lines, line.String())
			line.Reset()
		}
	}
	for i := range xs {
		if math.IsNaN(ys[i]) {
			end()
			continue
		}
		fmt.Fprintf(&line, "%.1f,%.1f ", xs[i], y(ys[i]))
		s.Points = append(s.Points, sparkPoint{X: xs[i], Y: y(ys[i]), Hollow: hollow[i], Title: titles[i]})
	}
	end()
}

// tailSpark draws a latency's p99 per minute, its max where too few.
func tailSpark(points []history.Point, class, name, color, na string, tail func(history.Point) history.Tail) Spark {
	s := newSpark(class, name+" p99 per minute, last hour", color)
	n := len(points)
	xs, ys, hollow, titles := make([]float64, n), make([]float64, n), make([]bool, n), make([]string, n)
	top := 0.0
	for i, p := range points {
		t := tail(p)
		v, kind := t.Figure()
		xs[i], ys[i], hollow[i] = s.x(i, n), 1000*v, kind == history.KindMax
		if kind == history.KindNone {
			continue
		}
		top = max(top, 1000*v)
		s.newest(i, n, figure.PageMs(v), figureName(kind, t.Count())+", "+ago(i, n))
		titles[i] = fmt.Sprintf("%s UTC, %s: %s %s", p.Start.UTC().Format("15:04"), ago(i, n), name, figure.PageMs(v))
		if kind == history.KindMax {
			titles[i] += fmt.Sprintf(", the max of %d samples: too few for a p99, which needs %d", t.Count(), history.P99Needs)
		} else {
			titles[i] += ", " + figureName(kind, t.Count())
		}
	}
	if s.Value == "" {
		s.NA = cmp.Or(na, noSamples(points, name))
		return s
	}
	s.plot(xs, ys, hollow, titles, top, " ms")
	return s
}

// figureName says what a minute's figure is: "p99 of 600", "max of 4".
func figureName(kind history.Kind, n int) string {
	switch kind {
	case history.KindP99:
		return fmt.Sprintf("p99 of %d", n)
	case history.KindP99AtMost:
		return fmt.Sprintf("p99 of %d, at most", n)
	}
	return fmt.Sprintf("max of %d", n)
}

// noSamples says why a latency has no point in the hour.
func noSamples(points []history.Point, name string) string {
	judged, succeeded := 0, 0
	for _, p := range points {
		judged, succeeded = judged+p.Judged, succeeded+p.Succeeded
	}
	switch {
	case judged == 0:
		return "n/a: no probe in the last hour"
	case succeeded == 0:
		return "n/a: no probe succeeded in the last hour"
	case name == "TPOT":
		return "n/a: no answer in the last hour had two tokens to time between (an unstreamed answer has none)"
	}
	return "n/a: no answer in the last hour had a first token to time (an unstreamed answer has none)"
}

// goodputSpark draws the share of good probes per minute, with its counts.
func goodputSpark(points []history.Point) Spark {
	s := newSpark("goodput", "goodput per minute, last hour", goodputColor)
	n := len(points)
	xs, ys, hollow, titles := make([]float64, n), make([]float64, n), make([]bool, n), make([]string, n)
	for i, p := range points {
		xs[i], ys[i] = s.x(i, n), math.NaN()
		if p.Judged == 0 {
			continue
		}
		ys[i] = 100 * float64(p.Good) / float64(p.Judged)
		s.newest(i, n, fmt.Sprintf("%.0f%%", ys[i]), fmt.Sprintf("%d of %d good, %s", p.Good, p.Judged, ago(i, n)))
		titles[i] = fmt.Sprintf("%s UTC, %s: %.0f%% good, %d of %d", p.Start.UTC().Format("15:04"), ago(i, n), ys[i], p.Good, p.Judged)
	}
	if s.Value == "" {
		s.NA = "n/a: no probe in the last hour"
		return s
	}
	s.plot(xs, ys, hollow, titles, 100, "%")
	return s
}
