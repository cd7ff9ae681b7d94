package collector

import "testing"

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
