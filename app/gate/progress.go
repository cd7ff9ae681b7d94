package gate

import (
	"fmt"
	"io"
	"time"
)

// progress shows how far a burst is: on a terminal one line rewritten in
// place, elsewhere (CI logs) a full line every interval and at each run's
// end, so a log gets a few lines per minute, never a carriage return.
type progress struct {
	w           io.Writer
	name        string
	terminal    bool
	every       time.Duration
	start, last time.Time
	done, total int
	shown       bool // the latest counts are printed
}

// update is called with the runner's lock held, once per finished request.
func (p *progress) update(done, total int) {
	p.done, p.total, p.shown = done, total, false
	if p.terminal {
		if done == total || done%10 == 0 {
			fmt.Fprintf(p.w, "\r%s: %d/%d requests done", p.name, done, total)
			p.shown = true
		}
		return
	}
	if now := time.Now(); done == total || now.Sub(p.last) >= p.every && now.Sub(p.start) >= p.every {
		p.line(now)
	}
}

func (p *progress) line(now time.Time) {
	fmt.Fprintf(p.w, "%s: %d/%d requests done after %s\n", p.name, p.done, p.total, now.Sub(p.start).Round(time.Second))
	p.last, p.shown = now, true
}

// finish ends the progress output once the burst is over.
func (p *progress) finish() {
	switch {
	case p.terminal && p.total > 0:
		if !p.shown {
			fmt.Fprintf(p.w, "\r%s: %d/%d requests done", p.name, p.done, p.total)
		}
		fmt.Fprintln(p.w)
	case !p.terminal && !p.shown && p.total > 0:
		p.line(time.Now())
	}
}
