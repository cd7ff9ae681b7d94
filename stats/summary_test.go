package stats

import "testing"

func TestSummarize(t *testing.T) {
	xs := make([]float64, 0, 1001)
	for i := 1000; i >= 0; i-- {
		xs = append(xs, float64(i))
	}
	s := Summarize(xs)
	if s.Count != 1001 || s.Min != 0 || s.Max != 1000 || s.Mean != 500 || s.P50 != 500 || s.P99 != 990 || s.P999 != 999 {
		t.Errorf("summary = %+v", s)
	}
	if got := Summarize([]float64{1, 2}).P50; got != 1.5 {
		t.Errorf("p50 of {1,2} = %g, want 1.5", got)
	}
	if Summarize(nil).Count != 0 {
		t.Error("empty sample")
	}
}
