package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Workload is a steady load for LongRun: Poisson arrivals at Rate a second
// for Duration, each request PromptTokens in and OutputTokens out, judged
// good when its TTFT and TPOT meet the objectives (0: none). Requests that
// arrive in the first WarmUp are sent but not counted.
type Workload struct {
	Rate                       float64
	Duration, WarmUp           time.Duration
	PromptTokens, OutputTokens int
	TTFT, TPOT                 time.Duration
	Seed                       uint64
}

// LongRunResult is what the engine did with a Workload.
type LongRunResult struct {
	// Requests arrived; Rejected of them found the queue full; Good met
	// both objectives (a rejected request is not good).
	Requests, Rejected, Good int
	// InOrder says of each request, in arrival order, whether it was good.
	InOrder []bool
}

// Goodput is the share of requests that were good.
func (r LongRunResult) Goodput() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Good) / float64(r.Requests)
}

// LongRun runs the engine's own scheduler, admit and advance as the
// running engine does them, on a virtual clock: a step ends its cost after
// it starts and the next starts then, with no wall-clock wait, so a
// simulated hour takes a fraction of a second. It is the sim's truth for
// what a load does in the long run, which a short burst only samples.
func LongRun(cfg Config, w Workload) (LongRunResult, error) {
	if w.Rate <= 0 || w.Duration <= 0 || w.OutputTokens < 1 || w.PromptTokens < 0 {
		return LongRunResult{}, fmt.Errorf("sim: long run needs a rate, a duration and tokens, got %+v", w)
	}
	e, err := newEngine(cfg)
	if err != nil {
		return LongRunResult{}, err
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x5eed))
	t0 := time.Unix(0, 0)
	next := t0.Add(time.Duration(rng.ExpFloat64() / w.Rate * float64(time.Second)))
	end := t0.Add(w.Duration)
	var out LongRunResult
	var inFlight []*sequence
	index := map[*sequence]int{}
	arrive := func(until time.Time) {
		for ; !next.After(until) && next.Before(end); next = next.Add(time.Duration(rng.ExpFloat64() / w.Rate * float64(time.Second))) {
			counted := !next.Before(t0.Add(w.WarmUp))
			s := &sequence{ctx: context.Background(), promptTokens: w.PromptTokens, maxTokens: w.OutputTokens, arrived: next, out: make(chan struct{}, w.OutputTokens), counted: counted}
			if counted {
				out.Requests++
				out.InOrder = append(out.InOrder, false)
				index[s] = len(out.InOrder) - 1
			}
			if e.submit(s) != nil {
				if counted {
					out.Rejected++
				}
				continue
			}
			inFlight = append(inFlight, s)
		}
	}
	now := t0
	for next.Before(end) || len(inFlight) > 0 {
		arrive(now)
		e.mu.Lock()
		if len(e.waiting) == 0 && len(e.running) == 0 {
			e.mu.Unlock()
			now = next // idle: the clock jumps to the next arrival
			continue
		}
		admitted, cost := e.admit()
		e.advance(admitted, now, now.Add(cost))
		e.mu.Unlock()
		now = now.Add(cost)
		kept := inFlight[:0]
		for _, s := range inFlight {
			if s.generated < s.maxTokens {
				kept = append(kept, s)
				continue
			}
			if s.counted && w.good(s) {
				out.Good++
				out.InOrder[index[s]] = true
			}
			delete(index, s)
		}
		clear(inFlight[len(kept):])
		inFlight = kept
	}
	return out, nil
}

// good is whether a finished sequence met the workload's objectives.
func (w Workload) good(s *sequence) bool {
	if w.TTFT > 0 && s.first.Sub(s.arrived) > w.TTFT {
		return false
	}
	if w.TPOT > 0 && s.generated > 1 && s.last.Sub(s.first)/time.Duration(s.generated-1) > w.TPOT {
		return false
	}
	return true
}

// LongRunKnee is the highest rate in [lo, hi] at which the workload's
// long-run goodput reaches target, found by bisection to resolution (the
// rate in w is ignored); lo itself when even lo does not reach it.
func LongRunKnee(cfg Config, w Workload, target, lo, hi, resolution float64) (float64, error) {
	held := func(rate float64) (bool, error) {
		w.Rate = rate
		r, err := LongRun(cfg, w)
		return r.Goodput() >= target, err
	}
	if ok, err := held(hi); err != nil || ok {
		return hi, err
	}
	for hi-lo > resolution {
		mid := (lo + hi) / 2
		ok, err := held(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
