package prompt

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/wav"
)

// writeAudioConfig writes, in a new directory, clips/a.wav (2.5 s),
// clips/b.wav (1 s), clips/notes.txt, the dataset lines and a configuration
// whose scenario names the dataset; it returns the configuration's path.
func writeAudioConfig(t *testing.T, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "clips"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, seconds := range map[string]float64{"a.wav": 2.5, "b.wav": 1} {
		b, _ := io.ReadAll(Synthetic(1, seconds))
		if err := os.WriteFile(filepath.Join(dir, "clips", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"clips/notes.txt": "not audio",
		"clips.jsonl":     strings.Join(lines, "\n") + "\n",
		"cfg.yml": `targets:
  - {name: t, url: http://x:1, api: transcriptions}
scenarios:
  - name: s
    audio: {dataset: clips.jsonl, max_wer: 0.2}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "cfg.yml")
}

func TestAudioDatasetGood(t *testing.T) {
	path := writeAudioConfig(t,
		`{"id": "a", "audio": "clips/a.wav", "reference": "ask not what your country can do for you"}`,
		``,
		`{"audio": "clips/b.wav", "reference": "hello"}`)
	if _, err := config.LoadFile(path, CheckDatasets); err != nil {
		t.Fatal(err)
	}
	clips := read["s"].Audio
	if len(clips) != 2 || clips[0].Seconds != 2.5 || clips[1].Seconds != 1 || clips[1].Line != 3 || clips[0].Name() != "clip line 1 (a)" || clips[1].Name() != "clip line 3" {
		t.Fatalf("clips %+v", clips)
	}
	// A scenario of the dataset draws its clips, with no max_tokens: a
	// transcript is as long as its audio.
	cfg, _ := config.LoadFile(path, CheckDatasets)
	s, _ := cfg.Scenario("s")
	b := NewBuilder(s, read["s"], 1)
	seen := map[string]bool{}
	for range 20 {
		p, maxTokens := b.Next()
		if p.Clip == nil || maxTokens != 0 {
			t.Fatalf("prompt %+v, max_tokens %d", p, maxTokens)
		}
		seen[p.Clip.File] = true
		open, size, seconds := AudioOf(s.Audio, p)
		if got, _ := io.ReadAll(open()); int64(len(got)) != size || seconds != p.Clip.Seconds {
			t.Fatalf("audio of %d bytes, size %d, %gs", len(got), size, seconds)
		}
	}
	if len(seen) != 2 {
		t.Errorf("drew %v", seen)
	}
}

// Every problem of an audio dataset comes in one run, each with its
// file, line and field.
func TestAudioDatasetEveryError(t *testing.T) {
	path := writeAudioConfig(t,
		`{"id": "a", "audio": "clips/a.wav"}`,
		`{"id": "a", "audio": "clips/b.wav", "reference": "hi"}`,
		`{"audio": "clips/missing.wav", "reference": "hi"}`,
		`{"audio": "clips/notes.txt", "reference": "hi"}`,
		`{"audio": "clips/a.wav", "reference": " ... "}`,
		`{"audio": "clips/a.wav", "reference": "hi", "text": "x"}`,
		`{"reference": "hi"}`)
	_, err := config.LoadFile(path, CheckDatasets)
	if err == nil {
		t.Fatal("loaded")
	}
	dataset := filepath.Join(filepath.Dir(path), "clips.jsonl")
	prefix := path + ":5: scenarios[0].audio.dataset: " + dataset + ":"
	for _, want := range []string{
		"1: reference: is required: the clip's transcript",
		`2: id: "a" repeats the id of line 1`,
		"3: audio: cannot be read: " + filepath.Join(filepath.Dir(path), "clips", "missing.wav") + ": no such file",
		"4: audio: " + filepath.Join(filepath.Dir(path), "clips", "notes.txt") + ": is not a PCM WAV file",
		"5: reference: has no word",
		`6: not a clip line (a JSON object {"id", "audio", "reference"}): unknown field "text"`,
		"7: audio: is required: a WAV file's path, relative to the dataset's directory",
	} {
		if !strings.Contains(err.Error(), prefix+want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, prefix+want)
		}
	}
}

// A clip past OpenAI's upload limit, and clips past 64 MiB in all, are
// refused by name, never cut.
func TestAudioDatasetBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int64) {
		h := wav.Header((size-wav.HeaderBytes)/2, SampleRate)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(h[:]); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: silence
			t.Fatal(err)
		}
	}
	write("big.wav", maxClipBytes+2)
	for _, n := range []string{"a.wav", "b.wav", "c.wav"} {
		write(n, 24<<20)
	}
	lines := `{"audio": "big.wav", "reference": "x"}
{"audio": "a.wav", "reference": "x"}
{"audio": "b.wav", "reference": "x"}
{"audio": "c.wav", "reference": "x"}
`
	if err := os.WriteFile(filepath.Join(dir, "clips.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "targets: [{name: t, url: 'http://x:1', api: transcriptions}]\nscenarios: [{name: s, audio: {dataset: clips.jsonl}}]\n"
	if err := os.WriteFile(filepath.Join(dir, "cfg.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.LoadFile(filepath.Join(dir, "cfg.yml"), CheckDatasets)
	for _, want := range []string{
		"clips.jsonl:1: audio: " + filepath.Join(dir, "big.wav") + " is 26214402 bytes, past the 25 MiB an audio clip may be",
		"clips.jsonl:4: audio: " + filepath.Join(dir, "c.wav") + " brings the clips to 75497472 bytes, past 64 MiB in all",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, want)
		}
	}
}
