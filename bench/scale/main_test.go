package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/bench/internal/simchild"
)

func TestMain(m *testing.M) {
	simchild.ServeIfChild() // the emitter runs as this test binary's child
	os.Exit(m.Run())
}

// TestSmoke runs the bench at small scale, as `go run ./bench/scale -smoke`
// does: every row measures requests and compares them with the emitter's
// truth. It checks that the bench works, not how fast anything is.
func TestSmoke(t *testing.T) {
	rows, err := run(context.Background(), smokeOptions("", ""), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a rate, a streams and a canary row", len(rows))
	}
	for _, r := range rows {
		if r.Requests == 0 || r.Succeeded != r.Requests || r.Matched != r.Succeeded {
			t.Errorf("%s: %d requests, %d succeeded, %d matched with the truth", r.Name, r.Requests, r.Succeeded, r.Matched)
		}
		if r.TTFTError.P99 == nil || r.ITLError.P99 == nil || r.CPUPerRequestMs == nil {
			t.Errorf("%s: errors or CPU missing: %+v", r.Name, r)
		}
		if *r.TTFTError.P50 < 0 {
			t.Errorf("%s: the prober saw tokens before the emitter wrote them (TTFT error p50 %.3f ms): clocks disagree", r.Name, *r.TTFTError.P50)
		}
	}
	if rows[1].HeapPerStreamKiB == nil || rows[1].PeakStreams < 20 {
		t.Errorf("streams row: heap per stream %v at peak %d streams", rows[1].HeapPerStreamKiB, rows[1].PeakStreams)
	}
	var table bytes.Buffer
	printTable(&table, rows)
	t.Log("\n" + table.String())
	if !strings.Contains(table.String(), "canary 3×1") {
		t.Error("the table lacks the canary row")
	}
	if _, err := json.Marshal(rows); err != nil {
		t.Fatal(err)
	}
}
