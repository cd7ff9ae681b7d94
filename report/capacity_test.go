package report

import (
	"math"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

func TestInstancesRoundUpWithHeadroom(t *testing.T) {
	for _, c := range []struct {
		target, headroom, max float64
		want                  int
	}{
		{100, 0.2, 9.5, 13}, // 120 / 9.5 = 12.6
		{10, 0, 5, 2},       // exactly two, not three through float noise
		{0.3, 0.1, 0.11, 3}, // 0.33 / 0.11 = 3
		{1, 0, 50, 1},       // one instance at least
		{1, 0, 0, 0},        // no max rate: nothing to size
	} {
		if got := instances(c.target, c.headroom, c.max); got != c.want {
			t.Errorf("instances(%g, %g, %g) = %d, want %d", c.target, c.headroom, c.max, got, c.want)
		}
	}
}

func TestSizeCountsGPUsAndTokensPerGPU(t *testing.T) {
	tps := 900.0
	p := SizeFleet(config.Capacity{TargetRate: 40, Headroom: 0.25}, 9, 0, false, &tps, 2)
	if p.Instances != 6 || p.GPUs == nil || *p.GPUs != 12 || p.OutputTokensPerGPU == nil || *p.OutputTokensPerGPU != 450 {
		t.Fatalf("plan %+v", p)
	}
	if s := p.String(); !strings.Contains(s, "instances 6, GPUs 12 (2 per instance)") || strings.Contains(s, "at most") {
		t.Errorf("plan says %q", s)
	}
	open := SizeFleet(config.Capacity{TargetRate: 40}, 9, 0, true, nil, 0)
	if open.GPUs != nil || open.OutputTokensPerGPU != nil {
		t.Errorf("GPUs from nowhere: %+v", open)
	}
	if s := open.String(); !strings.Contains(s, "instances at most 5") || !strings.Contains(s, "at least 9/s") || !strings.Contains(s, "GPUs n/a") {
		t.Errorf("an open-ended plan says %q", s)
	}
}

func TestPricePerMillionTokens(t *testing.T) {
	out, total := 1000.0, 4000.0
	p := PriceAt(7.2, &out, &total) // $7.20 an hour at 1000 output tok/s: 3.6M tokens an hour
	if p.PerMillionOutput == nil || math.Abs(*p.PerMillionOutput-2) > 1e-9 || math.Abs(*p.PerMillionTotal-0.5) > 1e-9 {
		t.Fatalf("price %+v", p)
	}
	zero := 0.0
	if perMillion(1, &zero) != nil || perMillion(1, nil) != nil {
		t.Error("a price without tokens")
	}
	if h, ok := (config.Cost{PerGPUHour: 2.5}).Hourly(4); !ok || h != 10 {
		t.Errorf("4 GPUs at 2.5 = %g %v", h, ok)
	}
	if _, ok := (config.Cost{PerGPUHour: 2.5}).Hourly(0); ok {
		t.Error("priced GPUs nobody counted")
	}
}

// A knee in [8, 9)/s sizes 100/s + 20 % as 14 to 15 instances: 15 at the
// rate that held, and 14 would need the rate that did not.
func TestSizeFleetFromTheKneeInterval(t *testing.T) {
	p := SizeFleet(config.Capacity{TargetRate: 100, Headroom: 0.2}, 8, 9, false, nil, 1)
	if p.Instances != 15 || p.FewestInstances != 14 || p.FailingRate != 9 {
		t.Fatalf("plan %+v", p)
	}
	if s := p.String(); !strings.Contains(s, "instances 14–15 (15 at 8/s per instance, the highest rate that held; 14 would need 9/s, which did not)") {
		t.Errorf("plan says %q", s)
	}
	if open := SizeFleet(config.Capacity{TargetRate: 100}, 8, 0, true, nil, 1); open.FewestInstances != 0 {
		t.Errorf("a plan with no failing step has a floor: %+v", open)
	}
}

// The fleet's price is every instance's hour over the target rate's
// tokens: 15 instances at 2.5 an hour for 100/s of 32 output tokens
// (3,200 tok/s) is 37.5 an hour and 3.26 per million, not one instance's
// price at its knee.
func TestPriceFleet(t *testing.T) {
	f := PriceFleet(CapacityPlan{TargetRate: 100, Instances: 15}, 2.5, 32)
	if f.Instances != 15 || f.Hourly != 37.5 || f.PerMillionOutput == nil || math.Abs(*f.PerMillionOutput-37.5/(3600*3200)*1e6) > 1e-9 {
		t.Fatalf("fleet %+v", f)
	}
	if math.Abs(*f.PerMillionOutput-3.255) > 0.001 {
		t.Errorf("%.4f per million", *f.PerMillionOutput)
	}
}
