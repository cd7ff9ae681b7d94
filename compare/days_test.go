package compare

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/alerts"
	"github.com/llmprobe/llmprobe/config"
)

// Simulated days of the judge at its defaults (30 s ticks, a 1 h window, 20
// pairs, 10 % tolerance) with the shipped alert read every minute:
// candidates within the tolerance alert on at most 5 of 100 days, a
// candidate 20 % slower in decode at noise 0.04 within 30 minutes on 95 of
// 100; the noisier cases' times are logged for the docs.
func TestSimulatedDays(t *testing.T) {
	forDur, _, err := alerts.Timing("LLMProbeComparisonWorse")
	if err != nil {
		t.Fatal(err)
	}
	al := alerting{Every: time.Minute, For: forDur}
	const days = 100
	for i, c := range dayCases() {
		r := simulateDays(c.dayCase, config.DefaultComparison, config.DefaultCanary.Interval.Std(), al, days, uint64(i+1))
		med, medOK := r.alertAt(0.5)
		p95, p95OK := r.alertAt(0.95)
		pass, passOK := r.passAt(0.5)
		t.Logf("%-40s alerted on %3d of %d days; time to alert median %s, 95th %s; to pass median %s", c.Name, len(r.ToAlert), days, when(med, medOK), when(p95, p95OK), when(pass, passOK))
		switch {
		case c.WithinTolerance && len(r.ToAlert) > days*5/100:
			t.Errorf("%s: alerted on %d of %d days", c.Name, len(r.ToAlert), days)
		case c.Name == "20 % slower decode, noise 0.04" && (!p95OK || p95 > 30*time.Minute):
			t.Errorf("%s: 95 %% of days alerted within %s, not 30 minutes", c.Name, when(p95, p95OK))
		}
	}
}

func when(d time.Duration, ok bool) string {
	if !ok {
		return "none within the day"
	}
	return fmt.Sprint(d.Round(time.Minute))
}
