package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// Part is one shard's report given to Merge; Name (its file) is what errors
// call it.
type Part struct {
	Name   string
	Report *Report
}

// Merge makes the report of a burst that was split over replicas from the
// reports of all its shards, and judges it against baseline (nil: none).
// The shards must be one run of one burst: the same burst, target, model,
// configuration, overrides, seed, rate and start, with every index from 0
// to N-1 once. The merged report is rebuilt by Build from the shards'
// requests put back in the plan's order, so every figure is what one
// process sending the whole schedule would have reported from the same
// requests: counts, outcomes and failures summed, exact percentiles over
// the union, throughput, goodput and achieved rate over the union's span,
// the gates and the verdict. Two things are the shards' own: failed_samples
// are picked from theirs, and the client counts as saturated if any shard's
// was (a shard's saturation skews its share of every figure).
func Merge(parts []Part, baseline *Report) (*Report, error) {
	if len(parts) == 0 {
		return nil, errors.New("no shard reports to merge")
	}
	byIndex, err := checkShards(parts)
	if err != nil {
		return nil, err
	}
	ref := byIndex[0].Report
	b, scenarios, err := burstOf(byIndex[0])
	if err != nil {
		return nil, err
	}
	start := ref.Shard.Start
	run := Run{ID: NewID(ref.Burst, start), Rate: ref.Rate, NotSent: map[string]int{}, Origin: start}
	type indexed struct {
		n   int
		res *prober.Result
	}
	var all []indexed
	var itl []float64
	var hosts, aborts, thinned []string
	merged := &Merged{Start: start}
	itlKept, itlTotal := 0, 0
	for _, p := range byIndex {
		r := p.Report
		run.Planned += r.PlannedRequests
		run.Warmup += r.WarmupRequests
		run.AllOutputTokens += r.AllOutputTokens
		for _, ns := range r.NotSent {
			run.NotSent[ns.Reason] += ns.Count
		}
		if r.Aborted {
			run.Aborted = true
			aborts = append(aborts, r.Shard.String()+": "+r.AbortReason)
		}
		if t := r.Trace; t != nil {
			if run.Trace == nil {
				run.Trace = &TraceReplay{File: t.File, Format: t.Format, Speedup: t.Speedup, Error: t.Error}
			}
			run.Trace.Records += t.Records
			run.Trace.ClampedPrompt += t.ClampedPrompt
			run.Trace.ClampedOutput += t.ClampedOutput
			run.Trace.SkippedLines = max(run.Trace.SkippedLines, t.SkippedLines)
		}
		if !slices.Contains(hosts, r.Host) {
			hosts = append(hosts, r.Host)
		}
		for _, q := range r.Shard.Requests {
			if q.N%r.Shard.Count != r.Shard.Index {
				return nil, fmt.Errorf("%s: request n=%d is not %s's (its share is n %% %d == %d): the file was altered", p.Name, q.N, r.Shard.String(), r.Shard.Count, r.Shard.Index)
			}
			all = append(all, indexed{q.N, q.result(start)})
		}
		for _, ns := range r.Shard.ITL {
			itl = append(itl, time.Duration(ns).Seconds())
		}
		itlKept, itlTotal = itlKept+len(r.Shard.ITL), itlTotal+r.Shard.ITLCount
		if len(r.Shard.ITL) < r.Shard.ITLCount {
			thinned = append(thinned, fmt.Sprintf("%s kept %d of %d", r.Shard.String(), len(r.Shard.ITL), r.Shard.ITLCount))
		}
		merged.Shards = append(merged.Shards, MergedShard{Index: r.Shard.Index, ID: r.ID, Host: r.Host, Requests: r.Requests,
			Aborted: r.Aborted, ClientSaturated: r.ClientSaturated})
	}
	run.AbortReason = strings.Join(aborts, "; ")
	slices.SortFunc(all, func(x, y indexed) int { return cmp.Compare(x.n, y.n) })
	for _, x := range all {
		run.Add(x.n, x.res)
	}
	run.Close(start)
	meta := Meta{Model: ref.Model, Engine: ref.Engine, EngineVersion: ref.EngineVersion, Version: ref.LLMProbeVersion,
		Host: strings.Join(hosts, ","), Scenarios: scenarios}
	rep := Build(b, run, meta)
	// As the shards wrote them, not as decoded and written again.
	rep.Config, rep.Scenarios, rep.Overrides = ref.Config, ref.Scenarios, ref.Overrides
	rep.Latency["itl"] = Summarize(itl)
	if len(thinned) > 0 {
		merged.Approximate = append(merged.Approximate, fmt.Sprintf("itl: figures from %d of %d samples (%s; a shard keeps at most %d)",
			itlKept, itlTotal, strings.Join(thinned, ", "), maxShardITL))
	}
	rep.FailedSamples = mergeFailedSamples(byIndex, rep.Start)
	for _, p := range byIndex {
		rep.ClientSaturated = rep.ClientSaturated || p.Report.ClientSaturated
	}
	rep.Merged = merged
	if baseline == nil {
		rep.RegressionSkipped = "no baseline given (llmprobe report merge --baseline FILE)"
	}
	rep.Judge(baseline)
	return rep, nil
}

// checkShards checks that parts are every shard of one run of one burst,
// and returns them by index.
func checkShards(parts []Part) ([]Part, error) {
	for _, p := range parts {
		switch r := p.Report; {
		case r.Merged != nil:
			return nil, fmt.Errorf("%s is already a merged report (of %d shards); merge the shards' own reports", p.Name, len(r.Merged.Shards))
		case r.Shard == nil:
			return nil, fmt.Errorf("%s is not a shard's report: it has no \"shard\" section (`llmprobe gate --burst.shard=i/N` writes one)", p.Name)
		case r.Shard.Count < 2 || r.Shard.Index < 0 || r.Shard.Index >= r.Shard.Count:
			return nil, fmt.Errorf("%s: shard %d/%d is not i/N with 0 <= i < N and N >= 2", p.Name, r.Shard.Index, r.Shard.Count)
		}
	}
	ref := parts[0]
	r0 := ref.Report
	for _, p := range parts[1:] {
		r := p.Report
		for _, d := range []struct {
			what     string
			ref, got any
		}{
			{"burst", r0.Burst, r.Burst},
			{"target", r0.Target, r.Target},
			{"model", r0.Model, r.Model},
			{"seed", r0.Seed, r.Seed},
			{"rate", r0.Rate, r.Rate},
			{"shard count", r0.Shard.Count, r.Shard.Count},
			{"start", r0.Shard.Start.UTC().Format(time.RFC3339Nano), r.Shard.Start.UTC().Format(time.RFC3339Nano)},
			{"overrides", strings.Join(r0.Overrides, " "), strings.Join(r.Overrides, " ")},
		} {
			if d.ref != d.got {
				return nil, fmt.Errorf("%s has %s %v but %s has %v: not shards of one run of one burst", p.Name, d.what, d.got, ref.Name, d.ref)
			}
		}
		if !sameJSON(r0.Config, r.Config) || !sameJSON(r0.Scenarios, r.Scenarios) {
			return nil, fmt.Errorf("%s ran burst %s with another configuration than %s: not shards of one run", p.Name, r.Burst, ref.Name)
		}
	}
	n := r0.Shard.Count
	byIndex := make([]Part, n)
	for _, p := range parts {
		i := p.Report.Shard.Index
		if byIndex[i].Report != nil {
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", byIndex[i].Name, p.Name, i, n)
		}
		byIndex[i] = p
	}
	var missing, given []string
	for i, p := range byIndex {
		if p.Report == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		} else {
			given = append(given, fmt.Sprintf("%d/%d %s", i, n, p.Name))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("burst %s was split over %d shards; missing shard %s (given: %s)", r0.Burst, n, strings.Join(missing, ", "), strings.Join(given, ", "))
	}
	return byIndex, nil
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// burstOf decodes the burst and its scenarios from the configuration a
// shard's report carries, for Build's gates and Judge's max_regression.
func burstOf(p Part) (config.Burst, []config.Scenario, error) {
	r := p.Report
	var b config.Burst
	if err := redecode(r.Config, &b); err != nil {
		return b, nil, fmt.Errorf("%s: reading its burst configuration: %w", p.Name, err)
	}
	b.Name, b.Target, b.Seed = r.Burst, r.Target, r.Seed // the seed exactly, never through a float
	scenarios := make([]config.Scenario, len(r.Scenarios))
	for i, m := range r.Scenarios {
		if err := redecode(m, &scenarios[i]); err != nil {
			return b, nil, fmt.Errorf("%s: reading scenario %d of its configuration: %w", p.Name, i, err)
		}
	}
	return b, scenarios, nil
}

// redecode turns a configuration map, as a report keeps it, back into its type.
func redecode(m map[string]any, into any) error {
	y, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(y, into)
}

// mergeFailedSamples picks at most maxFailedSamples of the shards' failed
// samples, spread over the run, their times counted from start.
func mergeFailedSamples(parts []Part, start time.Time) []FailedRequest {
	var all []FailedRequest
	for _, p := range parts {
		for _, f := range p.Report.FailedSamples {
			at := p.Report.Start.Add(time.Duration(f.At * float64(time.Second)))
			f.At = round6(at.Sub(start).Seconds())
			all = append(all, f)
		}
	}
	slices.SortStableFunc(all, func(x, y FailedRequest) int { return cmp.Compare(x.At, y.At) })
	var out []FailedRequest
	for i := range min(len(all), maxFailedSamples) {
		out = append(out, all[i*len(all)/min(len(all), maxFailedSamples)])
	}
	return out
}
