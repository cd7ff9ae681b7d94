package enginemetrics

import (
	"strings"

	"github.com/llmprobe/llmprobe/lib/figure"
)

// A server percentile is interpolated within one bucket of the engine's
// histogram: the truth is anywhere in the bucket. What follows prints it,
// and its difference from an exact client figure, no more precisely than
// the bucket allows, in lib/figure's forms. Every surface (text, Markdown,
// pages) goes through it.

// Bucket is where the quantile lies: "100–250ms", "≤300ms" for a first
// bucket from 0, ">1040ms" above the last finite bound.
func (q Quantile) Bucket() string {
	switch {
	case q.BucketUpper == nil:
		return ">" + figure.Bound(q.BucketLower)
	case q.BucketLower <= 0:
		return "≤" + figure.Bound(*q.BucketUpper)
	}
	return strings.TrimSuffix(figure.Bound(q.BucketLower), "ms") + "–" + figure.Bound(*q.BucketUpper)
}

// Text is the estimate with its bucket, "≈222.4ms in 100–250ms"; above
// the last bound only the bucket, since the estimate is that bound.
func (q Quantile) Text() string {
	if q.BucketUpper == nil {
		return q.Bucket() + " (above the last bucket)"
	}
	return "≈" + figure.Ms(q.Value) + " in " + q.Bucket()
}

// narrow is how wide a bucket may be, as a share of the smallest
// difference it permits, for the difference to print as a value.
const narrow = 0.5

// Difference is client − server for one figure, in seconds: a Value only
// where the server's resolution allows it, else the interval the bucket
// permits (Lower, Upper; nil: unbounded), or NA with why.
type Difference struct {
	Value *float64 `json:"difference"`
	Lower *float64 `json:"difference_lower,omitempty"`
	Upper *float64 `json:"difference_upper,omitempty"`
	// Resolution says what the figure rests on.
	Resolution string `json:"resolution,omitempty"`
	NA         string `json:"-"`
}

// Why a difference is not a network share.
const (
	NACoarse   = "n/a (engine buckets coarser than the difference)"
	notNetwork = "negative: the engine's figures count requests llmprobe did not time (warmup, other clients), so this is no network share"
)

// ExactDiff is the difference of two exact figures (means from sums and
// counts): a value, marked when negative.
func ExactDiff(client, server float64) Difference {
	d := client - server
	out := Difference{Value: &d, Resolution: "exact (sums and counts)"}
	if d < 0 {
		out.Resolution += "; " + notNetwork
	}
	return out
}

// Diff is an exact client figure minus a server quantile. The bucket
// [lo, hi] bounds the difference to [client − hi, client − lo]; it is a
// value only when that interval is positive and the bucket narrow beside
// it, an interval when it is bounded and not wholly negative, else n/a.
func Diff(client float64, server Quantile) Difference {
	hiD := client - server.BucketLower
	out := Difference{Upper: &hiD}
	if server.BucketUpper == nil {
		out.NA = NACoarse
		out.Resolution = "the server's figure is above the engine's last bucket bound " + figure.Bound(server.BucketLower)
		return out
	}
	loD := client - *server.BucketUpper
	out.Lower = &loD
	width := *server.BucketUpper - server.BucketLower
	switch {
	case hiD < 0:
		out.NA = "n/a (the server's bucket " + server.Bucket() + " lies above the client's figure: the engine counts requests llmprobe did not time (warmup, other clients), and a tail percentile rests on few of them, so this is no network share)"
		out.Resolution = "bucket " + server.Bucket()
	case loD > 0 && width <= narrow*loD:
		v := client - server.Value
		out.Value = &v
		out.Resolution = "bucket " + server.Bucket() + ", narrow beside the difference"
	default:
		out.Resolution = "bucket " + server.Bucket()
	}
	return out
}

// Text prints the difference as its resolution allows.
func (d Difference) Text() string {
	switch {
	case strings.HasPrefix(d.NA, "n/a"):
		return d.NA
	case d.NA != "":
		return "n/a: " + d.NA
	case d.Value != nil && *d.Value < 0:
		// Exact, yet not a network share: say so before the number.
		return "n/a as a network share (client − server " + figure.SignedMs(*d.Value) + ", exact; " + strings.TrimPrefix(notNetwork, "negative: ") + ")"
	case d.Value != nil:
		return figure.SignedMs(*d.Value)
	case d.Lower != nil && d.Upper != nil:
		return "between " + strings.TrimSuffix(figure.SignedMs(*d.Lower), "ms") + " and " + figure.SignedMs(*d.Upper)
	}
	return "n/a"
}

// HasBuckets reports whether any figure has percentiles from histogram
// buckets (llama.cpp's counters give means only).
func (w *Window) HasBuckets() bool {
	for _, f := range w.Figures {
		if len(f.Quantiles) > 0 {
			return true
		}
	}
	return false
}
