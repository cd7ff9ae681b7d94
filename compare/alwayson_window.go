package compare

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/prober"
)

// metricNames compared, by their label value.
var metricNames = []string{"ttft", "tpot", "itl", "e2e"}

const (
	mTTFT = iota
	mTPOT
	mITL
	mE2E
	numMetrics
)

// alwaysOnSide is one request's figures in seconds; a metric it did not produce
// (TPOT of a one-token answer) is NaN.
type alwaysOnSide [numMetrics]float64

// sideOf reads a successful result's figures.
func sideOf(r *prober.Result) alwaysOnSide {
	s := alwaysOnSide{math.NaN(), math.NaN(), math.NaN(), r.E2E.Seconds()}
	if r.FirstTokenSeen() {
		s[mTTFT] = r.TTFT.Seconds()
		if r.OutputTokens > 1 {
			s[mTPOT] = r.TPOT.Seconds()
		}
	}
	if len(r.ITL) > 0 {
		var sum time.Duration
		for _, d := range r.ITL {
			sum += d
		}
		s[mITL] = sum.Seconds() / float64(len(r.ITL)) // the request's mean gap
	}
	return s
}

// alwaysOnPair is one tick: the same prompt sent to both targets at the same moment.
type alwaysOnPair struct {
	at         time.Time
	base, cand alwaysOnSide
}

// evaluate judges the pairs metric by metric: a figure exists only where
// the pairs give one, so a metric that does not apply is absent, never 0.
func evaluate(pairs []alwaysOnPair, minPairs int, tolerance float64) []decide.WindowFigure {
	var out []decide.WindowFigure
	for m, name := range metricNames {
		var base, cand []float64
		for _, p := range pairs {
			b, c := p.base[m], p.cand[m]
			if !(b > 0 && c > 0) { // NaN or a zero that no ratio can use
				continue
			}
			base, cand = append(base, b), append(cand, c)
		}
		out = append(out, decide.Window(name, base, cand, minPairs, tolerance)...)
	}
	return out
}
