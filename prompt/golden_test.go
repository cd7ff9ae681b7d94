package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

func TestGoldenGood(t *testing.T) {
	cfg, err := config.LoadFile("testdata/good_golden.yml", CheckGolden)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cfg.Scenario("golden")
	g := s.Golden
	if g.File != filepath.Join("testdata", "golden_good.jsonl") || s.SLO.QualityRatio != 0.95 {
		t.Fatalf("golden %s, quality_ratio %g", g.File, s.SLO.QualityRatio)
	}
	// Line 5 is blank: five lines, each with its place in the file.
	want := []struct {
		line int
		id   string
	}{{1, "capital-fr"}, {2, "sum"}, {3, "json-ok"}, {4, ""}, {6, "haiku"}}
	if len(read[s.Name].Golden) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(read[s.Name].Golden), len(want), read[s.Name].Golden)
	}
	for i, w := range want {
		if l := read[s.Name].Golden[i]; l.Line != w.line || l.ID != w.id || l.Tokens == 0 {
			t.Errorf("line %d = %+v, want line %d id %q", i, l, w.line, w.id)
		}
	}
	if l := read[s.Name].Golden[1]; l.Checks.Regexp() == nil || !l.Checks.Regexp().MatchString(" 42\n") || l.Answer != "42" {
		t.Errorf("line 2's regex check was not compiled, or its answer lost: %+v", l)
	}
	if l := read[s.Name].Golden[2]; l.Checks.Schema() == nil || !l.Checks.JSON {
		t.Errorf("line 3's json and json_schema checks were not kept: %+v", l)
	}
	if m := read[s.Name].Golden[3].Messages; len(m) != 2 || m[0].Role != "system" || m[1].Role != "user" || read[s.Name].Golden[3].Prompt != "" {
		t.Errorf("line 4's messages = %+v", m)
	}
	if n := read[s.Name].Golden[3].Name(); n != "golden line 4" {
		t.Errorf("a line without id is named %q", n)
	}
	if n := read[s.Name].Golden[0].Name(); n != "golden line 1 (capital-fr)" {
		t.Errorf("line 1 is named %q", n)
	}
	shownAsFile(t, cfg, "Paris", "testdata/golden_good.jsonl", CheckGolden)
}

// Every problem of a golden file comes in one run, each with its file,
// line and field.
func TestGoldenEveryErrorOfTheFile(t *testing.T) {
	_, err := config.LoadFile("testdata/bad_golden_answer.yml", CheckGolden)
	if err == nil {
		t.Fatal("loaded")
	}
	prefix := "testdata/bad_golden_answer.yml:8: scenarios[0].golden.file: testdata/golden_bad.jsonl:"
	for _, want := range []string{
		`1: answer: the reference answer fails the line's own checks: answer does not contain "Paris"`,
		"2: checks.regex: error parsing regexp: missing closing ): `(ok`",
		`3: id: "capital-fr" repeats the id of line 1`,
		"4: checks: is required: contains, regex, exact, json or json_schema",
		"5: prompt: set prompt or messages, not both",
		`6: messages[1].role: the last message must be the user's, not "assistant"`,
		`7: messages[0].role: "bot" must be one of system, developer, user, assistant`,
		"7: messages[1].content: is required and not empty",
		`8: not a golden line (a JSON object with prompt or messages, and checks): unknown field "reference"`,
		"9: not a golden line (a JSON object with prompt or messages, and checks): unexpected EOF",
		"10: checks.json_schema: is no valid JSON Schema",
		"11: checks: sets no check: use contains, regex, exact, json or json_schema",
	} {
		if !strings.Contains(err.Error(), prefix+want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, prefix+want)
		}
	}
}

// A golden set that cannot be read whole is refused, never cut, and says
// which bound it passed.
func TestGoldenBounds(t *testing.T) {
	dir := t.TempDir()
	line := func(i int) string {
		return fmt.Sprintf(`{"prompt": "question %d", "checks": {"contains": "x"}}`+"\n", i)
	}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, f *os.File)
		want  string
	}{
		{"too big", func(t *testing.T, f *os.File) {
			if err := f.Truncate(maxGoldenFileBytes + 1); err != nil { // sparse: the size alone refuses it
				t.Fatal(err)
			}
		}, "cfg.yml:4: scenarios[0].golden.file: " + filepath.Join(dir, "too big") + " is 16777217 bytes, past the 16 MiB a golden set may be; split it"},
		{"too many", func(t *testing.T, f *os.File) {
			for i := range maxGoldenLines + 1 {
				fmt.Fprint(f, line(i))
			}
		}, "too many:10001: more than 10000 golden lines; split the file"},
		{"a long line", func(t *testing.T, f *os.File) {
			fmt.Fprint(f, line(1), `{"prompt": "`+strings.Repeat("word ", maxGoldenLineBytes/5+1)+`"}`)
		}, "a long line:2: a line is longer than 1.0 MiB"},
		{"many errors", func(t *testing.T, f *os.File) {
			for range 30 {
				fmt.Fprintln(f, `{"prompt": "no checks"}`)
			}
		}, "many errors: stopped after 20 errors"},
		{"array", func(t *testing.T, f *os.File) {
			fmt.Fprint(f, "[", strings.TrimSpace(line(1)), "]\n")
		}, "array:1: is a JSON array, not JSONL (one golden line per line); convert it with jq -c '.[]'"},
		{"empty", func(t *testing.T, f *os.File) { fmt.Fprint(f, "\n\n") }, "empty holds no golden line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadWritten(t, dir, tc.name, "golden", CheckGolden, func(f *os.File) { tc.write(t, f) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if n := strings.Count(err.Error(), "\n"); tc.name == "many errors" && n > maxFileErrors+2 {
				t.Errorf("%d lines of errors, want at most %d and the note", n, maxFileErrors)
			}
		})
	}
	t.Run("not a regular file", func(t *testing.T) {
		yml := fmt.Sprintf("targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s, golden: {file: %s}}]\n", dir)
		_, err := config.Parse([]byte(yml), "cfg.yml", CheckGolden)
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Fatalf("error %v", err)
		}
	})
}
