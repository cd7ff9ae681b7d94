package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
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
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if want := []string{"cost 20/s", "pacer 200/s", "dispatch 50/s×2", "rate 20/s", "20 streams", "canary 3×1"}; !slices.Equal(names, want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	if r := rows[1]; r.Requests == 0 || r.Dispatch.P99 == nil || r.CPUPerRequestMs == nil {
		t.Errorf("pacer row: %d releases, lateness %v", r.Requests, r.Dispatch)
	}
	if r := rows[0]; r.FloorCPUPerRequestMs == nil || r.FloorRequests == 0 || r.FloorComplete != r.FloorRequests {
		t.Errorf("cost row: the bare reader's CPU %v, %d of %d requests complete", r.FloorCPUPerRequestMs, r.FloorComplete, r.FloorRequests)
	}
	if r := rows[0]; r.PollerCPUPerRequestMs == nil || r.PollerRequests == 0 || r.PollerComplete != r.PollerRequests {
		t.Errorf("cost row: the one-poller spike's CPU %v, %d of %d requests complete", r.PollerCPUPerRequestMs, r.PollerComplete, r.PollerRequests)
	}
	rows = slices.Delete(rows, 1, 2)
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
		// The emitter's receipts: every matched request has one, read after
		// the prober wrote it; the bench's first connection came before
		// the rows, so a row may open none.
		if r.Received != r.Matched || r.EmitterRead.P50 == nil || *r.EmitterRead.P50 < 0 || r.Send.P99 == nil {
			t.Errorf("%s: %d of %d matched requests have the emitter's receipt; emitter read lag %v, send %v", r.Name, r.Received, r.Matched, r.EmitterRead, r.Send)
		}
	}
	if r := rows[3]; r.HeapPerStreamKiB == nil || r.PeakStreams < 20 {
		t.Errorf("streams row: heap per stream %v at peak %d streams", r.HeapPerStreamKiB, r.PeakStreams)
	}
	var out bytes.Buffer
	printGoals(&out, goals(rows, nil, nil))
	for _, want := range []string{"CPU per streamed request, 20/s", "dispatch delay, 50/s×2", "heap per open stream, 20 streams"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the goals lack %q:\n%s", want, out.String())
		}
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

// How often the bound held is counted per row over the runs, and over all
// judged rows; a row without a published bound is not judged.
func TestHoldsAreCounted(t *testing.T) {
	yes, no := true, false
	rows := []Row{
		{Name: "rate 10/s", Run: 1, Honest: &yes}, {Name: "canary 3×1", Run: 1},
		{Name: "rate 10/s", Run: 2, Honest: &no}, {Name: "canary 3×1", Run: 2},
	}
	var out bytes.Buffer
	printHolds(&out, rows)
	for _, want := range []string{
		"the bound held in 1 of 2 judged rows over 2 runs:",
		"  rate 10/s: held in 1 of 2 runs",
		"  canary 3×1: not judged (no published bound) in 2 runs",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not say %q:\n%s", want, out.String())
		}
	}
	within := 0.5
	bound := 1.0
	row := Row{Bound: Quantiles{P99: &bound}, ttftErrors: []float64{0.5, 1.5, 0.9, 3}}
	row.TTFTError = quantiles(row.ttftErrors)
	judgeBound(&row, 0.2)
	if row.Within == nil || *row.Within != within || row.Honest == nil || *row.Honest {
		t.Errorf("judged %v within, holds %v; want 50%% within (2 of 4 at most 1.2 ms) and not held", row.Within, row.Honest)
	}
}
