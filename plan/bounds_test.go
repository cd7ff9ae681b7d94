package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// A synthetic prompt's words past its nonce are one body per scenario: a
// 128k-token scenario costs its body once and each request in flight its
// nonce and buffers (and at most a short body's copy), so ten in flight fit the default limit, and one more
// request in flight costs no prompt.
func TestLongPromptFootprint(t *testing.T) {
	cfg, err := Parse([]byte(`
targets: [{name: a, url: "http://x:1"}]
scenarios:
  - {name: long, prompt_tokens: 131072, output_tokens: 256}
  - {name: prefixed, prompt_tokens: 131072, shared_prefix_tokens: 1000, output_tokens: 256}
bursts:
  - {name: b, target: a, scenarios: [{scenario: long}], arrival: {rate: 1}, requests: 100, max_concurrency: 10}
  - {name: c, target: a, scenarios: [{scenario: long}], arrival: {rate: 1}, requests: 100, max_concurrency: 11}
  - {name: p, target: a, scenarios: [{scenario: prefixed}], arrival: {rate: 1}, requests: 100, max_concurrency: 11}
`), "long.yml")
	if err != nil {
		t.Fatal(err)
	}
	ten, eleven, prefixed := cfg.Bursts[0].Footprint, cfg.Bursts[1].Footprint, cfg.Bursts[2].Footprint
	if ten.Bytes > int64(config.DefaultLimits.MaxBurstMemory) {
		t.Errorf("128k tokens × 10 in flight: %d bytes, past the default limit", ten.Bytes)
	}
	if want := int64(streamBytes + config.MaxInlineBody + nonceTokens*bytesPerWord); eleven.Bytes-ten.Bytes != want {
		t.Errorf("one more in flight costs %d bytes, want its buffers, a short body and its nonce (%d)", eleven.Bytes-ten.Bytes, want)
	}
	const body = 131072*bytesPerWord + 131072/64*bodyMarkBytes
	if ten.Bytes < body {
		t.Errorf("%d bytes do not hold the scenario's body (%d)", ten.Bytes, body)
	}
	// A shared prefix is the request's own text: copied per request.
	if d := prefixed.Bytes - eleven.Bytes; d != 11*1000*bytesPerWord {
		t.Errorf("a 1000-token shared prefix costs %d bytes more over 11 in flight, want %d", d, 11*1000*bytesPerWord)
	}
}

// Each bad file's first line is the error it must get; these are the
// traces' and the limits' own.
func TestBadConfigs(t *testing.T) {
	testkit.BadConfigs(t, "testdata/bad_*.yml", func(path string) error {
		_, err := File(path)
		return err
	})
}

// An empirical distribution's longest pair is held to
// limits.max_prompt_tokens.
func TestEmpiricalLongestPair(t *testing.T) {
	yml := "targets: [{name: a, url: 'http://x:1'}]\nlimits: {max_prompt_tokens: 1000}\n" +
		"scenarios:\n" +
		"  - name: s\n" +
		"    prompt_tokens: {distribution: empirical, values: [[100, 1], [2000, 1]]}\n" +
		"    shared_prefix_tokens: 10\n" +
		"    output_tokens: 16\n"
	_, err := Parse([]byte(yml), "cfg.yml")
	if want := "scenarios[0].prompt_tokens: prompts of up to 2000 tokens are past limits.max_prompt_tokens (1000)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error:\n  %v\nwant it to contain:\n  %s", err, want)
	}
}

// An override is held to the limits as the file is, and its error names
// the flags that put the burst past them.
func TestOverriddenPastTheLimit(t *testing.T) {
	p, err := Parse([]byte(`targets: [{name: a, url: "http://a:8000", model: m1}]
scenarios: [{name: s, prompt_tokens: 16, output_tokens: 4}]
bursts:
  - {name: release-check, target: a, scenarios: [{scenario: s}], arrival: {rate: 2}, requests: 20}
`), "t.yml")
	if err != nil {
		t.Fatal(err)
	}
	rate, d := 1000.0, 10*time.Hour
	_, err = p.Overridden("release-check", config.Override{Rate: &rate, Duration: &d})
	if want := "burst release-check with --rate=1000 --duration=10h0m0s: plans up to"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
}

// A run's expected size: arrivals at the mean rate (a trace's own count),
// each sending its scenario's turns, weighted by the mix.
func TestMeans(t *testing.T) {
	b := config.DefaultBurst
	b.Scenarios = []config.WeightedScenario{{Scenario: "one", Weight: 3}, {Scenario: "talk", Weight: 1}}
	b.Warmup.Requests, b.Duration = 5, config.Duration(10*time.Second)
	one, talk := config.Scenario{Name: "one"}, config.Scenario{Name: "talk", Conversation: &config.Conversation{Turns: 5}}
	pb := BurstOf(b, one, talk)
	if n := pb.meanArrivals(4); n != 45 {
		t.Errorf("5 warmup requests and 10 s at 4/s: %d arrivals, want 45", n)
	}
	if m := pb.meanTurns(); m != 2 {
		t.Errorf("3:1 of one turn and five: %g turns an arrival, want 2", m)
	}
	if m := (&Burst{}).meanTurns(); m != 1 {
		t.Errorf("an empty mix: %g turns, want 1", m)
	}
	pb.Arrival, pb.Trace = config.Arrival{Process: config.ArrivalTrace}, &TraceScan{Warmup: 2, Measured: 7}
	if n := pb.meanArrivals(4); n != 9 {
		t.Errorf("a trace of 2 + 7 records: %d arrivals, want 9", n)
	}
}

type clamps struct{ prompt, output int }

func (c *clamps) Replaying(string, string, float64) {}
func (c *clamps) Skipped(error)                     {}
func (c *clamps) Stopped(error)                     {}
func (c *clamps) Clamped(prompt, output bool) {
	if prompt {
		c.prompt++
	}
	if output {
		c.output++
	}
}

// A trace arrival asks for its own lengths within the scenario's maxima,
// at least 1 each, and its shared blocks leave room for the nonce.
func TestTraceLengths(t *testing.T) {
	s := config.Scenario{Name: "s", PromptTokens: config.Distribution{Kind: config.DistFixed, Value: 2000}, OutputTokens: config.Distribution{Kind: config.DistFixed, Value: 100}}
	b := BurstOf(config.Burst{Scenarios: []config.WeightedScenario{{Scenario: "s", Weight: 1}}}, s)
	var c clamps
	for _, tc := range []struct {
		a                      Arrival
		prompt, output, prefix int
	}{
		{Arrival{Input: 700, Output: 20}, 700, 20, 0},
		{Arrival{Input: 5000, Output: 500}, 2000, 100, 0},
		{Arrival{Input: 0, Output: 0}, 1, 1, 0},
		{Arrival{Input: 1100, Output: 5, Blocks: packBlocks([]int64{7, 8})}, 1100, 5, 1024},
		{Arrival{Input: 600, Output: 5, Blocks: packBlocks([]int64{7, 8})}, 600, 5, 595},
	} {
		p, o, x := b.TraceLengths(tc.a, &c)
		if p != tc.prompt || o != tc.output || x != tc.prefix {
			t.Errorf("%+v: %d, %d, prefix %d; want %d, %d, %d", tc.a, p, o, x, tc.prompt, tc.output, tc.prefix)
		}
	}
	if c != (clamps{1, 1}) {
		t.Errorf("clamps told: %+v, want one prompt and one output", c)
	}
}
