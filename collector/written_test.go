package collector

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/llmprobe/llmprobe/prober"
)

var fqNameRe = regexp.MustCompile(`fqName: "([^"]+)"`)

func seriesKey(name string, labels []*dto.LabelPair) string {
	var b strings.Builder
	b.WriteString(name)
	for _, l := range labels {
		fmt.Fprintf(&b, ",%s=%s", l.GetName(), l.GetValue())
	}
	return b.String()
}

// The page's histograms are cached protobufs, rewritten only after their
// series observed: after every round of observations each one equals what
// client_golang writes afresh from the histogram itself. A way to observe
// that forgot to mark its series stale fails here.
func TestCachedHistogramsFollowEveryObservation(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	p.Configure(testConfig(t, "300ms"))
	for round := range 3 {
		for i, target := range []string{"a", "b"} {
			r := successResult(target)
			d := time.Duration(round*10+i+1) * time.Millisecond
			r.TTFT, r.E2E, r.TPOT = r.TTFT+d, r.E2E+d, r.TPOT+d
			r.ITL = append(r.ITL, d, 2*d)
			r.DispatchDelay, r.Timings.TTFB = d/10, d
			r.TTFTool, r.TTFTAnswer, r.Turn = r.TTFT+d, r.TTFT+2*d, round+1
			p.Observe(r)
		}
		if round == 1 {
			p.Observe(&prober.Result{Target: "a", Model: "m", Scenario: "s", Traffic: prober.TrafficCanary, Sched: time.Unix(1000, 0),
				Outcome: prober.OutcomeTimeout, E2E: 5 * time.Second})
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		page := map[string]*dto.Histogram{}
		for _, f := range families {
			for _, m := range f.Metric {
				if m.Histogram != nil {
					page[seriesKey(f.GetName(), m.Label)] = m.Histogram
				}
			}
		}
		checked := 0
		p.mu.RLock()
		for _, v := range p.hists {
			ch := make(chan prometheus.Metric, 1024)
			v.Collect(ch)
			close(ch)
			for m := range ch {
				var fresh dto.Metric
				if err := m.Write(&fresh); err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(fresh.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
				key := seriesKey(fqNameRe.FindStringSubmatch(m.Desc().String())[1], fresh.Label)
				cached, ok := page[key]
				if !ok {
					t.Errorf("round %d: %s is not on the page", round, key)
					continue
				}
				checked++
				if !proto.Equal(cached, fresh.Histogram) {
					t.Errorf("round %d: %s on the page holds %d observations summing to %g; the histogram holds %d summing to %g",
						round, key, cached.GetSampleCount(), cached.GetSampleSum(), fresh.Histogram.GetSampleCount(), fresh.Histogram.GetSampleSum())
				}
			}
		}
		p.mu.RUnlock()
		if checked < 12 {
			t.Fatalf("round %d: only %d histogram series compared", round, checked)
		}
	}
}

// TestHistogramsWrittenAfterEachObservation: a scrape reuses a histogram's
// protobuf only while its series observed nothing; after an observation,
// a removed series or new buckets, it shows the new state.
func TestHistogramsWrittenAfterEachObservation(t *testing.T) {
	p, reg := registeredProbe()
	p.Configure(testConfig(t, "300ms"))
	a := map[string]string{"target": "a"}
	count := func(name string) uint64 {
		return histogramOf(t, reg, name, a).GetSampleCount()
	}
	for want := uint64(1); want <= 3; want++ {
		p.Observe(successResult("a"))
		for range 2 {
			if got := count("llmprobe_time_to_first_token_seconds"); got != want {
				t.Fatalf("TTFT count %d after %d requests", got, want)
			}
			if got := count("llmprobe_inter_token_latency_seconds"); got != 2*want {
				t.Fatalf("ITL count %d after %d requests of two gaps", got, want)
			}
		}
	}
	// New thresholds: new buckets, the family starts again.
	p.Configure(testConfig(t, "400ms"))
	if m := findMetric(t, reg, "llmprobe_time_to_first_token_seconds", a); m != nil {
		t.Fatalf("a rebuilt family kept the old series: %v", m)
	}
	p.Observe(successResult("a"))
	h := histogramOf(t, reg, "llmprobe_time_to_first_token_seconds", a)
	found := false
	for _, b := range h.GetBucket() {
		found = found || b.GetUpperBound() == 0.4
	}
	if h.GetSampleCount() != 1 || !found {
		t.Fatalf("after new thresholds: count %d, a 0.4 bucket: %v", h.GetSampleCount(), found)
	}
}
