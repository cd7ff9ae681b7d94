package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// checkShards checks that parts are every shard of one run of one burst,
// and returns them by index.
func checkShards(parts []ShardReport) ([]ShardReport, error) {
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
	byIndex := make([]ShardReport, n)
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
func burstOf(p ShardReport) (config.Burst, []config.Scenario, error) {
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

// mergeFailedSamples picks at most report.MaxFailedSamples of the shards' failed
// samples, spread over the run, their times counted from start.
func mergeFailedSamples(parts []ShardReport, start time.Time) []FailedRequest {
	var all []FailedRequest
	for _, p := range parts {
		for _, f := range p.Report.FailedSamples {
			at := p.Report.Start.Add(time.Duration(f.At * float64(time.Second)))
			f.At = math.Round(at.Sub(start).Seconds()*1e6) / 1e6
			all = append(all, f)
		}
	}
	slices.SortStableFunc(all, func(x, y FailedRequest) int { return cmp.Compare(x.At, y.At) })
	var out []FailedRequest
	for i := range min(len(all), MaxFailedSamples) {
		out = append(out, all[i*len(all)/min(len(all), MaxFailedSamples)])
	}
	return out
}

// resultOf rebuilds what report.Build reads of a shard's row.
func resultOf(q ShardRequest, start time.Time) *prober.Result {
	res := &prober.Result{
		Sched: start.Add(time.Duration(q.At)), Outcome: q.Outcome, DispatchDelay: time.Duration(q.Dispatch), E2E: time.Duration(q.E2E),
		TPOT: time.Duration(q.TPOT), OutputTokens: q.Output, Inputs: q.Inputs, PromptTokensReported: q.Prompt, TokenSource: q.Source, TokenMismatch: q.Mismatch, Good: q.Good,
		Turn: q.Turn, Scenario: q.Scenario, AudioSeconds: q.Audio, WordErrors: q.WordErrors, ReferenceWords: q.ReferenceWords, Replica: q.Replica,
		Phase: q.Phase, Reason: q.Reason, HTTPStatus: q.Status, Error: q.Error,
	}
	if q.TTFT != nil {
		res.TTFT, res.OutputChunks = time.Duration(*q.TTFT), 1
	}
	if q.Tool != nil {
		res.TTFTool = time.Duration(*q.Tool)
	}
	for _, c := range prober.Components {
		if d, ok := q.Parts[c]; ok {
			res.TTFTParts = append(res.TTFTParts, prober.TTFTPart{Component: c, D: time.Duration(d)})
		}
	}
	if q.Engine != "" {
		res.Engine = &prober.EngineTimings{Source: q.Engine}
	}
	if q.Cached != nil {
		res.CachedPromptTokens, res.CachedReported = *q.Cached, true
	}
	if q.Quality != nil {
		res.Quality = &prober.QualityResult{Passed: *q.Quality}
	}
	for _, o := range q.Met {
		res.Checks = append(res.Checks, prober.Check{Objective: o, Met: true})
	}
	for _, o := range q.Missed {
		res.Checks = append(res.Checks, prober.Check{Objective: o, WithinOwnDelay: slices.Contains(q.OwnDelay, o)})
	}
	res.ReadDelay, res.ReadDelayFirst, res.ReadDelayLast, res.Throttled = time.Duration(q.Read), time.Duration(q.ReadFirst), time.Duration(q.ReadLast), time.Duration(q.Throttled)
	return res
}
