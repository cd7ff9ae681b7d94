package burst

import (
	"slices"

	"github.com/llmprobe/llmprobe/config"
)

// sweepRates lists the rates a sweep tries, lowest first.
func sweepRates(s *config.Sweep) []float64 {
	if len(s.Rates) > 0 {
		r := slices.Clone(s.Rates)
		slices.Sort(r)
		return r
	}
	var out []float64
	for r := s.Auto.Start; r <= s.Auto.Max+1e-9; r += s.Auto.Step {
		out = append(out, r)
	}
	return out
}
