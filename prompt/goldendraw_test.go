package prompt_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func goldenScenario(t *testing.T) *plan.Scenario {
	t.Helper()
	p, err := plan.File("testdata/good_golden.yml")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.Scenario("golden")
	return s
}

// Each request draws a golden line by the seed, as datasets are sampled:
// one seed gives one sequence, every line is drawn, the nonce leads the
// first message, and a messages line goes as its messages.
func TestGoldenPrompts(t *testing.T) {
	s := goldenScenario(t)
	lineOf := func(p prompt.Prompt) int {
		if p.Golden == nil {
			t.Fatalf("prompt %q carries no golden line", p.Text)
		}
		return p.Golden.Line
	}
	seqOf := func(seed uint64) []int {
		b := s.Builder(seed)
		var out []int
		for i := range 50 {
			p, _ := b.At(uint64(i))
			out = append(out, lineOf(p))
		}
		return out
	}
	if a, b := seqOf(4), seqOf(4); !slices.Equal(a, b) {
		t.Error("one seed gave two sequences of golden lines")
	}
	if a, b := seqOf(4), seqOf(5); slices.Equal(a, b) {
		t.Error("two seeds gave one sequence of golden lines")
	}
	b := s.Builder(9)
	drawn, nonces := map[int]int{}, map[string]bool{}
	const n = 2500
	for i := range n {
		p, maxTokens := b.At(uint64(i))
		l := p.Golden
		first := p.Text // the message the nonce leads
		if len(p.History) > 0 {
			first = p.History[0].Content
		}
		head, rest, ok := strings.Cut(first, "\n")
		switch {
		case !ok || !strings.HasPrefix(head, "ref:"):
			t.Fatalf("prompt %q does not start with a nonce line", first)
		case nonces[head]:
			t.Fatalf("nonce %q repeated: prompts would share a cached prefix", head)
		case maxTokens != 32:
			t.Fatalf("max_tokens %d, want output_tokens 32", maxTokens)
		case !p.Estimated || p.RequestedTokens != prompt.EstimateTokens(head+"\n")+l.Tokens:
			t.Fatalf("requested tokens %d, want the line's estimate %d and the nonce line's", p.RequestedTokens, l.Tokens)
		case l.Prompt != "" && (rest != l.Prompt || len(p.History) != 0):
			t.Fatalf("line %d sent as %q with %d earlier messages, want its prompt whole", l.Line, rest, len(p.History))
		case l.Messages != nil && (len(p.History) != 1 || p.History[0].Role != "system" || rest != l.Messages[0].Content || p.Text != l.Messages[1].Content):
			t.Fatalf("line %d sent as %+v then %q, want its system message (after the nonce), then its user message", l.Line, p.History, p.Text)
		}
		nonces[head] = true
		drawn[l.Line]++
	}
	// Five lines, 500 draws each on average: each within a wide margin.
	for _, l := range s.Source.Golden {
		if c := drawn[l.Line]; c < 380 || c > 620 {
			t.Errorf("line %d drawn %d times of %d, want about %d", l.Line, c, n, n/len(s.Source.Golden))
		}
	}
}

// Against the sim answering from the same golden set, every API's answers
// pass their lines' checks; with every golden prompt answered wrong, each
// fails with the line that failed and why, and is not good.
func TestGoldenAgainstSim(t *testing.T) {
	s := goldenScenario(t)
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 8} // the sim's 10 ms a token
	for _, wrong := range []float64{0, 1} {
		srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Golden, c.GoldenWrongRate = "testdata/golden_good.jsonl", wrong })
		b := s.Builder(3)
		for _, api := range []config.API{config.APIChat, config.APICompletions, config.APIResponses} {
			c, err := prober.NewClient(testkit.Target(srv.URL, api))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for i := 0; len(seen) < len(s.Source.Golden); i++ {
				if i > 200 {
					t.Fatalf("%s: 200 requests drew lines %v only", api, seen)
				}
				p, maxTokens := b.At(uint64(i))
				seen[p.Golden.Line] = true
				res := c.Do(context.Background(), prober.Request{Scenario: s.Scenario, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
				if res.Outcome != prober.OutcomeSuccess || res.Quality == nil {
					t.Fatalf("%s: line %d: outcome %s (%s), quality %+v", api, p.Golden.Line, res.Outcome, res.FailureText(), res.Quality)
				}
				answered := p.Golden.Answer != "" // the sim answers the lines with an answer
				switch {
				case wrong == 0 || !answered:
					if !res.Quality.Passed || !res.Good {
						t.Errorf("%s: line %d answered %q: quality %+v, good %v", api, p.Golden.Line, res.Answer, res.Quality, res.Good)
					}
				case res.Quality.Passed || res.Good || !strings.HasPrefix(res.Quality.Reason, p.Golden.Name()+": answer "):
					t.Errorf("%s: line %d answered %q wrongly: quality %+v, good %v", api, p.Golden.Line, res.Answer, res.Quality, res.Good)
				}
				stopped := res.FinishReason == "stop" || (api == config.APIResponses && res.FinishReason == "completed")
				if answered && wrong == 0 && (!stopped || strings.TrimSpace(res.Answer) != p.Golden.Answer) {
					t.Fatalf("%s: line %d answered %q (finish %q), want its reference answer %q, stopped", api, p.Golden.Line, res.Answer, res.FinishReason, p.Golden.Answer)
				}
			}
		}
	}
}

// A server's answers that break a golden line's checks each fail with the
// line and the check that failed: a schema violation names its path, an
// answer that is no JSON says so, an answer cut at max_tokens misses what
// came after the cut. The request succeeded; it is not good.
func TestGoldenHostileAnswers(t *testing.T) {
	s := goldenScenario(t)
	b := s.Builder(1)
	promptOf := func(line int) (prompt.Prompt, int) {
		for i := range 500 {
			if p, maxTokens := b.At(uint64(i)); p.Golden.Line == line {
				return p, maxTokens
			}
		}
		t.Fatalf("no draw of line %d", line)
		return prompt.Prompt{}, 0
	}
	for _, tc := range []struct {
		name   string
		line   int
		chunks []string
		finish string
		reason string
	}{
		{"schema violation", 3, []string{`{"ok":`, ` false}`}, "stop", `golden line 3 (json-ok): answer does not match the schema at /ok: value must be true`},
		{"not JSON", 3, []string{"Sure! Here", " it is."}, "stop", `golden line 3 (json-ok): answer is not valid JSON`},
		{"cut at max_tokens", 1, []string{"The", " capital", " of"}, "length", `golden line 1 (capital-fr): answer does not contain "Paris"`},
		{"wrong exact", 4, []string{"Blue", " sky"}, "stop", `golden line 4: answer is not exactly "blue"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				testkit.EventStream(w)
				for _, c := range tc.chunks {
					fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":%q,\"finish_reason\":null}]}\n\n", c)
				}
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":%q}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", tc.finish, len(tc.chunks), 9+len(tc.chunks))
			})
			target := testkit.Target(srv.URL, config.APICompletions)
			target.Model = "m"
			c, err := prober.NewClient(target)
			if err != nil {
				t.Fatal(err)
			}
			p, maxTokens := promptOf(tc.line)
			res := c.Do(context.Background(), prober.Request{Scenario: s.Scenario, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
			if res.Outcome != prober.OutcomeSuccess || res.Good || res.Quality == nil || res.Quality.Passed || res.Quality.Reason != tc.reason {
				t.Errorf("outcome %s (%s), good %v, quality %+v; want success, not good, %q", res.Outcome, res.FailureText(), res.Good, res.Quality, tc.reason)
			}
		})
	}
}
