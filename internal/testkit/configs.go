package testkit

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BadConfigs loads every file glob matches, each of whose first line is
// "# want: <error>" with $FILE standing for the file's path, and fails
// unless load's error contains that line. It returns how many it loaded.
func BadConfigs(t *testing.T, glob string, load func(path string) error) int {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", glob, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := WantLine(t, f)
			err := load(f)
			if err == nil {
				t.Fatalf("loaded without error, want %q", want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error:\n  %v\nwant it to contain:\n  %s", err, want)
			}
		})
	}
	return len(files)
}

// WantLine is the error a bad configuration file's first line,
// "# want: <error>", says it must get, with $FILE replaced by its path.
func WantLine(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	line, ok := strings.CutPrefix(sc.Text(), "# want: ")
	if !ok {
		t.Fatalf("%s: first line must be '# want: <error>'", path)
	}
	return strings.ReplaceAll(line, "$FILE", path)
}

// TraceRow is one record of a trace file, read with the standard library
// alone (not the replay package) so tests can hold a replay to the file.
type TraceRow struct {
	At            time.Duration
	Input, Output int
	Blocks        []int64 // hash ids, nil for none
}

// AzureRows reads an Azure LLM inference trace (CSV).
func AzureRows(t testing.TB, path string) []TraceRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []TraceRow
	var t0 time.Time
	for i, r := range recs[1:] {
		ts, err := time.Parse("2006-01-02 15:04:05.0000000", r[0])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t0 = ts
		}
		in, _ := strconv.Atoi(r[1])
		o, _ := strconv.Atoi(r[2])
		out = append(out, TraceRow{At: ts.Sub(t0), Input: in, Output: o})
	}
	return out
}

// MooncakeRows reads a Mooncake trace (JSONL).
func MooncakeRows(t testing.TB, path string) []TraceRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []TraceRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct {
			Timestamp float64 `json:"timestamp"`
			In        int     `json:"input_length"`
			Out       int     `json:"output_length"`
			IDs       []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, TraceRow{At: time.Duration(m.Timestamp * 1e6), Input: m.In, Output: m.Out, Blocks: m.IDs})
	}
	return out
}

// TraceConfig is a one-burst configuration, burst "b" against target "t"
// with scenario "s", replaying file at speedup; extra ends the burst's
// block (its duration or requests, its warmup).
func TraceConfig(file string, speedup float64, extra string) string {
	return `
targets: [{name: t, url: "http://127.0.0.1:1"}]
scenarios:
  - name: s
    prompt_tokens: {distribution: uniform, min: 1, max: 4000}
    output_tokens: {distribution: uniform, min: 1, max: 100}
    slo: {ttft: 5s, target_ratio: 0.9}
limits: {max_planned_requests: 1000000, max_burst_memory: 4GiB}
bursts:
  - name: b
    target: t
    scenarios: [{scenario: s}]
    max_concurrency: 16
    arrival: {process: trace, file: ` + strconv.Quote(file) + `, speedup: ` + strconv.FormatFloat(speedup, 'g', -1, 64) + `}
` + extra
}

// Seed adds every file the globs match to f's corpus.
func Seed(f *testing.F, globs ...string) {
	f.Helper()
	for _, glob := range globs {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}
