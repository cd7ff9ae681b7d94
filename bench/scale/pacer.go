package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/llmprobe/llmprobe/lib/clock"
)

// poisson calls at with each instant of a Poisson schedule at rate over d,
// from a fixed seed.
func poisson(rate float64, d time.Duration, at func(time.Time)) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now().Add(time.Millisecond)
	for t := start; t.Sub(start) < d; t = t.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second))) {
		at(t)
	}
}

// pacerRow is the burst dispatcher's pacer alone, releasing a Poisson
// schedule at rate to a sender that does nothing: its lateness is the
// dispatch column.
func pacerRow(rate float64, d time.Duration) Row {
	p := clock.NewPacer()
	defer p.Close()
	var late []float64
	m := startMeter()
	poisson(rate, d, func(t time.Time) {
		p.Until(context.Background(), t)
		late = append(late, ms(time.Since(t)))
	})
	row := m.stop(fmt.Sprintf("pacer %g/s", rate), rate, len(late))
	row.Requests = len(late)
	achieved := float64(len(late)) / d.Seconds()
	row.AchievedRate = &achieved
	row.Dispatch = quantiles(late)
	return row
}
