package compare

import (
	"math"
	"time"

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
