package target

import (
	"strings"
	"testing"
	"time"
)

// The rule's branches, on a clock of its own: grace first, then a token in
// the window, then whether anything reached the engine, then the queue.
func TestTokenFlowRule(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	o := TokenFlowOptions{Window: time.Minute, Grace: 5 * time.Minute}
	hung := flow{since: t0, lastToken: t0.Add(time.Minute), lastNoToken: t0.Add(9 * time.Minute), noToken: 4, noTokenWhy: "timeout"}
	for _, c := range []struct {
		name    string
		f       flow
		at      time.Duration
		waiting float64
		healthy bool
		reason  string
	}{
		{"hung, in the grace", hung, 4 * time.Minute, -1, true, "starting: "},
		{"hung", hung, 9*time.Minute + 30*time.Second, -1, false, "no token flows: 4 requests"},
		{"hung but queueing", hung, 9*time.Minute + 30*time.Second, 3, true, "the engine is queueing"},
		{"hung but refusing as overloaded", func() flow { f := hung; f.lastRefused = t0.Add(9 * time.Minute); return f }(), 9*time.Minute + 30*time.Second, -1, true, "the engine is queueing"},
		{"a token inside the window", func() flow { f := hung; f.lastToken = t0.Add(9*time.Minute + 10*time.Second); return f }(), 9*time.Minute + 30*time.Second, -1, true, "tokens flow"},
		{"nothing reached the engine lately", hung, 11 * time.Minute, -1, true, "no request reached the engine"},
	} {
		got := c.f.judge(t0.Add(c.at), o, c.waiting)
		if got.Healthy != c.healthy || !strings.HasPrefix(got.Reason, c.reason) {
			t.Errorf("%s: healthy %v %q, want %v %q…", c.name, got.Healthy, got.Reason, c.healthy, c.reason)
		}
	}
}
