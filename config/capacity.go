package config

// Ranges of the configuration: a fleet's rate may pass what one prober
// sends, so target_rate has its own bound.
const (
	maxTargetRate      = 10_000_000 // requests per second
	maxHeadroom        = 10         // +1000 %
	maxGPUsPerInstance = 1024
	maxHourly          = 1_000_000
)

// Capacity is what a sweep burst's `capacity:` asks for: the rate the fleet
// must serve, the spare share on top of it, and the GPUs one instance (the
// swept target) has; 0 GPUs means the node's count where NVML read one.
type Capacity struct {
	TargetRate      float64 `yaml:"target_rate"`
	Headroom        float64 `yaml:"headroom,omitempty"`
	GPUsPerInstance int     `yaml:"gpus_per_instance,omitempty"`
}

// Validate adds Capacity's problems at path.
func (c *Capacity) Validate(path string, errs *FieldErrors) {
	errs.Above(path+".target_rate", c.TargetRate, 0, maxTargetRate, "requests per second")
	errs.Within(path+".headroom", c.Headroom, 0, maxHeadroom, "(0.3 means 30 % spare)")
	errs.IntWithin(path+".gpus_per_instance", c.GPUsPerInstance, 0, maxGPUsPerInstance, "(0: the node's count, where NVML reads one)")
}

// Cost is what a sweep burst's `cost:` prices an instance at, per hour:
// the instance's price, or its GPUs' (per_gpu_hour times its GPUs).
type Cost struct {
	PerInstanceHour float64 `yaml:"per_instance_hour,omitempty"`
	PerGPUHour      float64 `yaml:"per_gpu_hour,omitempty"`
}

// Validate adds Cost's problems at path.
func (c *Cost) Validate(path string, errs *FieldErrors) {
	if (c.PerInstanceHour > 0) == (c.PerGPUHour > 0) {
		errs.Add(path, "set exactly one of per_instance_hour and per_gpu_hour")
	}
	errs.Within(path+".per_instance_hour", c.PerInstanceHour, 0, maxHourly, "per hour")
	errs.Within(path+".per_gpu_hour", c.PerGPUHour, 0, maxHourly, "per hour")
}

// Hourly is one instance's price per hour; false when it is priced per GPU
// and its GPU count is not known.
func (c Cost) Hourly(gpusPerInstance int) (float64, bool) {
	if c.PerInstanceHour > 0 {
		return c.PerInstanceHour, true
	}
	if gpusPerInstance <= 0 {
		return 0, false
	}
	return c.PerGPUHour * float64(gpusPerInstance), true
}
