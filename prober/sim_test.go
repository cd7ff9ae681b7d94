package prober

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Against the sim's known schedule (TTFT 50 ms, then 10 ms per token) the
// measured TTFT, TPOT and ITL agree within 5 ms at the median. Medians, so a
// loaded CI machine's one slow request doesn't fail the test.
func TestMeasurementsMatchSimSchedule(t *testing.T) {
	for _, api := range []config.API{config.APIChat, config.APICompletions} {
		t.Run(string(api), func(t *testing.T) {
			srv, _ := testkit.StartSim(t, nil)
			s := testkit.Scenario()
			s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 20}
			var ttft, tpot, itl []time.Duration
			for range 7 {
				res := probeOnce(t, testkit.Target(srv.URL, api), s)
				if res.Outcome != OutcomeSuccess || res.OutputTokens != 20 || res.TokenSource != TokensFromUsage {
					t.Fatalf("%s %s: %d tokens from %s\n%s", res.Outcome, res.Error, res.OutputTokens, res.TokenSource, logOf(res))
				}
				ttft = append(ttft, res.TTFT)
				tpot = append(tpot, res.TPOT)
				itl = append(itl, res.ITL...)
			}
			const tol = 5 * time.Millisecond
			if m := median(ttft); !within(m, 50*time.Millisecond, tol) {
				t.Errorf("median TTFT = %s, want 50ms ± %s", m, tol)
			}
			if m := median(tpot); !within(m, 10*time.Millisecond, tol) {
				t.Errorf("median TPOT = %s, want 10ms ± %s", m, tol)
			}
			if m := median(itl); !within(m, 10*time.Millisecond, tol) {
				t.Errorf("median ITL = %s, want 10ms ± %s", m, tol)
			}
		})
	}
}

// The sim's fault modes, seen through the prober.
func TestSimFramings(t *testing.T) {
	cases := []struct {
		name   string
		faults sim.Faults
		extra  map[string]any
		check  func(t *testing.T, r *Result)
	}{
		{"role-only first chunk is not the first token", sim.Faults{RoleOnlyFirstChunk: true}, nil, func(t *testing.T, r *Result) {
			if r.TTFT < 45*time.Millisecond {
				t.Errorf("TTFT = %s: the role-only chunk, sent at once, was taken as the first token", r.TTFT)
			}
		}},
		{"reasoning deltas are output", sim.Faults{ReasoningTokens: 4}, nil, func(t *testing.T, r *Result) {
			if r.OutputChunks != 8 || r.OutputTokens != 8 {
				t.Errorf("chunks %d, tokens %d; want 8 and 8 with reasoning counted", r.OutputChunks, r.OutputTokens)
			}
		}},
		{"4 tokens per chunk give per-token ITL", sim.Faults{TokensPerChunk: 4}, nil, func(t *testing.T, r *Result) {
			if r.OutputChunks != 2 || len(r.ITL) != 7 {
				t.Fatalf("chunks %d, ITL samples %d; want 2 and 7", r.OutputChunks, len(r.ITL))
			}
			// The 4-token gap of ~40 ms is four samples of ~10 ms.
			if m := median(r.ITL); !within(m, 10*time.Millisecond, 5*time.Millisecond) {
				t.Errorf("median ITL = %s, want ~10ms", m)
			}
		}},
		{"running usage gives exact per-chunk counts", sim.Faults{TokensPerChunk: 3},
			map[string]any{"stream_options": map[string]any{"continuous_usage_stats": true}}, func(t *testing.T, r *Result) {
				// Chunks carry 3, 3 and 2 tokens; the first chunk's extra tokens
				// arrived with the first token and add no ITL samples.
				if r.OutputTokens != 8 || len(r.ITL) != 5 {
					t.Errorf("tokens %d, ITL samples %d; want 8 and 5", r.OutputTokens, len(r.ITL))
				}
				if m := median(r.ITL); !within(m, 10*time.Millisecond, 5*time.Millisecond) {
					t.Errorf("median ITL = %s, want ~10ms", m)
				}
			}},
		{"usage on the finish chunk", sim.Faults{UsagePlacement: sim.UsageFinish}, nil, func(t *testing.T, r *Result) {
			if r.TokenSource != TokensFromUsage || r.OutputTokens != 8 || r.PromptTokensReported == 0 {
				t.Errorf("tokens %d from %s, prompt %d", r.OutputTokens, r.TokenSource, r.PromptTokensReported)
			}
		}},
		{"zeroed usage on every chunk then the real one", sim.Faults{ZeroedUsage: true}, nil, func(t *testing.T, r *Result) {
			if r.TokenSource != TokensFromUsage || r.OutputTokens != 8 {
				t.Errorf("tokens %d from %s", r.OutputTokens, r.TokenSource)
			}
		}},
		{"no usage falls back to chunks", sim.Faults{UsagePlacement: sim.UsageNone, TokensPerChunk: 2}, nil, func(t *testing.T, r *Result) {
			if r.TokenSource != TokensFromChunks || r.OutputTokens != 4 {
				t.Errorf("tokens %d from %s; want 4 from chunks (the fallback undercounts multi-token chunks, and says so)", r.OutputTokens, r.TokenSource)
			}
		}},
		{"stall", sim.Faults{StallRate: 1, StallAfterTokens: 3, StallDuration: 150 * time.Millisecond}, nil, func(t *testing.T, r *Result) {
			if r.MaxGap < 140*time.Millisecond {
				t.Errorf("max gap = %s, want the 150ms stall", r.MaxGap)
			}
		}},
		{"mid-stream disconnect", sim.Faults{DisconnectRate: 1, DisconnectAfterTokens: 3}, nil, func(t *testing.T, r *Result) {
			if r.Outcome != OutcomeStreamError {
				t.Errorf("outcome = %s (%s), want stream_error", r.Outcome, r.Error)
			}
		}},
		{"malformed chunk", sim.Faults{MalformedRate: 1, MalformedAfterTokens: 2}, nil, func(t *testing.T, r *Result) {
			if r.Outcome != OutcomeStreamError {
				t.Errorf("outcome = %s (%s), want stream_error", r.Outcome, r.Error)
			}
		}},
		{"error status", sim.Faults{ErrorRate: 1, ErrorStatus: 503}, nil, func(t *testing.T, r *Result) {
			if r.Outcome != OutcomeRejected {
				t.Errorf("outcome = %s, want rejected", r.Outcome)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults = tc.faults })
			target := testkit.Target(srv.URL, config.APIChat)
			target.ExtraBody = tc.extra
			s := testkit.Scenario()
			s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 8}
			res := probeOnce(t, target, s)
			if res.Outcome != OutcomeSuccess && tc.faults.ErrorRate == 0 && tc.faults.DisconnectRate == 0 && tc.faults.MalformedRate == 0 {
				t.Fatalf("%s: %s\n%s", res.Outcome, res.Error, logOf(res))
			}
			tc.check(t, res)
		})
	}
}

func TestTargetInfoFromSim(t *testing.T) {
	srv, e := testkit.StartSim(t, nil)
	target := testkit.Target(srv.URL, config.APIChat)
	target.Model = ""
	c := newClient(t, target)
	info := c.RefreshInfo(t.Context())
	if info.Engine != "llmprobe-sim" || info.EngineVersion != "0.1.0" || c.Model() != "m" {
		t.Errorf("info = %+v, model %q", info, c.Model())
	}
	e.SetVersion("0.2.0")
	if info := c.RefreshInfo(t.Context()); info.EngineVersion != "0.2.0" {
		t.Errorf("after the upgrade: %+v", info)
	}
}

// httptrace's view of a request: a new connection, then a reused one; the
// time to first byte; the certificate's expiry over TLS.
func TestTimings(t *testing.T) {
	e, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewTLSServer(e.Handler())
	defer srv.Close()
	target := testkit.Target(srv.URL, config.APIChat)
	target.Model = "sim-model"
	target.HTTPClientConfig.TLSConfig.InsecureSkipVerify = true
	c := newClient(t, target)
	s := testkit.Scenario()
	var results []*Result
	for range 2 {
		p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
		results = append(results, c.Do(t.Context(), Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()}))
	}
	first, second := results[0].Timings, results[1].Timings
	if results[0].Outcome != OutcomeSuccess || first.ConnReused || first.Connect <= 0 || first.TLS <= 0 {
		t.Errorf("first request (%s): %+v; want a new connection with connect and TLS times", results[0].Outcome, first)
	}
	if !second.ConnReused || second.Connect != 0 || second.TLS != 0 {
		t.Errorf("second request: %+v; want the connection reused", second)
	}
	if !first.CertExpiry.Equal(srv.Certificate().NotAfter) {
		t.Errorf("certificate expiry %s, want %s", first.CertExpiry, srv.Certificate().NotAfter)
	}
	for _, r := range results {
		if r.Timings.TTFB <= 0 || r.Timings.TTFB > r.TTFT || r.Timings.FirstByte <= 0 {
			t.Errorf("TTFB %s, first byte after the request %s, TTFT %s", r.Timings.TTFB, r.Timings.FirstByte, r.TTFT)
		}
	}
}

// A reasoning model on the sim: the first 8 of 20 tokens are reasoning_content,
// so the first answer token comes 8 decode steps (10 ms each) after the first
// reasoning token; the counts come exactly from the sim's usage.
func TestReasoningAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.ReasoningTokens = 8 })
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 20}
	s.SLO.TTFT = config.Duration(time.Hour)
	s.SLO.TTFTAnswer = config.Duration(time.Millisecond) // past TTFT by 80 ms of reasoning: missed
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), s)
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
	}
	if res.ReasoningTokens != 8 || res.AnswerTokens != 12 || res.ReasoningSource != TokensFromUsage || res.OutputTokens != 20 {
		t.Errorf("reasoning %d + answer %d of %d, from %q; want 8 + 12 of 20 from usage", res.ReasoningTokens, res.AnswerTokens, res.OutputTokens, res.ReasoningSource)
	}
	if res.TTFTReasoning != res.TTFT {
		t.Errorf("first reasoning token at %s, TTFT %s: reasoning is the first output", res.TTFTReasoning, res.TTFT)
	}
	// 8 decode steps of 10 ms; wide margins for a loaded machine.
	if d := res.TTFTAnswer - res.TTFTReasoning; d < 60*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("first answer token %s after the first reasoning token, want ~80ms", d)
	}
	if len(res.Checks) != 2 || !res.Checks[0].Met || res.Checks[1].Objective != config.ObjectiveTTFTAnswer || res.Checks[1].Met || res.Good {
		t.Errorf("checks %+v good %v: want ttft met, ttft_answer missed, not good", res.Checks, res.Good)
	}

	// Without reasoning the first answer token is the first token, and no split.
	plain := probeOnce(t, testkit.Target(srv.URL, config.APICompletions), s)
	if plain.Outcome != OutcomeSuccess || plain.Reasoned() || plain.TTFTReasoning != 0 || plain.TTFTAnswer != plain.TTFT || plain.ReasoningSource != "" {
		t.Errorf("completions: %s reasoned %v, reasoning at %s, answer at %s, TTFT %s", plain.Outcome, plain.Reasoned(), plain.TTFTReasoning, plain.TTFTAnswer, plain.TTFT)
	}
}
