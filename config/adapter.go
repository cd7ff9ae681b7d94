package config

import (
	"math"
	"strconv"
)

// Adapter is one LoRA adapter a scenario's requests go to, and its share:
// an engine serves each adapter as a model name (vLLM's --lora-modules),
// so a request's model is the adapter's name, and the model label's
// values stay the configuration's.
type Adapter struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight,omitempty"` // 0 means 1
}

// MaxAdapters bounds a scenario's adapters: each is a value of the model label.
const MaxAdapters = 64

// AdapterWeight is a's share before normalising: its weight, 1 unset.
func (a Adapter) AdapterWeight() float64 {
	if a.Weight == 0 {
		return 1
	}
	return a.Weight
}

func (s *Scenario) validateAdapters(path string, errs *FieldErrors) {
	if len(s.Adapters) == 0 {
		return
	}
	path += ".adapters"
	if n := len(s.Adapters); n > MaxAdapters {
		errs.Add(path, "%d adapters must be at most %d: each is a value of the model label", n, MaxAdapters)
	}
	seen := map[string]int{}
	for i, a := range s.Adapters {
		at := path + "[" + strconv.Itoa(i) + "]"
		switch first, dup := seen[a.Name]; {
		case a.Name == "" || len(a.Name) > 128:
			errs.Add(at+".name", "must be 1 to 128 characters: the model name the engine serves the adapter as")
		case dup:
			errs.Add(at+".name", "%q repeats adapters[%d]", a.Name, first)
		default:
			seen[a.Name] = i
		}
		if a.Weight < 0 || math.IsNaN(a.Weight) || math.IsInf(a.Weight, 0) {
			errs.Add(at+".weight", "%g must be a finite number above 0 (unset is 1)", a.Weight)
		}
	}
}
