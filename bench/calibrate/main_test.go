package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTruthRatio reads two GET /sim/truth answers: requests with fewer than
// 3 stamps are left out, each TPOT is the mean gap from first to last chunk,
// and the ratio is of the medians.
func TestTruthRatio(t *testing.T) {
	baseline := []byte(`{"stamps": {
		"a": [0, 10000000, 20000000],
		"b": [0, 12000000, 24000000, 36000000],
		"c": [0, 14000000, 28000000],
		"short": [0, 99000000]
	}, "received": {}, "dropped": 1}`)
	candidate := []byte(`{"stamps": {
		"a": [5, 15000005, 30000005],
		"b": [0, 18000000, 36000000]
	}, "received": {}, "dropped": 0}`)
	got, err := truthRatio(baseline, candidate)
	if err != nil {
		t.Fatal(err)
	}
	if got.BaselineRequests != 3 || got.CandidateRequests != 2 || got.Dropped != 1 {
		t.Errorf("counts %+v, want 3 baseline, 2 candidate, 1 dropped", got)
	}
	// Baseline median 12 ms; candidate median (15+18)/2 = 16.5 ms.
	if got.Ratio == nil || math.Abs(*got.Ratio-16.5/12) > 1e-12 {
		t.Errorf("ratio %v, want %v", got.Ratio, 16.5/12)
	}
	if _, err := truthRatio([]byte(`{`), candidate); err == nil {
		t.Error("broken JSON read without an error")
	}
	empty, err := truthRatio([]byte(`{"stamps": {}}`), candidate)
	if err != nil || empty.Ratio != nil {
		t.Errorf("no baseline requests: ratio %v, error %v; want none", empty.Ratio, err)
	}
}

func TestReadCompareAndCoverage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	doc := `{"verdict": "worse", "metrics": [
		{"metric": "tpot", "quantile": "p50", "estimate": 1.4, "lower": 1.38, "upper": 1.42, "verdict": "worse"},
		{"metric": "tpot", "quantile": "p99", "estimate": 1.1, "lower": 1.0, "upper": 1.2, "verdict": "worse"},
		{"metric": "ttft", "quantile": "p50", "estimate": 2.0, "lower": null, "upper": null, "verdict": "too few"},
		{"metric": "goodput", "estimate": 0, "lower": 0, "upper": 0, "verdict": "within tolerance"}
	]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Result{Output: path}
	if err := r.readCompare(); err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "worse" || len(r.Metrics) != 2 {
		t.Fatalf("verdict %q, metrics %v; want worse with tpot and ttft p50", r.Verdict, r.Metrics)
	}
	if hw, ok := r.Metrics["tpot"].halfWidthPct(); !ok || math.Abs(hw-100*0.02/1.4) > 1e-9 {
		t.Errorf("tpot half-width %v %v", hw, ok)
	}
	if _, ok := r.Metrics["ttft"].halfWidthPct(); ok {
		t.Error("ttft p50 without bounds has a half-width")
	}
}

func TestConditions(t *testing.T) {
	cs, err := parseConditions("identical, 15,40")
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].simFlags() != nil {
		t.Errorf("identical: flags %v, want the defaults", cs[0].simFlags())
	}
	want := []string{"--sim.decode-base=11.5ms", "--sim.decode-per-seq=230µs"}
	if got := cs[1].simFlags(); !slices.Equal(got, want) {
		t.Errorf("15: flags %v, want %v", got, want)
	}
	if got := cs[2].simFlags(); got[0] != "--sim.decode-base=14ms" || got[1] != "--sim.decode-per-seq=280µs" {
		t.Errorf("40: flags %v", got)
	}
	for _, bad := range []string{"identical,identical", "slow", "15,,25"} {
		if _, err := parseConditions(bad); err == nil {
			t.Errorf("%q parsed without an error", bad)
		}
	}
}
