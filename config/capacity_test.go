package config

import (
	"strings"
	"testing"
)

func TestCapacityValidateNamesTheField(t *testing.T) {
	var errs FieldErrors
	(&Capacity{TargetRate: 0, Headroom: -1, GPUsPerInstance: 5000}).Validate("bursts[0].capacity", &errs)
	(&Cost{PerInstanceHour: 1, PerGPUHour: 2}).Validate("bursts[0].cost", &errs)
	(&Cost{}).Validate("bursts[1].cost", &errs)
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := "bursts[0].capacity.target_rate bursts[0].capacity.headroom bursts[0].capacity.gpus_per_instance bursts[0].cost bursts[1].cost"
	if strings.Join(paths, " ") != want {
		t.Errorf("errors at %v, want %s", paths, want)
	}
	errs = nil
	(&Capacity{TargetRate: 100, Headroom: 0.3, GPUsPerInstance: 8}).Validate("c", &errs)
	(&Cost{PerGPUHour: 2}).Validate("c", &errs)
	if len(errs) != 0 {
		t.Errorf("a good configuration refused: %v", errs)
	}
}
