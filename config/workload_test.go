package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Validate fills in what follows from other fields, so a scenario built in
// Go (not decoded) comes out as a loaded one would.
func TestValidateFills(t *testing.T) {
	s := DefaultScenario
	s.PromptTokens = Distribution{Value: 300}
	s.Conversation = &Conversation{Turns: 3, ThinkTime: Duration(time.Second)}
	s.Quality = &Quality{Regex: "^ok"}
	var errs FieldErrors
	s.Validate("s", &errs)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if s.PromptTokens.Kind != DistFixed {
		t.Errorf("kind %q, want fixed", s.PromptTokens.Kind)
	}
	if f := s.Conversation.FollowupTokens; f.Kind != DistFixed || f.Value != 300 {
		t.Errorf("followup_tokens %+v, want the prompt's %+v", f, s.PromptTokens)
	}
	if re := s.Quality.Regexp(); re == nil || !re.MatchString("ok then") {
		t.Errorf("regexp %v", re)
	}

	d := DefaultScenario
	d.PromptDataset = &PromptDataset{File: "chats.jsonl"}
	d.Validate("d", &errs)
	if len(errs) > 0 || d.PromptDataset.Format != DatasetShareGPT {
		t.Errorf("dataset: format %q, errors %v", d.PromptDataset.Format, errs)
	}
}

// Problems are named at the path the caller gives, in the order a file is read.
func TestValidatePaths(t *testing.T) {
	two, minus := 3.0, -0.5
	s := DefaultScenario
	s.Prompt = "hi"
	s.SharedPrefixTokens = 4
	s.Sampling = Sampling{Temperature: &two, TopP: &minus}
	s.SLO.TTFT = Duration(time.Microsecond)
	s.SLO.TargetRatio = 1
	s.Quality = &Quality{}
	var errs FieldErrors
	s.Validate("scenarios[4]", &errs)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		"scenarios[4].shared_prefix_tokens: cannot be used with a literal prompt",
		"scenarios[4].sampling.temperature: 3 must be within [0, 2]",
		"scenarios[4].sampling.top_p: -0.5 must be within (0, 1]",
		"scenarios[4].slo.ttft: 1µs must be within [1ms, 1h]",
		"scenarios[4].slo.target_ratio: 1 must be within (0, 1), like 0.99",
		"scenarios[4].quality: sets no check: use contains, regex, exact, json or json_schema",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDistributionRange(t *testing.T) {
	for _, tc := range []struct {
		d        Distribution
		min, max int
	}{
		{Distribution{Kind: DistFixed, Value: 7}, 7, 7},
		{Distribution{Kind: DistUniform, Min: 3, Max: 9}, 3, 9},
		{Distribution{Kind: DistLognormal, Mean: 100, Sigma: 1}, 1, 1000},
		{Distribution{Kind: DistLognormal, Mean: 1 << 19, Sigma: 1}, 1, MaxTokens},
		{Distribution{Kind: DistLognormal, Mean: 100, Sigma: 1, Min: 20, Max: 200}, 20, 200},
		{Distribution{Kind: DistEmpirical, Values: [][]float64{{64, 1}, {8, 2}, {0, 5}, {512}}}, 8, 64},
	} {
		if lo, hi := tc.d.Minimum(), tc.d.Maximum(); lo != tc.min || hi != tc.max {
			t.Errorf("%+v: [%d, %d], want [%d, %d]", tc.d, lo, hi, tc.min, tc.max)
		}
	}
}

func TestSetDirectory(t *testing.T) {
	rel := Scenario{PromptDataset: &PromptDataset{File: "chats.jsonl"}}
	rel.SetDirectory("/etc/llmprobe")
	if want := filepath.Join("/etc/llmprobe", "chats.jsonl"); rel.PromptDataset.File != want {
		t.Errorf("relative file %q, want %q", rel.PromptDataset.File, want)
	}
	abs := Scenario{PromptDataset: &PromptDataset{File: "/data/chats.jsonl"}}
	abs.SetDirectory("/etc/llmprobe")
	if abs.PromptDataset.File != "/data/chats.jsonl" {
		t.Errorf("absolute file moved to %q", abs.PromptDataset.File)
	}
	var none Scenario
	none.SetDirectory("/etc/llmprobe") // no dataset: nothing to move, no panic
}

func TestObjectivesOrder(t *testing.T) {
	got := SLO{TTFTAnswer: Duration(time.Second), TTFT: Duration(time.Millisecond), Stall: Duration(time.Minute)}.Objectives()
	want := []Objective{{ObjectiveTTFT, time.Millisecond}, {ObjectiveStall, time.Minute}, {ObjectiveTTFTAnswer, time.Second}}
	if len(got) != len(want) {
		t.Fatalf("objectives %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("objective %d = %v, want %v", i, got[i], want[i])
		}
	}
}
