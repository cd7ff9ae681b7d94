package replay

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, path, format string) ([]Record, string) {
	t.Helper()
	r, err := Open(path, format)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Format()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func TestReadsAzure(t *testing.T) {
	got, format := readAll(t, "testdata/azure_sample.csv", "")
	if format != Azure {
		t.Fatalf("detected %q, want azure", format)
	}
	want := []Record{
		{Line: 2, At: 0, Input: 374, Output: 44},
		{Line: 3, At: 4314579 * time.Microsecond, Input: 396, Output: 109},
		{Line: 4, At: 4319410 * time.Microsecond, Input: 879, Output: 7},
		{Line: 5, At: 4319410 * time.Microsecond, Input: 91, Output: 314},
		{Line: 6, At: 6800641 * time.Microsecond, Input: 1580, Output: 20},
	}
	if len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
	for i, w := range want {
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("record %d: got %+v, want %+v", i, got[i], w)
		}
	}
	// Seven fractional digits: 100 ns resolution is kept.
	if last := got[8].At; last != 23319409900*time.Nanosecond {
		t.Errorf("line 10 at %s, want 23.3194099s", last)
	}
}

func TestReadsMooncake(t *testing.T) {
	got, format := readAll(t, "testdata/mooncake_sample.jsonl", "")
	if format != Mooncake {
		t.Fatalf("detected %q, want mooncake", format)
	}
	want := []Record{
		{Line: 1, At: 0, Input: 1200, Output: 40, Blocks: []int64{0, 1, 2}},
		{Line: 2, At: 0, Input: 700, Output: 12, Blocks: []int64{0, 3}},
		{Line: 3, At: ms(1520), Input: 2000, Output: 300, Blocks: []int64{4, 5, 6, 7}},
		{Line: 4, At: ms(3052), Input: 1100, Output: 9, Blocks: []int64{0, 1, 8}},
		{Line: 5, At: ms(3500), Input: 300, Output: 150, Blocks: []int64{9}},
		{Line: 6, At: ms(7001), Input: 5000, Output: 1, Blocks: []int64{4, 5, 10, 11, 12, 13, 14, 15, 16, 17}},
		{Line: 7, At: ms(9999.5), Input: 64, Output: 64},
		{Line: 8, At: ms(12000), Input: 800, Output: 20, Blocks: []int64{0, 18}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A record keeps at most MaxBlocks hash ids, its leading ones.
func TestMooncakeBlocksBounded(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	line := `{"timestamp": 0, "input_length": 512000, "output_length": 1, "hash_ids": [` + strings.Join(ids, ",") + "]}\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, path, "")
	if len(got) != 1 || len(got[0].Blocks) != MaxBlocks || got[0].Blocks[MaxBlocks-1] != MaxBlocks-1 || cap(got[0].Blocks) != MaxBlocks {
		t.Errorf("kept %d ids (cap %d), want the first %d", len(got[0].Blocks), cap(got[0].Blocks), MaxBlocks)
	}
}

// A bad line is an error naming file, line and field; reading goes on after it.
func TestBadLines(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, format, want string
	}{
		{"azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,10,1\n2023-11-16 18:15:47,x,1\n2023-11-16 18:15:48,5,2\n", "", ":3: ContextTokens: \"x\" is not a whole number"},
		{"time.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,10,1\n2023-11-16 18:15:48,5,2\n", "", ":2: TIMESTAMP: \"yesterday\" is not a time"},
		{"cols.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:48,5\n2023-11-16 18:15:48,5,2\n", "", ":2: columns: 2 columns"},
		{"neg.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:48,-5,1\n2023-11-16 18:15:48,5,2\n", "azure", ":2: ContextTokens: -5 must be within"},
		{"order.jsonl", "{\"timestamp\": 50, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 10, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 60, \"input_length\": 1, \"output_length\": 1}\n", "", ":2: timestamp: -40ms is earlier than the record before it"},
		{"json.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 1, \"input_length\": \"many\", \"output_length\": 1}\n{\"timestamp\": 2, \"input_length\": 1, \"output_length\": 1}\n", "", ":2: json: "},
		{"missing.jsonl", "{\"timestamp\": 0, \"input_length\": 1}\n{\"timestamp\": 2, \"input_length\": 1, \"output_length\": 1}\n", "mooncake", ":1: output_length: is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var bad *LineError
			good := 0
			for {
				_, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if errors.As(err, &bad) {
					if !strings.Contains(err.Error(), path+tc.want) {
						t.Errorf("error %q, want it to contain %q", err, path+tc.want)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				good++
			}
			if bad == nil {
				t.Fatal("no line error")
			}
			if good == 0 {
				t.Error("reading stopped at the bad line")
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, format, want string }{
		{filepath.Join(dir, "absent.csv"), "", "no such file"},
		{write("empty.csv", ""), "", "is empty"},
		{write("other.csv", "a,b,c\n1,2,3\n"), "", ":1: neither an Azure CSV header"},
		{write("header.csv", "TIMESTAMP,ContextTokens\n"), "azure", ":1: header: has no GeneratedTokens column"},
		{write("fmt.csv", "x\n"), "parquet", "format \"parquet\" must be azure or mooncake"},
		{"/dev/zero", "mooncake", "/dev/zero is not a regular file"},
		{dir, "", "is not a regular file"},
	} {
		r, err := Open(tc.path, tc.format)
		if err == nil {
			r.Close()
			t.Errorf("%s opened, want %q", tc.path, tc.want)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q, want it to contain %q", tc.path, err, tc.want)
		}
	}
	// A line past MaxLine is an error, not an allocation.
	long := write("long.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": ["+strings.Repeat("1, ", MaxLine/3)+"1]}\n")
	r, err := Open(long, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a %d-byte line: %v, want an error", MaxLine, err)
	}
}

func TestAzure2024Timestamps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.csv")
	text := "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,2162,5\n2024-05-10 00:00:01.5+00:00,100,1\n"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, p, "")
	if len(got) != 2 || got[1].At != 1490070*time.Microsecond {
		t.Errorf("got %+v, want the second record at 1.49007s", got)
	}
}

func TestCut(t *testing.T) {
	recs, _ := readAll(t, "testdata/mooncake_sample.jsonl", "")
	run := func(c Cut) (warm, measured []time.Duration) {
		i := 0
		next := func() (Record, bool) {
			if i == len(recs) {
				return Record{}, false
			}
			i++
			return recs[i-1], true
		}
		for a := range c.Arrivals(next) {
			if a.Warmup {
				warm = append(warm, a.At)
			} else {
				measured = append(measured, a.At)
			}
		}
		return warm, measured
	}
	big := 1 << 30
	// Warmup by requests, measured by duration after a 2x speedup: records
	// at 0 0 1520 3052 | 3500 7001 9999.5 12000 ms become ... | 1750 3500.5 4999.75 6000;
	// the measured part starts at 1750 ms and lasts 4 s, so 6000 is out.
	w, m := run(Cut{Speedup: 2, WarmupRequests: 4, MaxWarmup: big, Duration: 4 * time.Second, MaxMeasured: big})
	if len(w) != 4 || w[3] != ms(1526) {
		t.Errorf("warmup %v, want 4 ending at 1.526s", w)
	}
	if want := []time.Duration{ms(1750), ms(3500.5), ms(4999.75)}; !slices.Equal(m, want) {
		t.Errorf("measured %v, want %v", m, want)
	}
	// Requests past the end of the trace stop at its end; MaxMeasured stops earlier.
	if _, m := run(Cut{Requests: 100, MaxMeasured: big}); len(m) != len(recs) {
		t.Errorf("%d measured, want the trace's %d", len(m), len(recs))
	}
	if _, m := run(Cut{Requests: 100, MaxMeasured: 3}); len(m) != 3 {
		t.Errorf("%d measured, want MaxMeasured's 3", len(m))
	}
}
