package config

import (
	"strings"
	"testing"
	"time"
)

func TestGoodConfig(t *testing.T) {
	cfg, err := LoadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Target("vllm-a")
	if a.API != APIChat || a.Timeout.Std() != 30*time.Second || a.InfoInterval.Std() != 5*time.Minute {
		t.Errorf("target vllm-a = %+v", a)
	}
	if e := a.EngineMetrics; e == nil || e.Family != EngineFamilyVLLM || e.Interval.Std() != 30*time.Second || e.Timeout.Std() != 5*time.Second {
		t.Errorf("vllm-a engine_metrics = %+v", e)
	}
	l, _ := cfg.Target("llamacpp")
	if e := l.EngineMetrics; e == nil || e.Family != EngineFamilyAuto || e.Interval.Std() != time.Minute {
		t.Errorf("llamacpp engine_metrics defaults not applied: %+v", e)
	}
	if l.API != APICompletions || l.Timeout.Std() != time.Minute || !l.HTTPClientConfig.FollowRedirects {
		t.Errorf("llamacpp defaults not applied: %+v", l)
	}
	s, _ := cfg.Scenario("short")
	if got := s.SLO.Objectives(); len(got) != 4 || got[0] != (Objective{Name: ObjectiveTTFT, Threshold: 500 * time.Millisecond}) {
		t.Errorf("objectives = %v", got)
	}
	lp, _ := cfg.Scenario("long-prefix")
	if lp.PromptTokens.Kind != DistLognormal || lp.OutputTokens.Kind != DistUniform || lp.SLO.TargetRatio != 0.99 {
		t.Errorf("long-prefix = %+v", lp)
	}
	if !Equal(s.PromptTokens, Distribution{Kind: DistFixed, Value: 128}) {
		t.Errorf("bare integer prompt_tokens = %+v", s.PromptTokens)
	}
	pairs := cfg.CanaryPairs()
	want := []Pair{
		{"vllm-a", "short", 15 * time.Second},
		{"vllm-a", "long-prefix", 15 * time.Second},
		{"vllm-a", "json-answer", 15 * time.Second},
		{"llamacpp", "short", time.Minute},
	}
	if len(pairs) != len(want) {
		t.Fatalf("pairs = %v, want %v", pairs, want)
	}
	for i := range want {
		if pairs[i] != want[i] {
			t.Errorf("pair %d = %v, want %v", i, pairs[i], want[i])
		}
	}
	if nb, _ := cfg.Burst("nightly"); nb.Schedule.OnEngineChange == nil || *nb.Schedule.OnEngineChange != (EngineChange{Settle: Duration(5 * time.Minute), MaxIncrease: 0.1}) {
		t.Errorf("nightly on_engine_change = %+v, want settle 5m and the default max_increase", nb.Schedule.OnEngineChange)
	}
	if got := cfg.Thresholds(ObjectiveTTFT); len(got) != 2 || got[0] != 0.5 || got[1] != 2 {
		t.Errorf("ttft thresholds = %v", got)
	}
}

func TestRedactedHidesSecrets(t *testing.T) {
	cfg, err := LoadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-header-secret", "sk-bearer-secret"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("redacted config shows %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(string(out), "<secret>") {
		t.Errorf("redacted config shows no <secret> marker:\n%s", out)
	}
	// The redacted form must still be a loadable shape (no lost fields).
	if !strings.Contains(string(out), "ignore_eos: true") {
		t.Errorf("extra_body lost:\n%s", out)
	}
}

// A check's problems come out located like config's own, after them and
// in one error; a check sees what was found before it, and what it
// completes is in the loaded configuration.
func TestChecks(t *testing.T) {
	yml := "targets: [{name: a, url: 'http://x:1'}]\nscenarios:\n  - name: s\n    prompt_tokens: 0\n  - name: t\n"
	var seen []string
	late := func(c *Config, found []*FieldError) []*FieldError {
		for _, fe := range found {
			seen = append(seen, fe.Path)
		}
		return []*FieldError{{Path: "scenarios[1].name", Msg: "refused by a check"}}
	}
	_, err := Parse([]byte(yml), "c.yml", late)
	want := "c.yml:4: scenarios[0].prompt_tokens.value: 0 must be within [1, 1048576] tokens\nc.yml:5: scenarios[1].name: refused by a check"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	if len(seen) != 1 || seen[0] != "scenarios[0].prompt_tokens.value" {
		t.Errorf("the check saw %v, want config's one problem", seen)
	}
	complete := func(c *Config, found []*FieldError) []*FieldError {
		c.Scenarios[0].Prompt = "completed"
		return nil
	}
	cfg, err := Parse([]byte("targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s}]\n"), "c.yml", complete)
	if err != nil || cfg.Scenarios[0].Prompt != "completed" {
		t.Fatalf("a completing check: %v, prompt %q", err, cfg.Scenarios[0].Prompt)
	}
}

// Limits left out keep their defaults, whether the block is absent, empty
// or sets some of them.
func TestLimitsDefaults(t *testing.T) {
	for _, block := range []string{"", "limits:\n", "limits: {}\n", "limits: {max_prompt_tokens: 20}\n"} {
		cfg, err := Parse([]byte("targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s, prompt_tokens: 8}]\n"+block), "c.yml")
		if err != nil {
			t.Fatalf("%q: %v", block, err)
		}
		want := DefaultLimits
		if block != "" && strings.Contains(block, "20") {
			want.MaxPromptTokens = 20
		}
		if cfg.Limits != want {
			t.Errorf("%q: limits %+v, want %+v", block, cfg.Limits, want)
		}
	}
}
