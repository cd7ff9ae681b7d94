package config

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/llmprobe/llmprobe/replay"
)

// MooncakeBlockTokens is the tokens one Mooncake hash id stands for: a
// trace prompt's keyed prefix is at most this long.
const MooncakeBlockTokens = 512

// validateTrace checks a trace burst and reads the part of its file the
// burst replays, so that a bad line fails the load with its line number and
// the planned-request bound is the trace's own count.
func (b *Burst) validateTrace(path string, cfg *Config, errs *errList) {
	a := &b.Arrival
	p := path + ".arrival"
	ok := true
	if a.File == "" {
		errs.add(p+".file", "is required for process: trace")
		ok = false
	}
	if a.Format != "" && a.Format != replay.Azure && a.Format != replay.Mooncake {
		errs.add(p+".format", "%q must be %s or %s (or left out to detect it)", a.Format, replay.Azure, replay.Mooncake)
		ok = false
	}
	if a.Speedup != 0 && !(a.Speedup > 0 && a.Speedup <= MaxSpeedup) {
		errs.add(p+".speedup", "%g must be above 0 and at most %d (it divides the trace's gaps)", a.Speedup, MaxSpeedup)
		ok = false
	}
	if a.Rate != 0 {
		errs.add(p+".rate", "a trace sets its own arrival times; leave rate out (speedup scales them)")
	}
	if b.Sweep != nil {
		errs.add(path+".sweep", "a trace burst replays its own rate and cannot sweep")
	}
	for i, ws := range b.Scenarios {
		s, found := cfg.Scenario(ws.Scenario)
		switch {
		case found && s.Prompt != "":
			errs.add(fmt.Sprintf("%s.scenarios[%d]", path, i), "scenario %q sends a literal prompt; a trace sets prompt lengths", ws.Scenario)
		case found && s.PromptDataset != nil:
			errs.add(fmt.Sprintf("%s.scenarios[%d]", path, i), "scenario %q draws its prompts from a dataset; a trace sets prompt lengths", ws.Scenario)
		}
	}
	if !ok {
		return
	}
	limit := cfg.Limits.MaxPlannedRequests
	if limit <= 0 || limit > maxPlannedCeiling {
		limit = maxPlannedCeiling
	}
	scan, err := ScanTrace(*b, limit+1)
	if err != nil {
		errs.add(p+".file", "%v", err)
		return
	}
	if scan.Warmup+scan.Measured == 0 {
		errs.add(p+".file", "%s holds no records", a.File)
		return
	}
	a.scan = scan
}

// TraceCut is how a burst's bounds cut its trace: warmup first, then the
// measured part, each by requests or by duration after speedup, as for
// other processes; maxWarmup and maxMeasured stop either part.
func (b Burst) TraceCut(maxWarmup, maxMeasured int) replay.Cut {
	return replay.Cut{
		Speedup:        b.Arrival.SpeedupOrOne(),
		WarmupRequests: b.Warmup.Requests, WarmupDuration: b.Warmup.Duration.Std(), MaxWarmup: maxWarmup,
		Requests: b.Requests, Duration: b.Duration.Std(), MaxMeasured: maxMeasured,
	}
}

// ScanTrace reads the part of b's trace that b replays, at most limit
// records of each part, and fails on the first line that cannot be read.
// Memory stays one line whatever the file's size.
func ScanTrace(b Burst, limit int) (*TraceScan, error) {
	r, err := replay.Open(b.Arrival.File, b.Arrival.Format)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var readErr error
	next := func() (replay.Record, bool) {
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			return rec, false
		}
		return rec, true
	}
	scan := &TraceScan{Format: r.Format()}
	var first, last time.Duration
	for x := range b.TraceCut(limit, limit).Arrivals(next) {
		if scan.Warmup+scan.Measured == 0 {
			first = x.At
		}
		last = x.At
		if x.Warmup {
			scan.Warmup++
		} else {
			scan.Measured++
		}
	}
	if readErr != nil {
		return nil, readErr
	}
	scan.Span = last - first
	n := scan.Warmup + scan.Measured
	if scan.Span > 0 {
		scan.Rate = float64(n-1) / scan.Span.Seconds()
	} else {
		scan.Rate = maxRate // every record at once
	}
	return scan, nil
}

// setTraceDirectory makes relative trace files relative to dir.
func (c *Config) setTraceDirectory(dir string) {
	for i := range c.Bursts {
		if f := c.Bursts[i].Arrival.File; f != "" && !filepath.IsAbs(f) {
			c.Bursts[i].Arrival.File = filepath.Join(dir, f)
		}
	}
}
