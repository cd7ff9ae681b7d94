package enginemetrics

import (
	"strings"
	"testing"
)

// The one rule for client − server: a value only where the bucket is
// narrow beside a positive difference; the interval the bucket permits;
// n/a where it is unbounded or lies wholly above the client's figure.
func TestDiff(t *testing.T) {
	up := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name   string
		client float64
		q      Quantile
		text   string
		value  bool
	}{
		// The case: client 110.2 ms, server ≈193.5 ms in 100–250 ms.
		{"coarse", 0.1102, Quantile{Value: 0.1935, BucketLower: 0.1, BucketUpper: up(0.25)}, "between −139.8 and +10.2ms", false},
		{"narrow", 0.500, Quantile{Value: 0.105, BucketLower: 0.1, BucketUpper: up(0.11)}, "+395.0ms", true},
		// Positive throughout but the bucket as wide as the difference.
		{"positive wide", 0.300, Quantile{Value: 0.15, BucketLower: 0.1, BucketUpper: up(0.25)}, "between +50.0 and +200.0ms", false},
		{"first bucket", 0.040, Quantile{Value: 0.15, BucketLower: 0, BucketUpper: up(0.3)}, "between −260.0 and +40.0ms", false},
		{"above", 0.040, Quantile{Value: 0.2, BucketLower: 0.1, BucketUpper: up(0.25)}, "n/a (the server's bucket 100–250ms lies above the client's figure", false},
		{"unbounded", 0.900, Quantile{Value: 0.5, BucketLower: 0.5}, NACoarse, false},
	} {
		d := Diff(c.client, c.q)
		if got := d.Text(); !strings.HasPrefix(got, c.text) {
			t.Errorf("%s: %q, want %q", c.name, got, c.text)
		}
		if (d.Value != nil) != c.value || d.Upper == nil || d.Resolution == "" {
			t.Errorf("%s: %+v", c.name, d)
		}
		if d.Value != nil && *d.Value < 0 {
			t.Errorf("%s: a negative value %g", c.name, *d.Value)
		}
	}
	if got := ExactDiff(0.05, 0.06).Text(); !strings.HasPrefix(got, "n/a as a network share (client − server −10.0ms, exact") {
		t.Errorf("negative exact difference %q", got)
	}
	if got := ExactDiff(0.06, 0.05).Text(); got != "+10.0ms" {
		t.Errorf("exact difference %q", got)
	}
	// A difference that rounds to nothing has no sign, of either kind.
	if got := ExactDiff(0.05, 0.05+1e-6).Text(); !strings.HasPrefix(got, "n/a as a network share (client − server 0.0ms, exact") {
		t.Errorf("a negative difference below the precision: %q", got)
	}
}

// A percentile prints as its bucket, never with an exact figure's precision.
func TestQuantileBucketText(t *testing.T) {
	up := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		q            Quantile
		bucket, text string
	}{
		{Quantile{Value: 0.2224, BucketLower: 0.1, BucketUpper: up(0.25)}, "100–250ms", "≈222.4ms in 100–250ms"},
		{Quantile{Value: 0.15, BucketLower: 0, BucketUpper: up(0.3)}, "≤300ms", "≈150.0ms in ≤300ms"},
		{Quantile{Value: 1.04, BucketLower: 1.04}, ">1040ms", ">1040ms (above the last bucket)"},
		{Quantile{Value: 0.0007, BucketLower: 0.0005, BucketUpper: up(0.001)}, "0.5–1ms", "≈0.7ms in 0.5–1ms"},
	} {
		if b, tx := c.q.Bucket(), c.q.Text(); b != c.bucket || tx != c.text {
			t.Errorf("%+v: %q %q, want %q %q", c.q, b, tx, c.bucket, c.text)
		}
	}
}

// "Queued for a slot" needs requests seen waiting during the run and, where
// there is a TTFT split, most of TTFT spent waiting in the server.
func TestQueued(t *testing.T) {
	five, zero := 5.0, 0.0
	waiting := func(max *float64, n int) *Window {
		return &Window{Gauges: []Gauge{{Metric: GaugeWaiting, Source: "vllm:num_requests_waiting", Samples: n, Min: &zero, Mean: &zero, Max: max}}}
	}
	for _, c := range []struct {
		w     *Window
		share float64
		want  bool
	}{
		{waiting(&five, 3), 0.97, true},
		{waiting(&five, 3), -1, true},
		{waiting(&five, 3), 0.2, false},
		{waiting(&zero, 3), 0.97, false},
		{waiting(nil, 0), 0.97, false},
		{nil, 0.97, false},
	} {
		if got := c.w.Queued(c.share); (got != "") != c.want {
			t.Errorf("share %g: %q", c.share, got)
		}
	}
}
