// Sizing and pricing a deployment from the rate one instance held under the
// SLO: instances, GPUs, tokens per GPU and cost per million tokens.

package report

import (
	"fmt"
	"math"

	"github.com/llmprobe/llmprobe/config"
)

// CapacityPlan is the fleet a target rate needs, from the rate one instance held.
type CapacityPlan struct {
	TargetRate float64 `json:"target_rate"`
	Headroom   float64 `json:"headroom"`
	// MaxRate is the highest rate one instance held under the SLO (the
	// rate its requests arrived at, where measured). AtMost says no step
	// failed: the true maximum is higher, so Instances and GPUs are upper
	// bounds.
	MaxRate   float64 `json:"max_rate"`
	AtMost    bool    `json:"at_most"`
	Instances int     `json:"instances"`
	// FailingRate is the lowest rate above MaxRate that one instance did
	// not hold (0: none failed), and FewestInstances what the target would
	// need at it: fewer cannot hold the target, so the fleet lies in
	// [FewestInstances, Instances], the knee's uncertainty as instances.
	FailingRate     float64 `json:"failing_rate,omitempty"`
	FewestInstances int     `json:"fewest_instances,omitempty"`
	GPUsPerInstance int     `json:"gpus_per_instance,omitempty"`
	// GPUs is null where the GPUs of an instance are not known.
	GPUs *int `json:"gpus,omitempty"`
	// OutputTokensPerGPU is output tokens per second per GPU at MaxRate.
	OutputTokensPerGPU *float64 `json:"output_tokens_per_second_per_gpu,omitempty"`
}

// SizeFleet plans for c from maxRate, the rate one instance held (a lower bound
// when atMost), and failingRate, the lowest above it that it did not (0:
// none); outputTPS is its output tokens per second at maxRate (nil: not
// measured) and gpus its GPUs (0: not known).
func SizeFleet(c config.Capacity, maxRate, failingRate float64, atMost bool, outputTPS *float64, gpus int) CapacityPlan {
	p := CapacityPlan{TargetRate: c.TargetRate, Headroom: c.Headroom, MaxRate: maxRate, AtMost: atMost, GPUsPerInstance: gpus}
	p.Instances = instances(c.TargetRate, c.Headroom, maxRate)
	if failingRate > maxRate && !atMost {
		p.FailingRate, p.FewestInstances = failingRate, instances(c.TargetRate, c.Headroom, failingRate)
	}
	if gpus > 0 {
		n := p.Instances * gpus
		p.GPUs = &n
		if outputTPS != nil {
			v := *outputTPS / float64(gpus)
			p.OutputTokensPerGPU = &v
		}
	}
	return p
}

// instances is ⌈target × (1 + headroom) / maxRate⌉, at least 1; a tiny
// epsilon keeps 10/5 from rounding up to 3 through float noise.
func instances(target, headroom, maxRate float64) int {
	if !(maxRate > 0) {
		return 0
	}
	return max(1, int(math.Ceil(target*(1+headroom)/maxRate-1e-9)))
}

// String says the plan in one line: "instances 5, GPUs 10 (2 per
// instance) for 40/s + 20 % headroom at 9.5/s each".
func (p CapacityPlan) String() string {
	bound := ""
	if p.AtMost {
		bound = "at most "
	}
	gpus := "GPUs n/a (set capacity.gpus_per_instance)"
	if p.GPUs != nil {
		gpus = fmt.Sprintf("GPUs %s%d (%d per instance)", bound, *p.GPUs, p.GPUsPerInstance)
		if p.OutputTokensPerGPU != nil {
			gpus += fmt.Sprintf(", %.1f output tok/s per GPU", *p.OutputTokensPerGPU)
		}
	}
	each := fmt.Sprintf("%.4g/s", p.MaxRate)
	if p.AtMost {
		each = "at least " + each
	}
	count := fmt.Sprintf("%s%d", bound, p.Instances)
	if p.FewestInstances > 0 && p.FewestInstances < p.Instances {
		count = fmt.Sprintf("%d–%d (%d at %.4g/s per instance, the highest rate that held; %d would need %.4g/s, which did not)", p.FewestInstances, p.Instances, p.Instances, p.MaxRate, p.FewestInstances, p.FailingRate)
	}
	return fmt.Sprintf("instances %s, %s for %.4g/s + %.0f %% headroom at %s per instance", count, gpus, p.TargetRate, 100*p.Headroom, each)
}

// FleetCost is what a million output tokens cost from the fleet a plan
// buys, at the plan's target rate: the price of the whole fleet, idle
// headroom included, not one instance's at its knee.
type FleetCost struct {
	Instances        int      `json:"instances"`
	Hourly           float64  `json:"hourly"`
	PerMillionOutput *float64 `json:"per_million_output_tokens"`
}

// PriceFleet prices plan's fleet of instances costing hourly each,
// serving the target rate at tokensPerRequest output tokens a request.
func PriceFleet(plan CapacityPlan, hourly, tokensPerRequest float64) *FleetCost {
	f := &FleetCost{Instances: plan.Instances, Hourly: float64(plan.Instances) * hourly}
	tps := plan.TargetRate * tokensPerRequest
	f.PerMillionOutput = perMillion(f.Hourly, &tps)
	return f
}

// perMillion is the price of a million tokens at tokensPerSecond from an
// instance costing hourly; nil without tokens.
func perMillion(hourly float64, tokensPerSecond *float64) *float64 {
	if tokensPerSecond == nil || !(*tokensPerSecond > 0) {
		return nil
	}
	v := hourly / (3600 * *tokensPerSecond) * 1e6
	return &v
}

// CostPrice is what a million tokens cost from one instance at one rate.
type CostPrice struct {
	InstanceHourly   float64  `json:"instance_hourly"`
	PerMillionOutput *float64 `json:"per_million_output_tokens"`
	PerMillionTotal  *float64 `json:"per_million_total_tokens"`
}

// PriceAt prices the output of one instance costing hourly at outputTPS
// and totalTPS tokens per second.
func PriceAt(hourly float64, outputTPS, totalTPS *float64) *CostPrice {
	return &CostPrice{InstanceHourly: hourly, PerMillionOutput: perMillion(hourly, outputTPS), PerMillionTotal: perMillion(hourly, totalTPS)}
}
