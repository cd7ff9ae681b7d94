package plan

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

func testBurst(process string, rate float64, burstiness float64) config.Burst {
	b := config.DefaultBurst
	b.Name = "b"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: process, Rate: rate, Burstiness: burstiness}
	b.Requests = 20000
	return b
}

func gapStats(arr []Arrival) (mean, cv float64) {
	var gaps []float64
	for i := 1; i < len(arr); i++ {
		gaps = append(gaps, (arr[i].At - arr[i-1].At).Seconds())
	}
	for _, g := range gaps {
		mean += g
	}
	mean /= float64(len(gaps))
	var v float64
	for _, g := range gaps {
		v += (g - mean) * (g - mean)
	}
	return mean, math.Sqrt(v/float64(len(gaps))) / mean
}

func TestArrivalProcesses(t *testing.T) {
	cases := []struct {
		process    string
		burstiness float64
		wantCV     float64
	}{
		{config.ArrivalConstant, 1, 0},
		{config.ArrivalPoisson, 1, 1},
		{config.ArrivalGamma, 0.25, 2},
		{config.ArrivalGamma, 4, 0.5},
	}
	for _, tc := range cases {
		arr := slices.Collect(arrivalsOf(testBurst(tc.process, 50, tc.burstiness), 50))
		mean, cv := gapStats(arr)
		if math.Abs(1/mean-50)/50 > 0.03 {
			t.Errorf("%s(%g): achieved rate %.2f, want 50 ± 3%%", tc.process, tc.burstiness, 1/mean)
		}
		if math.Abs(cv-tc.wantCV) > 0.05*math.Max(tc.wantCV, 1) {
			t.Errorf("%s(%g): inter-arrival CV %.3f, want %.3f", tc.process, tc.burstiness, cv, tc.wantCV)
		}
	}
}

func TestArrivalsSeededAndWarmup(t *testing.T) {
	b := testBurst(config.ArrivalPoisson, 10, 1)
	b.Requests, b.Warmup = 0, config.Warmup{Requests: 5}
	b.Duration = config.Duration(10 * time.Second)
	b.Scenarios = []config.WeightedScenario{{Scenario: "a", Weight: 3}, {Scenario: "b", Weight: 1}}
	one, two := slices.Collect(arrivalsOf(b, 10)), slices.Collect(arrivalsOf(b, 10))
	if !slices.Equal(one, two) {
		t.Fatal("same seed, different schedules")
	}
	b.Seed = 2
	if slices.Equal(one, slices.Collect(arrivalsOf(b, 10))) {
		t.Fatal("different seeds, same schedule")
	}
	warm, mix := 0, 0
	for i, a := range one {
		if a.Warmup {
			warm++
			if i >= 5 {
				t.Fatal("a warmup request after the measured part began")
			}
		}
		if a.Scenario == 0 {
			mix++
		}
	}
	if warm != 5 {
		t.Errorf("warmup requests = %d, want 5", warm)
	}
	if r := float64(mix) / float64(len(one)); r < 0.6 || r > 0.9 {
		t.Errorf("share of the weight-3 scenario = %.2f, want ~0.75", r)
	}
	last := one[len(one)-1].At - one[5].At
	if last > 10*time.Second || last < 8*time.Second {
		t.Errorf("measured part spans %s, want just under 10s", last)
	}
}
