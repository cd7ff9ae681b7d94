package compare

import (
	"fmt"

	"github.com/llmprobe/llmprobe/prober"
)

// qualityPairs are the pairs whose answers were checked on both sides:
// whether each side passed, and the round of each.
type qualityPairs struct {
	passed [][2]bool
	round  []int
}

func (q *qualityPairs) add(k int, base, cand *prober.Result) {
	if base.Quality != nil && cand.Quality != nil {
		q.passed = append(q.passed, [2]bool{base.Quality.Passed, cand.Quality.Passed})
		q.round = append(q.round, k)
	}
}

// addQuality counts a side's checked answers of one run.
func (s *Side) addQuality(results []*prober.Result) {
	for _, r := range results {
		if r.Quality != nil {
			s.QualityChecked++
			if r.Quality.Passed {
				s.QualityPassed++
			}
		}
	}
}

// QualityShare is the side's share of checked answers that passed, as
// "97.0 % of 400"; "" where no answer was checked.
func (s Side) QualityShare() string {
	if s.QualityChecked == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f %% of %d", 100*float64(s.QualityPassed)/float64(s.QualityChecked), s.QualityChecked)
}
