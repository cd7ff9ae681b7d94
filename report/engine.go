package report

import (
	"fmt"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/prober"
)

// EngineMetrics is what the engine's own /metrics said about the burst,
// server-wide, next to what llmprobe measured: the difference of the two
// is the network's and the client's share.
type EngineMetrics struct {
	enginemetrics.Window
	// ClientRequests is what the run sent, warmup included: the engine's
	// counts above it are other clients' traffic.
	ClientRequests int                `json:"client_requests"`
	ClientVsServer []EngineComparison `json:"client_vs_server"`
	Note           string             `json:"note,omitempty"`
	// Queued says the engine queued the run's requests for a slot, from
	// its gauges read during the run; empty when it did not.
	Queued string `json:"queued,omitempty"`
}

// EngineComparison is one quantile (or the mean) of a latency seen from
// both sides, in seconds. Difference is client − server; null with NA's
// reason when a side has no figure. A server quantile is an estimate within
// its bucket, ServerBucketLower to ServerBucketUpper (null: unbounded), so
// Difference is set only where the bucket is narrow beside it; else
// DifferenceLower to DifferenceUpper is what the bucket permits
// (enginemetrics.Diff's rule), and Resolution says which. Means are exact.
type EngineComparison struct {
	Metric            string   `json:"metric"`
	Quantile          string   `json:"quantile"`
	Client            *float64 `json:"client"`
	Server            *float64 `json:"server"`
	Difference        *float64 `json:"difference"`
	DifferenceLower   *float64 `json:"difference_lower,omitempty"`
	DifferenceUpper   *float64 `json:"difference_upper,omitempty"`
	Resolution        string   `json:"resolution,omitempty"`
	ServerBucketLower *float64 `json:"server_bucket_lower,omitempty"`
	ServerBucketUpper *float64 `json:"server_bucket_upper,omitempty"`
	NA                string   `json:"na,omitempty"`
}

// Diff is the row's difference for printing.
func (c EngineComparison) Diff() enginemetrics.Difference {
	return enginemetrics.Difference{Value: c.Difference, Lower: c.DifferenceLower, Upper: c.DifferenceUpper, Resolution: c.Resolution, NA: c.NA}
}

// ServerQuantile is the row's server figure as a bucket estimate; false
// for a mean, which is exact.
func (c EngineComparison) ServerQuantile() (enginemetrics.Quantile, bool) {
	if c.Server == nil || c.ServerBucketLower == nil {
		return enginemetrics.Quantile{}, false
	}
	return enginemetrics.Quantile{Name: c.Quantile, Value: *c.Server, BucketLower: *c.ServerBucketLower, BucketUpper: c.ServerBucketUpper}, true
}

// EngineScrapes are the two reads of the engine's page around a run, and
// the gauge reads during it.
type EngineScrapes struct {
	URL           string
	Before, After *enginemetrics.Page
	During        []*enginemetrics.Page
}

// compared are the latencies both sides measure.
var compared = []string{"ttft", "e2e", "tpot", "itl"}

// AttachEngineMetrics computes the engine section from the run's scrapes,
// once the engine family and model are known; without scrapes it does nothing.
func (r *Report) AttachEngineMetrics(o enginemetrics.Options) {
	s := r.engineScrapes
	if s == nil || s.Before == nil || s.After == nil {
		return
	}
	o.During = s.During
	w := enginemetrics.Compare(s.Before, s.After, o)
	w.URL = s.URL
	e := &EngineMetrics{Window: *w, ClientRequests: r.Requests + r.WarmupRequests}
	for _, m := range compared {
		e.ClientVsServer = append(e.ClientVsServer, r.compare(w, m)...)
	}
	for _, m := range []string{enginemetrics.MetricE2E, enginemetrics.MetricTTFT} {
		if f, ok := w.Lookup(m); ok && f.Count != nil && int(*f.Count) > e.ClientRequests {
			e.Note = fmt.Sprintf("the engine finished %d requests between the scrapes, llmprobe sent %d (warmup included): other clients' traffic is in its figures", int(*f.Count), e.ClientRequests)
			break
		}
	}
	e.Queued = w.Queued(r.serverWaitShare())
	r.EngineMetrics = e
}

// serverWaitShare is the share of TTFT spent in the server before
// prefill (its queue, or time it did not split); −1 without a split.
func (r *Report) serverWaitShare() float64 {
	if r.TTFTBreakdown == nil {
		return -1
	}
	var share float64
	for _, c := range r.TTFTBreakdown.Components {
		if c.Component == prober.ComponentEngineQueue || c.Component == prober.ComponentServerOther {
			share += c.Share
		}
	}
	return share
}

func (r *Report) compare(w *enginemetrics.Window, metric string) []EngineComparison {
	client := r.Latency[metric]
	f, _ := w.Lookup(metric)
	var out []EngineComparison
	add := func(q string, c float64, server *enginemetrics.Quantile) {
		row := EngineComparison{Metric: metric, Quantile: q}
		if client.Count > 0 {
			row.Client = &c
		}
		if server != nil {
			v := server.Value
			row.Server = &v
			if q != "mean" {
				lower := server.BucketLower
				row.ServerBucketLower, row.ServerBucketUpper = &lower, server.BucketUpper
			}
		}
		var d enginemetrics.Difference
		switch {
		case f.NA != "":
			row.NA = "server: " + f.NA
		case server == nil:
			row.NA = "server: no " + q
		case client.Count == 0:
			row.NA = "client: no sample"
		case q == "mean":
			d = enginemetrics.ExactDiff(c, server.Value)
		default:
			d = enginemetrics.Diff(c, *server)
		}
		if row.NA == "" {
			row.Difference, row.DifferenceLower, row.DifferenceUpper, row.Resolution, row.NA = d.Value, d.Lower, d.Upper, d.Resolution, d.NA
		}
		out = append(out, row)
	}
	// The mean first: from the sums, it is exact on both sides.
	var mean *enginemetrics.Quantile
	if f.Mean != nil {
		mean = &enginemetrics.Quantile{Value: *f.Mean}
	}
	add("mean", client.Mean, mean)
	if f.Mean != nil && len(f.Quantiles) == 0 {
		return out // a counters-only engine has means alone
	}
	for _, q := range enginemetrics.Quantiles {
		var server *enginemetrics.Quantile
		if qq, ok := f.Quantile(q.Name); ok {
			server = &qq
		}
		add(q.Name, client.Quantile(q.Name), server)
	}
	return out
}
