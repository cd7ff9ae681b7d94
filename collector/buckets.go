package collector

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

// Native histograms: ~10% resolution (schema 3), bounded bucket count; past
// it the resolution halves, and an hour after the last reset the series
// starts again.
const (
	nativeFactor     = 1.1
	nativeMaxBuckets = 160
	nativeMinReset   = time.Hour
)

// grid is the classic buckets of a histogram family before thresholds join
// it: bounds, and step, the ratio between neighbours where SLOs live.
type grid struct {
	bounds []float64
	step   float64
}

// Renard series (ISO 3): R10 has ten steps a decade (~26% each), R5 five (~58%).
var (
	r10 = []string{"1", "1.25", "1.6", "2", "2.5", "3.15", "4", "5", "6.3", "8"}
	r5  = []string{"1", "1.6", "2.5", "4", "6.3"}
)

// The classic grids: lean, dense only where SLOs live, so that
// histogram_quantile there stays within a few percent; one coarse tail
// catches the rest. The native histogram beside them has the fine
// resolution everywhere.
var (
	// TTFT and the first answer token: R10 from 50 ms to 2.5 s.
	ttftGrid = grid{join(renard(r10, 0.05, 2.5), []float64{5, 10}), math.Pow(10, 0.1)}
	// TPOT: R10 from 10 to 200 ms.
	tpotGrid = grid{join(renard(r10, 0.01, 0.2), []float64{0.5}), math.Pow(10, 0.1)}
	// ITL, one sample per token: R5 from 4 ms to 0.63 s.
	itlGrid = grid{join(renard(r5, 0.004, 0.63), []float64{2.5}), math.Pow(10, 0.2)}
	// E2E: decades in 1-2.5-5 steps, as vLLM's server-side buckets go.
	e2eGrid = grid{[]float64{1, 2.5, 5, 10, 25, 50, 100}, 2.5}
	// Dispatch delay, the prober's own lateness: an order of magnitude is
	// what a rule asks; the native histogram has the rest.
	dispatchGrid = grid{[]float64{0.001, 0.01, 0.1}, 10}
)

// renard returns the numbers of series in [lo, hi], parsed from their
// decimal text so that bucket labels read le="0.315", not a float's
// rounding error.
func renard(series []string, lo, hi float64) []float64 {
	var out []float64
	for exp := int(math.Floor(math.Log10(lo))); ; exp++ {
		for _, m := range series {
			v, _ := strconv.ParseFloat(m+"e"+strconv.Itoa(exp), 64)
			if v > hi*(1+1e-9) {
				return out
			}
			if v >= lo*(1-1e-9) {
				out = append(out, v)
			}
		}
	}
}

func join(parts ...[]float64) []float64 {
	out := slices.Concat(parts...)
	slices.Sort(out)
	return slices.Compact(out)
}

// withThresholds returns the grid's bounds with every threshold among them,
// so that _bucket{le="<threshold>"} counts the requests that met it
// exactly. A threshold within half a step of a grid point that is no
// threshold yet takes that point's place; any other is added. So
// thresholds rarely grow the page, and the grid keeps its resolution.
func (g grid) withThresholds(thresholds []float64) []float64 {
	out := slices.Clone(g.bounds)
	taken := make([]bool, len(out)) // a threshold holds this place
	half := math.Log(g.step) / 2
	var rest []float64
	for _, t := range thresholds {
		if i := slices.Index(out, t); i >= 0 {
			taken[i] = true // already a boundary
		} else {
			rest = append(rest, t)
		}
	}
	slices.Sort(rest)
	for _, t := range slices.Compact(rest) {
		best, dist := -1, half*(1+1e-9)
		for i, b := range out {
			if d := math.Abs(math.Log(t / b)); !taken[i] && d <= dist {
				best, dist = i, d
			}
		}
		if best < 0 {
			out, taken = append(out, t), append(taken, true)
			continue
		}
		out[best], taken[best] = t, true
	}
	slices.Sort(out)
	return out
}

// layout is the classic buckets of every histogram family for one
// configuration; nil bounds are native only.
type layout [numHists][]float64

func layoutFor(cfg *config.Config, classic bool) layout {
	var l layout
	if !classic {
		return l
	}
	if cfg == nil {
		cfg = &config.Config{}
	}
	thresholds := cfg.Thresholds
	l[histTTFT] = ttftGrid.withThresholds(thresholds(config.ObjectiveTTFT))
	// A token gap's objective is stall (the longest gap allowed); TPOT's
	// thresholds are a request's mean, on TPOT's histogram.
	l[histITL] = itlGrid.withThresholds(thresholds(config.ObjectiveStall))
	l[histTPOT] = tpotGrid.withThresholds(thresholds(config.ObjectiveTPOT))
	l[histE2E] = e2eGrid.withThresholds(thresholds(config.ObjectiveE2E))
	l[histDispatch] = dispatchGrid.bounds
	// Reasoning takes long: the first answer token's objective is often past TTFT's.
	l[histTTFTAnswer] = ttftGrid.withThresholds(thresholds(config.ObjectiveTTFTAnswer))
	l[histTTFTool] = ttftGrid.bounds // no objective of its own: TTFT's grid
	// histReplicaTTFT is native only: one series a replica keeps a gateway
	// of many replicas within the series budget.
	return l
}
