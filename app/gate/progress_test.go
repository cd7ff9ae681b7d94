package gate

import (
	"strings"
	"testing"
	"time"
)

// On a terminal the count rewrites one line; the line ends when the burst does.
func TestProgressOnATerminal(t *testing.T) {
	var out strings.Builder
	p := &progress{w: &out, name: "b", terminal: true, every: time.Hour, start: time.Now()}
	for i := 1; i <= 25; i++ {
		p.update(i, 25)
	}
	p.finish()
	if got, want := out.String(), "\rb: 10/25 requests done\rb: 20/25 requests done\rb: 25/25 requests done\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A burst stopped short still shows where it stopped.
	out.Reset()
	p = &progress{w: &out, name: "b", terminal: true, every: time.Hour, start: time.Now()}
	for i := 1; i <= 13; i++ {
		p.update(i, 25)
	}
	p.finish()
	if got, want := out.String(), "\rb: 10/25 requests done\rb: 13/25 requests done\n"; got != want {
		t.Errorf("stopped: got %q, want %q", got, want)
	}
}

// Elsewhere a full line per interval and one at the end, however many
// requests finish.
func TestProgressInALog(t *testing.T) {
	var out strings.Builder
	start := time.Now().Add(-time.Minute)
	p := &progress{w: &out, name: "b", every: 20 * time.Second, start: start, last: start}
	for i := 1; i <= 1000; i++ {
		p.update(i, 2000)
	}
	p.finish()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Contains(out.String(), "\r") || len(lines) != 2 || lines[0] != "b: 1/2000 requests done after 1m0s" || lines[1] != "b: 1000/2000 requests done after 1m0s" {
		t.Errorf("got %q", out.String())
	}
}
