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
	p := SizeFleet(config.Capacity{TargetRate: 40, Headroom: 0.25}, 9, false, &tps, 2)
	if p.Instances != 6 || p.GPUs == nil || *p.GPUs != 12 || p.OutputTokensPerGPU == nil || *p.OutputTokensPerGPU != 450 {
		t.Fatalf("plan %+v", p)
	}
	if s := p.String(); !strings.Contains(s, "instances 6, GPUs 12 (2 per instance)") || strings.Contains(s, "at most") {
		t.Errorf("plan says %q", s)
	}
	open := SizeFleet(config.Capacity{TargetRate: 40}, 9, true, nil, 0)
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
