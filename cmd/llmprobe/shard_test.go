package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/report"
)

// splitConfig is a burst to split, and one that sweeps (which cannot be).
func splitConfig(t *testing.T, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "split.yml")
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 6, slo: {ttft: 2s, target_ratio: 0.9}}
bursts:
  - name: split
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 40}
    requests: 60
    warmup: {requests: 6}
    seed: 42
  - name: sweeping
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson}
    sweep: {rates: [5, 10]}
    requests: 20
`, url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readReportFile(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// A burst split over three shards against one simulated engine, merged,
// is the burst one process runs: the same planned requests at the same
// offsets, the same counts, and percentiles close to the single run's (two
// runs of a real server are never equal). Then merge refuses what is not
// every shard of one run, naming the file.
func TestSplitBurstMatchesOneProcess(t *testing.T) {
	srv, _ := simServer(t)
	cfgPath := splitConfig(t, srv.URL)
	dir := t.TempDir()
	// Far enough ahead for three processes to start and send their preflight.
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	outs := make([][]byte, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=split", "--storage.path=", "--no-collector.gpu",
				fmt.Sprintf("--burst.shard=%d/3", i), "--burst.start="+start, "--output="+filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))).CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 3 {
		if exitCode(errs[i]) != 0 || !strings.Contains(string(outs[i]), fmt.Sprintf("shard %d/3 of a split burst", i)) ||
			!strings.Contains(string(outs[i]), fmt.Sprintf("gate: passed (shard %d/3 measured its share", i)) {
			t.Fatalf("shard %d/3: exit %d\n%s", i, exitCode(errs[i]), outs[i])
		}
	}
	single := filepath.Join(dir, "single.json")
	if out, err := exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=split", "--storage.path=", "--no-collector.gpu", "--output="+single).CombinedOutput(); err != nil {
		t.Fatalf("single run: %v\n%s", err, out)
	}
	mergedPath := filepath.Join(dir, "merged.json")
	shardFile := func(i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)) }
	// The merge is the split gate's run: it pushes as the gate would.
	pushgateway := runPushgateway(t)
	out, err := exec.Command(binPath, "report", "merge", "--output="+mergedPath, "--baseline="+single,
		"--push.url="+pushgateway, "--push.release=r1", shardFile(2), shardFile(0), shardFile(1)).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "merged from 3 shards") || !strings.Contains(string(out), "gate: passed") ||
		!strings.Contains(string(out), `llmprobe report merge: pushed to --push.url as {job="llmprobe_gate", burst="split", target="sim"}`) {
		t.Fatalf("merge: exit %d\n%s", exitCode(err), out)
	}
	_, pushed := testkit.Get(pushgateway + "/metrics")
	group := map[string]string{"job": "llmprobe_gate", "burst": "split", "target": "sim", "release": "r1"}
	if v, ok := sampleValue(parseMetrics(t, pushed), "llmprobe_burst_passed", group); !ok || v != 1 {
		t.Errorf("the Pushgateway's llmprobe_burst_passed%v = %v (present %v), want 1", group, v, ok)
	}
	merged, one := readReportFile(t, mergedPath), readReportFile(t, single)

	// The same schedule: the shards' measured requests are the plan's
	// measured arrivals, each at its planned offset, to the nanosecond.
	cfg, err := plan.File(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cfg.Burst("split")
	type arrival struct {
		n  int
		at time.Duration
	}
	var planned, sent []arrival
	for a := range b.Arrivals(b.Rates()[0]) {
		if !a.Warmup {
			planned = append(planned, arrival{a.Index, a.At})
		}
	}
	for i := range 3 {
		shard := readReportFile(t, shardFile(i))
		if shard.Shard == nil || shard.Shard.Index != i || shard.Shard.Count != 3 || shard.Seed != 42 || shard.Shard.Start.Format(time.RFC3339Nano) != start {
			t.Fatalf("shard-%d.json: shard %+v, seed %d", i, shard.Shard, shard.Seed)
		}
		for _, q := range shard.Shard.Requests {
			sent = append(sent, arrival{q.N, time.Duration(q.At)})
		}
	}
	slices.SortFunc(sent, func(x, y arrival) int { return cmp.Compare(x.n, y.n) })
	if !slices.Equal(sent, planned) {
		t.Errorf("the shards sent\n%v\nthe plan is\n%v", sent, planned)
	}
	// The same counts.
	if merged.PlannedRequests != 60 || one.PlannedRequests != 60 || merged.Requests != one.Requests || merged.WarmupRequests != one.WarmupRequests ||
		merged.Outcomes["success"] != one.Outcomes["success"] || merged.AllOutputTokens != one.AllOutputTokens {
		t.Errorf("merged: planned %d, sent %d, warmup %d, outcomes %v, tokens %d; one process: %d, %d, %d, %v, %d",
			merged.PlannedRequests, merged.Requests, merged.WarmupRequests, merged.Outcomes, merged.AllOutputTokens,
			one.PlannedRequests, one.Requests, one.WarmupRequests, one.Outcomes, one.AllOutputTokens)
	}
	for _, m := range config.BurstMetrics {
		if merged.Latency[m].Count != one.Latency[m].Count {
			t.Errorf("%s: %d samples merged, %d in one process", m, merged.Latency[m].Count, one.Latency[m].Count)
		}
	}
	// The same offsets of the requests' planned times, seen from each report's own start.
	if len(merged.TTFTSeries) != len(one.TTFTSeries) {
		t.Fatalf("TTFT series of %d and %d points", len(merged.TTFTSeries), len(one.TTFTSeries))
	}
	for i := range one.TTFTSeries {
		if merged.TTFTSeries[i][0] != one.TTFTSeries[i][0] {
			t.Errorf("request %d was due at +%gs merged, +%gs in one process", i, merged.TTFTSeries[i][0], one.TTFTSeries[i][0])
		}
	}
	// Close percentiles: the same load on the same engine, measured twice.
	for _, m := range []string{"ttft", "tpot", "e2e"} {
		for _, q := range []string{"p50", "p90"} {
			a, b := merged.Latency[m].Quantile(q), one.Latency[m].Quantile(q)
			if math.Abs(a-b) > 0.5*max(a, b)+0.010 {
				t.Errorf("%s %s: %.1fms merged, %.1fms in one process", m, q, 1000*a, 1000*b)
			}
		}
	}
	if merged.Regression == nil || merged.Regression.PreviousID != one.ID || merged.Merged == nil || len(merged.Merged.Shards) != 3 {
		t.Errorf("merged report: regression %+v, merged %+v", merged.Regression, merged.Merged)
	}

	// Merge refuses what is not every shard of one run.
	otherSeed := filepath.Join(dir, "other-seed.json")
	raw, _ := os.ReadFile(shardFile(1))
	if err := os.WriteFile(otherSeed, []byte(strings.Replace(string(raw), `"seed":42`, `"seed":43`, -1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"missing shard", []string{shardFile(0), shardFile(2)}, "burst split was split over 3 shards; missing shard 1/3 (given: 0/3 " + shardFile(0) + ", 2/3 " + shardFile(2) + ")"},
		{"duplicate index", []string{shardFile(0), shardFile(1), shardFile(2), shardFile(1)}, shardFile(1) + " and " + shardFile(1) + " are both shard 1/3"},
		{"another seed", []string{shardFile(0), otherSeed, shardFile(2)}, otherSeed + " has seed 43 but " + shardFile(0) + " has 42"},
		{"a whole burst's report", []string{shardFile(0), single, shardFile(2)}, single + ` is not a shard's report`},
		{"a missing file", []string{shardFile(0), filepath.Join(dir, "nope.json")}, filepath.Join(dir, "nope.json") + " does not exist"},
	} {
		out, err := exec.Command(binPath, append([]string{"report", "merge", "--output=" + filepath.Join(dir, "bad.json")}, tc.files...)...).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", tc.name, exitCode(err), tc.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); err == nil {
		t.Error("a refused merge wrote a report")
	}
}

// Splitting flags that cannot make one burst are usage errors (exit 2),
// refused before anything is sent.
func TestGateSplitUsageErrors(t *testing.T) {
	cfgPath := splitConfig(t, testkit.RefusedURL(t))
	soon := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--burst=split", "--burst.shard=3/3"}, `--burst.shard: shard "3/3" must be i/N with 0 <= i < N, like 0/3`},
		{[]string{"--burst=split", "--burst.shard=1/3"}, "--burst.shard=1/3 needs --burst.start: every shard counts its share of the schedule from that one instant"},
		{[]string{"--burst=split", "--burst.shard=1/3", "--burst.start=tomorrow"}, `--burst.start: "tomorrow" is not an RFC 3339 time like 2026-06-01T12:00:00Z`},
		{[]string{"--burst=split", "--burst.shard=1/3", "--burst.start=2020-01-01T00:00:00Z"}, "--burst.start=2020-01-01T00:00:00Z passed"},
		{[]string{"--burst=split", "--burst.shard=1/3", "--burst.start=" + time.Now().Add(3*time.Hour).UTC().Format(time.RFC3339)}, "ahead, more than 1h0m0s: is it the right day and time zone?"},
		{[]string{"--burst=sweeping", "--burst.shard=0/2", "--burst.start=" + soon}, "burst sweeping sweeps rates (5, 10/s), each step judged before the next: give --rate too"},
	} {
		out, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfgPath, "--storage.path="}, tc.args...)...).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "preflight") {
			t.Errorf("%v: exit %d, want 2 and %q before any preflight:\n%s", tc.args, exitCode(err), tc.want, out)
		}
	}
}
