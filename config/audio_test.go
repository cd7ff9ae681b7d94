package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// TestTranscriptionErrorsAtOnce: every mistake of a transcription
// configuration is named in one run, each with its line and field.
func TestTranscriptionErrorsAtOnce(t *testing.T) {
	const file = "testdata/bad_transcriptions.yml"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = config.LoadFile(file)
	if err == nil {
		t.Fatal("loaded without error")
	}
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		want, ok := strings.CutPrefix(line, "# want: ")
		if !ok {
			continue
		}
		n++
		if want = strings.ReplaceAll(want, "$FILE", file); !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if n < 5 {
		t.Fatalf("%d wanted errors; the file's comments lost them", n)
	}
	if t.Failed() {
		t.Logf("error:\n%v", err)
	}
}
