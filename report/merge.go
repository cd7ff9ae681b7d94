// The reports of a burst split over replicas made into the burst's report,
// exactly as one process sending the whole schedule would have made it.

package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

// ShardReport is one shard's report given to Shards; Name (its file) is what errors
// call it.
type ShardReport struct {
	Name   string
	Report *Report
}

// MergeShards makes the report of a burst that was split over replicas from
// the reports of all its shards, not yet judged, and gives the burst's
// configuration as the shards recorded it, which judges it.
// The shards must be one run of one burst: the same burst, target, model,
// configuration, overrides, seed, rate and start, with every index from 0
// to N-1 once. The merged report is rebuilt by report.Build from the
// shards' requests put back in the plan's order, so every figure is what one
// process sending the whole schedule would have reported from the same
// requests: counts, outcomes and failures summed, exact percentiles over
// the union, throughput, goodput and achieved rate over the union's span,
// and the gates. Three things are the shards' own: failed_samples
// are picked from theirs, the client counts as saturated if any shard's
// was (a shard's saturation skews its share of every figure), and the
// error bound's read side and CPU throttling are the worst shard's, part
// by part, or n/a if any shard's was (each shard's process had its own).
func MergeShards(parts []ShardReport) (*Report, config.Burst, error) {
	if len(parts) == 0 {
		return nil, config.Burst{}, errors.New("no shard reports to merge")
	}
	byIndex, err := checkShards(parts)
	if err != nil {
		return nil, config.Burst{}, err
	}
	ref := byIndex[0].Report
	b, scenarios, err := burstOf(byIndex[0])
	if err != nil {
		return nil, config.Burst{}, err
	}
	u := newShardUnion(ref)
	for _, p := range byIndex {
		if err := u.add(p); err != nil {
			return nil, config.Burst{}, err
		}
	}
	meta := Meta{Model: ref.Model, Engine: ref.Engine, EngineVersion: ref.EngineVersion, Version: ref.LLMProbeVersion,
		Host: strings.Join(u.hosts, ","), Scenarios: scenarios}
	rep := Build(b, u.close(), meta)
	// As the shards wrote them, not as decoded and written again.
	rep.Config, rep.Scenarios, rep.Overrides = ref.Config, ref.Scenarios, ref.Overrides
	rep.Latency["itl"] = stats.Summarize(u.itl)
	if len(u.thinned) > 0 {
		u.merged.Approximate = append(u.merged.Approximate, fmt.Sprintf("itl: figures from %d of %d samples (%s; a shard keeps at most %d)",
			u.itlKept, u.itlTotal, strings.Join(u.thinned, ", "), u.itlBound))
	}
	rep.FailedSamples = mergeFailedSamples(byIndex, rep.Start)
	for _, p := range byIndex {
		rep.ClientSaturated = rep.ClientSaturated || p.Report.ClientSaturated
	}
	rep.Merged = u.merged
	return rep, b, nil
}

// shardUnion gathers the shards' requests, counts and samples into the one run
// they made up, the requests back in the plan's order.
type shardUnion struct {
	start  time.Time
	run    Run
	merged *Merged
	itl    []float64
	// hosts are the shards' hosts, aborts why shards stopped, thinned the
	// shards that kept a subset of their ITL samples.
	hosts, aborts, thinned []string
	// itlKept of itlTotal ITL samples came with the shards; itlBound is
	// how many a shard keeps at most.
	itlKept, itlTotal, itlBound int
	added                       int // shards taken in
}

func newShardUnion(ref *Report) *shardUnion {
	start := ref.Shard.Start
	return &shardUnion{start: start, merged: &Merged{Start: start},
		run: Run{ID: NewID(ref.Burst, start), Rate: ref.Rate, NotSent: map[string]int{}, Origin: start}}
}

// add takes in one shard's report.
func (u *shardUnion) add(p ShardReport) error {
	r := p.Report
	var rt *stats.RuntimeDelays
	if r.ErrorBound != nil {
		rt = r.ErrorBound.Runtime
	}
	if u.added == 0 {
		u.run.Runtime = rt
	} else {
		u.run.Runtime = stats.WorseRuntime(u.run.Runtime, rt)
	}
	u.added++
	u.run.Planned += r.PlannedRequests
	u.run.Warmup += r.WarmupRequests
	u.run.AllOutputTokens += r.AllOutputTokens
	for _, ns := range r.NotSent {
		u.run.NotSent[ns.Reason] += ns.Count
	}
	if r.Aborted {
		u.run.Aborted = true
		u.aborts = append(u.aborts, r.Shard.String()+": "+r.AbortReason)
	}
	if t := r.Trace; t != nil {
		if u.run.Trace == nil {
			u.run.Trace = &TraceReplay{File: t.File, Format: t.Format, Speedup: t.Speedup, Error: t.Error}
		}
		u.run.Trace.Records += t.Records
		u.run.Trace.ClampedPrompt += t.ClampedPrompt
		u.run.Trace.ClampedOutput += t.ClampedOutput
		u.run.Trace.SkippedLines = max(u.run.Trace.SkippedLines, t.SkippedLines)
	}
	if !slices.Contains(u.hosts, r.Host) {
		u.hosts = append(u.hosts, r.Host)
	}
	for _, q := range r.Shard.Requests {
		if q.N%r.Shard.Count != r.Shard.Index {
			return fmt.Errorf("%s: request n=%d is not %s's (its share is n %% %d == %d): the file was altered", p.Name, q.N, r.Shard, r.Shard.Count, r.Shard.Index)
		}
		u.run.Add(q.N, resultOf(q, u.start))
	}
	for _, ns := range r.Shard.ITL {
		u.itl = append(u.itl, time.Duration(ns).Seconds())
	}
	u.itlKept, u.itlTotal = u.itlKept+len(r.Shard.ITL), u.itlTotal+r.Shard.ITLCount
	if len(r.Shard.ITL) < r.Shard.ITLCount {
		u.thinned = append(u.thinned, fmt.Sprintf("%s kept %d of %d", r.Shard, len(r.Shard.ITL), r.Shard.ITLCount))
		u.itlBound = max(u.itlBound, len(r.Shard.ITL)) // a shard that thinned kept exactly its bound
	}
	u.merged.Shards = append(u.merged.Shards, MergedShard{Index: r.Shard.Index, ID: r.ID, Host: r.Host, Requests: r.Requests,
		Aborted: r.Aborted, ClientSaturated: r.ClientSaturated})
	return nil
}

// close returns the run, its requests back in the plan's order (Run.Close).
func (u *shardUnion) close() Run {
	u.run.AbortReason = strings.Join(u.aborts, "; ")
	u.run.Close(u.start)
	return u.run
}
