package prompt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
)

func datasetScenario(t *testing.T) *plan.Scenario {
	t.Helper()
	p, err := plan.File("testdata/good_dataset.yml")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.Scenario("sharegpt")
	return s
}

// Each prompt is a nonce line, then one dataset prompt whole; the seed picks
// which, every prompt is drawn, and no two requests share a nonce.
func TestDatasetPrompts(t *testing.T) {
	s := datasetScenario(t)
	texts := map[string]prompt.DatasetPrompt{}
	for _, p := range s.Source.Dataset {
		texts[p.Text] = p
	}
	seqOf := func(seed uint64) []string {
		b := s.Builder(seed)
		var out []string
		for range 20 {
			p, _ := b.Next()
			out = append(out, p.Text)
		}
		return out
	}
	if a, b := seqOf(4), seqOf(4); !slices.Equal(a, b) {
		t.Error("one seed gave two sequences")
	}
	b := s.Builder(9)
	drawn, nonces := map[string]int{}, map[string]bool{}
	const n = 3000
	for i := range n {
		p, maxTokens := b.At(uint64(i))
		head, text, ok := strings.Cut(p.Text, "\n")
		dp, known := texts[text]
		switch {
		case !ok || !strings.HasPrefix(head, "ref:"):
			t.Fatalf("prompt %q does not start with a nonce line", p.Text)
		case !known:
			t.Fatalf("prompt %q is no dataset prompt", text)
		case nonces[head]:
			t.Fatalf("nonce %q repeated: prompts would share a cached prefix", head)
		case !p.Estimated || p.RequestedTokens != prompt.EstimateTokens(head+"\n")+dp.Tokens:
			t.Fatalf("requested tokens %d (estimated %v), want the estimate %d + the nonce line's", p.RequestedTokens, p.Estimated, dp.Tokens)
		case maxTokens != 64 && maxTokens != 256:
			t.Fatalf("max_tokens %d is no configured length", maxTokens)
		}
		nonces[head] = true
		drawn[text]++
	}
	// Six prompts, 500 draws each on average: each within a wide margin.
	for text := range texts {
		if c := drawn[text]; c < 350 || c > 650 {
			t.Errorf("prompt %.30q drawn %d times of %d, want about %d", text, c, n, n/len(texts))
		}
	}
}

// Against the simulated engine, the request carries the dataset's text as
// written, the prompt length is the server's count, and the quality check
// judges the answer to it.
func TestDatasetAgainstSim(t *testing.T) {
	_, eng := testkit.StartSim(t, nil)
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		eng.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	s := datasetScenario(t)
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 3} // the sim's 10 ms a token
	b := s.Builder(1)
	for _, api := range []config.API{config.APIChat, config.APICompletions} {
		c, err := prober.NewClient(testkit.Target(srv.URL, api))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			p, maxTokens := b.At(uint64(i))
			res := c.Do(context.Background(), prober.Request{Scenario: s.Scenario, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
			if res.Outcome != prober.OutcomeSuccess || res.Quality == nil || !res.Good {
				t.Fatalf("%s: outcome %s (%s), quality %+v, good %v", api, res.Outcome, res.FailureText(), res.Quality, res.Good)
			}
			mu.Lock()
			body := bodies[len(bodies)-1]
			mu.Unlock()
			var req struct {
				Prompt   string `json:"prompt"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			sent := req.Prompt
			if api == config.APIChat {
				sent = req.Messages[len(req.Messages)-1].Content
			}
			if sent != p.Text {
				t.Fatalf("%s: sent %q, want the prompt %q", api, sent, p.Text)
			}
			// The sim counts words (plus a chat template): the reported
			// length is the server's, the estimate only what was asked.
			words := len(strings.Fields(p.Text))
			if api == config.APIChat {
				words += 4
			}
			if res.PromptTokensReported != words || res.PromptTokensRequested != p.RequestedTokens {
				t.Errorf("%s: prompt tokens reported %d (want the server's %d), requested %d (want %d)", api, res.PromptTokensReported, words, res.PromptTokensRequested, p.RequestedTokens)
			}
		}
	}
}

// Each bad file's first line is the error it must get: the datasets' own,
// and a dataset's longest prompt held to the limits.
func TestBadConfigs(t *testing.T) {
	testkit.BadConfigs(t, "testdata/bad_*.yml", func(path string) error {
		_, err := plan.File(path)
		return err
	})
}
