package prober

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func embeddingsScenario(inputs int) config.Scenario {
	s := testkit.Scenario()
	s.Inputs = inputs
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 32}
	s.SLO.E2E = config.Duration(5 * time.Second)
	return s
}

// Against the sim: e2e, the inputs' tokens and the vectors' dimension are
// measured; TTFT, ITL and TPOT are n/a (unset), never a measured 0.
func TestEmbeddingsAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIEmbeddings), embeddingsScenario(4))
	if res.Outcome != OutcomeSuccess || !res.Good {
		t.Fatalf("%s %s (good %v)\n%s", res.Outcome, res.Error, res.Good, logOf(res))
	}
	if res.Inputs != 4 || res.Dimension != sim.EmbeddingDimension {
		t.Errorf("%d vectors of %d dimensions, want 4 of %d", res.Inputs, res.Dimension, sim.EmbeddingDimension)
	}
	// Each input is the 32-token prompt after its number.
	if res.PromptTokensRequested != 4*32 || res.PromptTokensReported < 4*32 || res.PromptTokensReported > 4*34 {
		t.Errorf("prompt tokens requested %d, reported %d; want 128 and about 4 × 33", res.PromptTokensRequested, res.PromptTokensReported)
	}
	if res.E2E <= 0 || res.FirstTokenSeen() || res.TTFT != 0 || res.TPOT != 0 || res.ITL != nil || res.OutputTokens != 0 || res.TTFTParts != nil {
		t.Errorf("e2e %s; want TTFT, TPOT, ITL, output tokens and the TTFT split unset, got %s, %s, %v, %d, %v", res.E2E, res.TTFT, res.TPOT, res.ITL, res.OutputTokens, res.TTFTParts)
	}
	if len(res.Checks) != 1 || res.Checks[0].Objective != config.ObjectiveE2E || !res.Checks[0].Met {
		t.Errorf("checks %+v, want e2e met", res.Checks)
	}
	if !strings.Contains(logOf(res), "4 vectors of 384 dimensions") {
		t.Errorf("log lacks the vectors:\n%s", logOf(res))
	}
}

// Every input of a request is different, and so is every request's.
func TestEmbeddingsInputsUnique(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m" || r.URL.Path != (embeddings{}).path(dialect{}) {
			http.Error(w, fmt.Sprintf("%s %+v %v", r.URL.Path, req, err), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, in := range req.Input {
			if seen[in] {
				http.Error(w, "repeated input "+in, http.StatusBadRequest)
			}
			seen[in] = true
		}
		mu.Unlock()
		fmt.Fprint(w, answerOf(len(req.Input), 2))
	})
	c := newClient(t, testkit.Target(srv.URL, config.APIEmbeddings))
	s := embeddingsScenario(3)
	b := prompt.NewBuilder(s, prompt.Source{}, 1)
	for i := range 2 {
		p, _ := b.Next()
		res := c.Do(t.Context(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, Sched: time.Now()})
		if res.Outcome != OutcomeSuccess {
			t.Fatalf("request %d: %s %s", i, res.Outcome, res.Error)
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct inputs in 2 requests of 3, want 6", len(seen))
	}
}

// answerOf is an answer of n vectors of dim dimensions.
func answerOf(n, dim int) string {
	data := make([]string, n)
	for i := range data {
		data[i] = fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s0.5]}`, i, strings.Repeat("0.25,", dim-1))
	}
	return `{"object":"list","data":[` + strings.Join(data, ",") + `],"usage":{"prompt_tokens":7,"total_tokens":7}}`
}

func base64Of(v ...float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Hostile servers: each broken answer fails with its reason in words.
func TestEmbeddingsHostile(t *testing.T) {
	cases := []struct {
		name, body, reason, in string
	}{
		{"wrong count", answerOf(2, 3), reasonEmbeddingsCount, "2 of 4 vectors"},
		{"ragged", strings.Replace(answerOf(4, 3), "[0.25,0.25,0.5]", "[0.25,0.5]", 1), reasonEmbeddingsDimension, "dimensions 2 and 3"},
		{"null", strings.Replace(answerOf(4, 3), `0,"embedding":[0.25,0.25`, `0,"embedding":[0.25,null`, 1), reasonEmbeddingsNotFinite, "null at data[0].embedding[1]"},
		{"NaN as a string", strings.Replace(answerOf(4, 3), `1,"embedding":[0.25`, `1,"embedding":["NaN"`, 1), reasonEmbeddingsNotFinite, `"NaN" at data[1].embedding[0]`},
		{"huge exponent", strings.Replace(answerOf(4, 3), `3,"embedding":[0.25,0.25,0.5]`, `3,"embedding":[0.25,0.25,1e999]`, 1), reasonEmbeddingsNotFinite, "1e999 at data[3].embedding[2]"},
		{"bare NaN", strings.Replace(answerOf(4, 3), "0.5]", "NaN]", 1), reasonEmbeddingsNotJSON, "invalid character 'N'"},
		{"empty vector", strings.Replace(answerOf(4, 3), "[0.25,0.25,0.5]", "[]", 4), reasonEmbeddingsDimension, "data[0].embedding is empty"},
		{"no array", strings.Replace(answerOf(4, 3), "[0.25,0.25,0.5]", "{}", 1), reasonEmbeddingsNotJSON, "data[0].embedding is no array of numbers"},
		{"base64 NaN", fmt.Sprintf(`{"data":[{"embedding":%q},{"embedding":%q},{"embedding":%q},{"embedding":%q}]}`,
			base64Of(1, 2), base64Of(1, 2), base64Of(1, float32(math.NaN())), base64Of(1, 2)), reasonEmbeddingsNotFinite, "NaN at data[2].embedding[1]"},
		{"chat answer", `{"choices":[{"message":{"content":"hi"}}]}`, reasonEmbeddingsCount, "0 of 4 vectors"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tc.body)
			})
			res := probeOnce(t, testkit.Target(srv.URL, config.APIEmbeddings), embeddingsScenario(4))
			if res.Outcome != OutcomeStreamError || res.Phase != phaseStream || res.Reason != tc.reason || !strings.Contains(res.Error, tc.in) || res.Good {
				t.Errorf("%s %s [%s] good %v; want stream_error [%s] with %q", res.Outcome, res.Error, res.Reason, res.Good, tc.reason, tc.in)
			}
			if res.E2E <= 0 || res.FirstTokenSeen() || res.Inputs != 0 {
				t.Errorf("e2e %s, first token %v, inputs %d", res.E2E, res.FirstTokenSeen(), res.Inputs)
			}
		})
	}
}

// base64 vectors (encoding_format: base64 in extra_body) decode as float32s.
func TestEmbeddingsBase64(t *testing.T) {
	srv := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req["encoding_format"] != "base64" {
			http.Error(w, "want base64", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"data":[{"embedding":%q},{"embedding":%q}],"usage":{"prompt_tokens":9}}`, base64Of(1, 2, 3), base64Of(-1, 0, 1))
	})
	target := testkit.Target(srv.URL, config.APIEmbeddings)
	target.ExtraBody = map[string]any{"encoding_format": "base64"}
	res := probeOnce(t, target, embeddingsScenario(2))
	if res.Outcome != OutcomeSuccess || res.Inputs != 2 || res.Dimension != 3 || res.PromptTokensReported != 9 {
		t.Errorf("%s %s: %d vectors of %d, %d tokens; want 2 of 3, 9 tokens", res.Outcome, res.Error, res.Inputs, res.Dimension, res.PromptTokensReported)
	}
}
