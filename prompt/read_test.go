package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

func TestDatasetGood(t *testing.T) {
	cfg, err := config.LoadFile("testdata/good_dataset.yml", CheckDatasets)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cfg.Scenario("sharegpt")
	d := s.PromptDataset
	if d.Format != config.DatasetShareGPT || d.File != filepath.Join("testdata", "sharegpt_sample.jsonl") {
		t.Errorf("dataset = %s, %s", d.Format, d.File)
	}
	// Lines 3 and 6 have no human turn and line 4 is blank: six prompts, each
	// the first human turn of its conversation, whole.
	want := []struct {
		line   int
		prefix string
	}{{1, "Write a haiku"}, {2, "Explain in two sentences"}, {3, "List three prime"}, {7, "Traduis en français"}, {8, "用一句话"}, {9, `Reply with the JSON object {"ok": true}`}}
	if len(read[s.Name].Dataset) != len(want) {
		t.Fatalf("%d prompts, want %d: %+v", len(read[s.Name].Dataset), len(want), read[s.Name].Dataset)
	}
	for i, w := range want {
		p := read[s.Name].Dataset[i]
		if p.Line != w.line || !strings.HasPrefix(p.Text, w.prefix) || p.Tokens != EstimateTokens(p.Text) {
			t.Errorf("prompt %d = %+v, want line %d starting %q", i, p, w.line, w.prefix)
		}
	}
	if strings.Contains(read[s.Name].Dataset[1].Text, "why would it not help") {
		t.Error("a later human turn was kept")
	}
	shownAsFile(t, cfg, "haiku", "testdata/sharegpt_sample.jsonl", CheckDatasets)
}

// shownAsFile holds /config to showing the file cfg names, not the text
// read from it (hidden), and to loading back the same with check.
func shownAsFile(t *testing.T, cfg *config.Config, hidden, file string, check config.Check) {
	t.Helper()
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), hidden) || !strings.Contains(string(out), "file: "+file) {
		t.Errorf("/config shows what the file holds or hides the file:\n%s", out)
	}
	before := read
	again, err := config.Parse(out, "redacted.yml", check)
	if err != nil || !config.Equal(cfg.Scenarios, again.Scenarios) || !config.Equal(before, read) {
		t.Errorf("the rendered configuration does not load back the same: %v", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"one", 2},                       // 1.3 for one word, rounded up
		{"the quick brown fox jumps", 7}, // 5 words × 1.3 = 6.5
		{strings.Repeat("x", 400), 100},  // one word of 400 bytes: bytes ÷ 4
		{"用一句话解释什么是注意力机制。", 12},          // 15 characters, 45 bytes
	} {
		if got := EstimateTokens(tc.text); got != tc.want {
			t.Errorf("EstimateTokens(%.20q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// loadWritten writes file name in dir with write, and loads a
// configuration whose one scenario names it under key (prompt_dataset or
// golden).
func loadWritten(t *testing.T, dir, name, key string, check config.Check, write func(f *os.File)) (*config.Config, error) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	write(f)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf("targets: [{name: a, url: 'http://x:1'}]\nscenarios:\n  - name: s\n    %s: {file: %s}\n", key, f.Name())
	return config.Parse([]byte(yml), "cfg.yml", check)
}

func TestDatasetBounds(t *testing.T) {
	dir := t.TempDir()
	load := func(t *testing.T, name string, write func(f *os.File)) error {
		t.Helper()
		cfg, err := loadWritten(t, dir, name, "prompt_dataset", CheckDatasets, write)
		if err == nil && len(read[cfg.Scenarios[0].Name].Dataset) == 0 {
			t.Fatal("loaded with no prompts")
		}
		if err == nil {
			t.Logf("kept %d prompts", len(read[cfg.Scenarios[0].Name].Dataset))
		}
		return err
	}
	line := func(text string) string {
		return fmt.Sprintf(`{"conversations": [{"from": "human", "value": %q}]}`+"\n", text)
	}
	t.Run("too big", func(t *testing.T) {
		err := load(t, "big.jsonl", func(f *os.File) {
			// Sparse: no disk is written, and the size alone refuses it.
			if err := f.Truncate(maxDatasetFileBytes + 1); err != nil {
				t.Fatal(err)
			}
		})
		want := "cfg.yml:4: scenarios[0].prompt_dataset.file: " + filepath.Join(dir, "big.jsonl") + " is 268435457 bytes, past the 256 MiB a dataset may be"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
	})
	t.Run("a line too long", func(t *testing.T) {
		err := load(t, "long.jsonl", func(f *os.File) {
			fmt.Fprint(f, line("short"), line(strings.Repeat("word ", maxDatasetLineBytes/5+1)))
		})
		if err == nil || !strings.Contains(err.Error(), "long.jsonl:2: a line is longer than 8.0 MiB") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		yml := fmt.Sprintf("targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s, prompt_dataset: {file: %s}}]\n", dir)
		_, err := config.Parse([]byte(yml), "cfg.yml", CheckDatasets)
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("count", func(t *testing.T) {
		var prompts []DatasetPrompt
		err := load(t, "many.jsonl", func(f *os.File) {
			for i := range maxDatasetPrompts + 50 {
				fmt.Fprint(f, line(fmt.Sprintf("prompt %d", i)))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		prompts, err = readShareGPT(filepath.Join(dir, "many.jsonl"))
		if err != nil || len(prompts) != maxDatasetPrompts || prompts[len(prompts)-1].Text != fmt.Sprintf("prompt %d", maxDatasetPrompts-1) {
			t.Fatalf("kept %d prompts (%v), want the first %d", len(prompts), err, maxDatasetPrompts)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		big := strings.Repeat("word ", (1<<20)/5) // 1 MiB
		f, err := os.Create(filepath.Join(dir, "heavy.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			fmt.Fprint(f, line(big))
		}
		f.Close()
		prompts, _ := readShareGPT(filepath.Join(dir, "heavy.jsonl"))
		kept := 0
		for _, p := range prompts {
			kept += len(p.Text)
		}
		if kept > maxDatasetPromptBytes || len(prompts) != maxDatasetPromptBytes/len(big) {
			t.Fatalf("kept %d prompts of %d bytes in all, want %d within %d", len(prompts), kept, maxDatasetPromptBytes/len(big), maxDatasetPromptBytes)
		}
	})
}

// Scenarios that name one file share one copy; files together are bounded.
func TestDatasetsShareAndAreBounded(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "d0.jsonl")
	f, err := os.Create(first)
	if err != nil {
		t.Fatal(err)
	}
	// Four prompts of almost 4 MiB (a million tokens by bytes ÷ 4): a file
	// keeps almost 16 MiB.
	big := strings.Repeat(strings.Repeat("x", 99)+" ", (4<<20-64<<10)/100)
	for range 4 {
		fmt.Fprintf(f, `{"conversations": [{"from": "human", "value": %q}]}`+"\n", big)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	yml := "targets: [{name: a, url: 'http://x:1'}]\nlimits: {max_prompt_tokens: 1048576, max_canary_memory: 64GiB}\nscenarios:\n"
	for i := range 5 {
		name := filepath.Join(dir, fmt.Sprintf("d%d.jsonl", i))
		if i > 0 {
			if err := os.Link(first, name); err != nil {
				t.Fatal(err)
			}
		}
		yml += fmt.Sprintf("  - {name: s%d, prompt_dataset: {file: %s}}\n  - {name: again%d, prompt_dataset: {file: %s}}\n", i, name, i, name)
	}
	// Four files, each named twice: about 64 MiB read, 64 MiB kept.
	four := strings.Join(strings.Split(yml, "\n")[:11], "\n") + "\n"
	cfg, err := config.Parse([]byte(four), "cfg.yml", CheckDatasets)
	if err != nil {
		t.Fatal(err)
	}
	a, b := read[cfg.Scenarios[0].Name].Dataset, read[cfg.Scenarios[1].Name].Dataset
	if len(a) != 4 || &a[0] != &b[0] {
		t.Error("two scenarios naming one file hold two copies")
	}
	// A fifth file passes 64 MiB in all.
	_, err = config.Parse([]byte(yml), "cfg.yml", CheckDatasets)
	want := "cfg.yml:12: scenarios[8].prompt_dataset.file: " + filepath.Join(dir, "d4.jsonl") + " brings the prompts of all datasets to"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
