package report

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

// ShardPart marks a report as one replica's share of a burst split over
// Count replicas (`llmprobe gate --burst.shard=i/N`), and keeps what `llmprobe
// report merge` needs to rebuild the whole burst's report exactly: a compact
// row per measured request and every inter-token latency.
//
// Size (a shard's report is written as compact JSON): a row is about 150
// bytes, and a shard measures at most its share of the burst's planned
// requests, which limits.max_planned_requests and max_burst_memory (4 KiB per
// measured result) already bound, so the rows take under 1/25 of what the
// shard held in memory anyway. ITL, one sample per output token, is kept
// whole up to maxShardITL (1,000,000) samples per shard, about 10 MB; past
// that the shard keeps an evenly spaced subset and the merged report says
// that its ITL figures come from a subset.
type ShardPart struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Start is the instant every shard's arrival offsets count from.
	Start time.Time `json:"start"`
	// PerShard says what applied to this shard alone.
	PerShard string `json:"per_shard"`
	// Requests are the measured requests that were sent, in plan order.
	Requests []ShardRequest `json:"requests"`
	// ITL holds the successful requests' inter-token latencies in
	// nanoseconds, in plan order; ITLCount is how many there were, more
	// than len(ITL) when the shard kept a subset.
	ITL      []int64 `json:"itl_ns"`
	ITLCount int     `json:"itl_count"`
}

// ShardRequest is one measured request of a shard: what Build reads of its
// result, durations in nanoseconds.
type ShardRequest struct {
	N        int            `json:"n"`  // place in the whole plan, warmup included
	At       int64          `json:"at"` // when it was due, from ShardPart.Start
	Outcome  prober.Outcome `json:"o"`
	Dispatch int64          `json:"d"`
	E2E      int64          `json:"e2e"`
	// TTFT is nil when no output token arrived; Tool when no tool call did.
	TTFT *int64 `json:"ttft,omitempty"`
	Tool *int64 `json:"tool,omitempty"`
	TPOT int64  `json:"tpot,omitempty"`
	// Parts is the TTFT split, nanoseconds by component; Engine names the
	// source of the engine's timings, "" without.
	Parts  map[string]int64 `json:"parts,omitempty"`
	Engine string           `json:"eng,omitempty"`
	Output int              `json:"out,omitempty"`
	Inputs int              `json:"inputs,omitempty"` // texts embedded or documents ranked
	// A transcription's audio seconds, and its word errors against its
	// clip's reference and the reference's words.
	Audio          float64 `json:"aud,omitempty"`
	WordErrors     int     `json:"we,omitempty"`
	ReferenceWords int     `json:"rw,omitempty"`
	// Replica is the replica that answered, as the target names it.
	Replica string             `json:"rep,omitempty"`
	Prompt  int                `json:"in,omitempty"` // the server's count, else the requested one
	Source  prober.TokenSource `json:"src,omitempty"`
	// Mismatch is how the usage contradicted the stream, "" when it did not.
	Mismatch string   `json:"tm,omitempty"`
	Good     bool     `json:"good,omitempty"`
	Met      []string `json:"met,omitempty"`
	Missed   []string `json:"missed,omitempty"`
	// OwnDelay lists the missed objectives the prober's own delay may
	// explain (prober.Check.WithinOwnDelay); Read, ReadFirst and ReadLast
	// its read side in flight and at its first and last stamps (ns);
	// Throttled the CPU throttling counted in them (absent in shards
	// written before it).
	OwnDelay  []string `json:"own,omitempty"`
	Read      int64    `json:"rd,omitempty"`
	ReadFirst int64    `json:"rd1,omitempty"`
	ReadLast  int64    `json:"rdn,omitempty"`
	Throttled int64    `json:"thr,omitempty"`
	// Quality is whether the answer passed its checks; nil when none.
	Quality *bool `json:"q,omitempty"`
	// Why a failed request failed; Error only on the shard's first request
	// of each (outcome, phase, reason, status), which is all the failure
	// groups show.
	Phase  string `json:"phase,omitempty"`
	Reason string `json:"reason,omitempty"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// A conversation's turn with its scenario, for the by-turn table, and
	// the prompt tokens the prefix cache served (nil: not reported).
	Turn     int    `json:"turn,omitempty"`
	Scenario string `json:"sc,omitempty"`
	Cached   *int   `json:"cached,omitempty"`
}

// maxShardITL bounds the ITL samples a shard's report keeps (a variable for tests).
var maxShardITL = 1_000_000

// perShardNote says what a shard did alone, in its report.
const perShardNote = "max_concurrency and the safety brake (its min_samples sized to this shard's rate) applied to this shard alone; " +
	"the planned-request bound is the whole burst's, of which this shard sent its 1/N share; " +
	"SLO gates on this share are shown, not judged: the merged report (llmprobe report merge) is the burst's verdict"

// newShardPart keeps run o's requests as rows.
func newShardPart(o Run) *ShardPart {
	p := &ShardPart{Index: o.Shard.Index, Count: o.Shard.Count, Start: o.Origin.UTC(), PerShard: perShardNote,
		Requests: make([]ShardRequest, 0, len(o.Results))}
	type failureKey struct {
		outcome       prober.Outcome
		phase, reason string
		status        int
	}
	seen := map[failureKey]bool{}
	var itl []int64
	for i, res := range o.Results {
		n := i
		if i < len(o.Index) {
			n = o.Index[i]
		}
		row := ShardRequest{N: n, At: int64(res.Sched.Sub(o.Origin)), Outcome: res.Outcome, Dispatch: int64(res.DispatchDelay), E2E: int64(res.E2E),
			Output: res.OutputTokens, Inputs: res.Inputs, Prompt: res.PromptTokensReported, Good: res.Good,
			Audio: res.AudioSeconds, WordErrors: res.WordErrors, ReferenceWords: res.ReferenceWords, Replica: res.Replica}
		if row.Prompt == 0 {
			row.Prompt = res.PromptTokensRequested
		}
		if res.Turn > 0 {
			row.Turn, row.Scenario = res.Turn, res.Scenario
		}
		if res.CachedReported {
			row.Cached = &res.CachedPromptTokens
		}
		for _, c := range res.Checks {
			if c.Met {
				row.Met = append(row.Met, c.Objective)
			} else {
				row.Missed = append(row.Missed, c.Objective)
			}
			if c.WithinOwnDelay {
				row.OwnDelay = append(row.OwnDelay, c.Objective)
			}
		}
		row.Read, row.ReadFirst, row.ReadLast, row.Throttled = int64(res.ReadDelay), int64(res.ReadDelayFirst), int64(res.ReadDelayLast), int64(res.Throttled)
		if q := res.Quality; q != nil {
			row.Quality = &q.Passed
		}
		row.Mismatch = res.TokenMismatch
		if res.Outcome == prober.OutcomeSuccess {
			row.Source = res.TokenSource
			if res.FirstTokenSeen() {
				ttft := int64(res.TTFT)
				row.TTFT, row.TPOT = &ttft, int64(res.TPOT)
			}
			if res.TTFTool > 0 {
				tool := int64(res.TTFTool)
				row.Tool = &tool
			}
			if len(res.TTFTParts) > 0 {
				row.Parts = make(map[string]int64, len(res.TTFTParts))
				for _, part := range res.TTFTParts {
					row.Parts[part.Component] = int64(part.D)
				}
			}
			if res.Engine != nil {
				row.Engine = res.Engine.Source
			}
			for _, d := range res.ITL {
				itl = append(itl, int64(d))
			}
		} else {
			row.Phase, row.Reason, row.Status = res.Phase, res.Reason, res.HTTPStatus
			if k := (failureKey{res.Outcome, res.Phase, res.Reason, res.HTTPStatus}); !seen[k] {
				seen[k], row.Error = true, res.Error
			}
		}
		p.Requests = append(p.Requests, row)
	}
	p.ITLCount = len(itl)
	p.ITL = thin(itl, maxShardITL)
	return p
}

// Merged says a report was merged from the reports of a burst's shards.
type Merged struct {
	// Start is the instant the shards' arrival offsets counted from.
	Start  time.Time     `json:"start"`
	Shards []MergedShard `json:"shards"`
	// Approximate names figures that are not exact over the union, and why.
	Approximate []string `json:"approximate,omitempty"`
}

// MergedShard is one shard's report, as merged.
type MergedShard struct {
	Index           int    `json:"index"`
	ID              string `json:"id"`
	Host            string `json:"host"`
	Requests        int    `json:"requests"`
	Aborted         bool   `json:"aborted,omitempty"`
	ClientSaturated bool   `json:"client_saturated,omitempty"`
}

// String is "shard 1/3".
func (p *ShardPart) String() string { return fmt.Sprintf("shard %d/%d", p.Index, p.Count) }
