package report

import (
	"fmt"

	"github.com/llmprobe/llmprobe/enginemetrics"
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
}

// EngineComparison is one quantile (or the mean) of a latency seen from
// both sides, in seconds. Difference is client − server; null with NA's
// reason when a side has no figure. A server quantile is an estimate within
// its bucket, ServerBucketLower to ServerBucketUpper (null: unbounded): a
// difference smaller than the bucket's width says little. Means are exact.
type EngineComparison struct {
	Metric            string   `json:"metric"`
	Quantile          string   `json:"quantile"`
	Client            *float64 `json:"client"`
	Server            *float64 `json:"server"`
	Difference        *float64 `json:"difference"`
	ServerBucketLower *float64 `json:"server_bucket_lower,omitempty"`
	ServerBucketUpper *float64 `json:"server_bucket_upper,omitempty"`
	NA                string   `json:"na,omitempty"`
}

// EngineScrapes are the two reads of the engine's page around a run.
type EngineScrapes struct {
	URL           string
	Before, After *enginemetrics.Page
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
	r.EngineMetrics = e
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
		switch {
		case f.NA != "":
			row.NA = "server: " + f.NA
		case server == nil:
			row.NA = "server: no " + q
		case client.Count == 0:
			row.NA = "client: no sample"
		default:
			d := c - server.Value
			row.Difference = &d
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
