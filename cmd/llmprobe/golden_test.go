package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

// goldenSet is a golden set whose reference answers run to a dozen tokens
// or more, so TPOT and ITL have samples beside the answers' checks.
const goldenSet = `{"id": "capital-fr", "prompt": "What is the capital of France? Answer in one sentence.", "checks": {"contains": "Paris"}, "answer": "The capital of France is Paris, a city on the Seine in the north of the country."}
{"id": "sum", "prompt": "What is 17 + 25? Explain briefly.", "checks": {"regex": "\\b42\\b"}, "answer": "Adding seventeen and twenty-five gives 42, since ten plus twenty is thirty and seven plus five is twelve."}
{"id": "json", "prompt": "Describe France as a JSON object with its name and capital.", "checks": {"json_schema": {"type": "object", "required": ["name", "capital"], "properties": {"capital": {"const": "Paris"}}}}, "answer": "{\"name\": \"France\", \"capital\": \"Paris\", \"continent\": \"Europe\", \"languages\": [\"French\"], \"population_millions\": 68}"}
{"messages": [{"role": "system", "content": "Answer in one lowercase word, then say why."}, {"role": "user", "content": "Which colour is the sky on a clear day?"}], "checks": {"regex": "^blue\\b"}, "answer": "blue because air scatters the short blue wavelengths of sunlight far more than the red ones."}
`

// goldenSim serves a sim answering goldenFile, wrongRate of its prompts
// wrong, with decode steps slower times the default's.
func goldenSim(t *testing.T, goldenFile string, wrongRate, slower float64) string {
	t.Helper()
	return serveSim(t, func(c *sim.Config) {
		c.Golden, c.GoldenWrongRate = goldenFile, wrongRate
		slowerDecode(c, slower)
	})
}

// goldenConfig writes a configuration of the targets (name: URL) and a
// golden scenario with quality_ratio 0.9, and a burst "golden" of it
// against target.
func goldenConfig(t *testing.T, goldenFile string, targets map[string]string, target string) string {
	t.Helper()
	var list strings.Builder
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		fmt.Fprintf(&list, "  - {name: %s, url: %q}\n", name, targets[name])
	}
	return writeTemp(t, "golden.yml", fmt.Sprintf(`targets:
%sscenarios:
  - {name: golden, golden: {file: %s}, output_tokens: 64, slo: {ttft: 5s, target_ratio: 0.9, quality_ratio: 0.9}}
bursts:
  - name: golden
    target: %s
    scenarios: [{scenario: golden}]
    arrival: {process: poisson, rate: 25}
    requests: 60
    warmup: {requests: 3}
    seed: 5
`, list.String(), goldenFile, target))
}

// A gate burst of golden prompts against a sim that answers them right
// passes its quality gate; against one that answers a third of them wrong,
// it fails that gate and says the share, the target and the interval.
func TestGateGoldenQuality(t *testing.T) {
	file := writeTemp(t, "golden.jsonl", goldenSet)
	targets := map[string]string{"right": goldenSim(t, file, 0, 1), "wrong": goldenSim(t, file, 0.35, 1)}
	gate := func(target string) (int, string, decide.Gate) {
		cfg, output := goldenConfig(t, file, targets, target), filepath.Join(t.TempDir(), "report.json")
		out, err := exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=golden", "--output="+output, "--storage.path=").CombinedOutput()
		var rep report.Report
		if b, rerr := os.ReadFile(output); rerr != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("%s: no report (%v):\n%s", target, rerr, out)
		}
		i := slices.IndexFunc(rep.Gates, func(g decide.Gate) bool { return g.Name == "slo_quality" })
		if i < 0 {
			t.Fatalf("%s: no slo_quality gate in %+v", target, rep.Gates)
		}
		return exitCode(err), string(out), rep.Gates[i]
	}
	code, out, g := gate("right")
	if code != 0 || !g.Passed || *g.Value != 1 || !strings.Contains(out, "PASS  slo_quality") ||
		!strings.Contains(g.Detail, "100.00% of 60 checked answers passed their checks; the target is 90.00% (the share's 95% Wilson interval: 94.0%–100.0%)") {
		t.Fatalf("right answers: exit %d, gate %+v\n%s", code, g, out)
	}
	code, out, g = gate("wrong")
	if code != 1 || g.Passed || *g.Value > 0.8 || !strings.Contains(out, "FAIL  slo_quality") || !strings.Contains(g.Detail, "of 60 checked answers passed their checks; the target is 90.00%") {
		t.Fatalf("a third wrong: exit %d, gate %+v\n%s", code, g, out)
	}
}

// Faster output may be worse output: a candidate that decodes faster and
// answers a third of the golden prompts wrong is worse on quality, never
// better, and compare exits 1; the same fast candidate answering right is
// better.
func TestCompareFastButWrong(t *testing.T) {
	file := writeTemp(t, "golden.jsonl", goldenSet)
	cfg := goldenConfig(t, file, map[string]string{
		"right":      goldenSim(t, file, 0, 3),
		"fast-wrong": goldenSim(t, file, 0.35, 1.5),
		"fast-right": goldenSim(t, file, 0, 1.5),
	}, "right")
	run := func(candidate string) (int, string, *compare.Comparison) {
		output := filepath.Join(t.TempDir(), "compare.json")
		out, err := exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=golden", "--baseline=right", "--candidate="+candidate, "--output="+output).CombinedOutput()
		var c compare.Comparison
		if b, rerr := os.ReadFile(output); rerr != nil || json.Unmarshal(b, &c) != nil {
			t.Fatalf("%s: no comparison (%v):\n%s", candidate, rerr, out)
		}
		return exitCode(err), string(out), &c
	}
	metric := func(c *compare.Comparison, name string) decide.Metric {
		i := slices.IndexFunc(c.Metrics, func(m decide.Metric) bool { return m.Name() == name })
		if i < 0 {
			t.Fatalf("no %s among %+v", name, c.Metrics)
		}
		return c.Metrics[i]
	}
	code, out, c := run("fast-wrong")
	q, tpot := metric(c, "quality"), metric(c, "tpot p50")
	if code != 1 || c.Verdict != decide.Worse || q.Verdict != decide.Worse || q.Pairs != 360 || *q.Estimate > -0.2 {
		t.Fatalf("fast but wrong: exit %d, verdict %q, quality %+v\n%s", code, c.Verdict, q, out)
	}
	if tpot.Verdict != decide.Better {
		t.Errorf("the fast candidate's TPOT is %q, want better: the test needs a faster candidate\n%s", tpot.Verdict, out)
	}
	_, headline, _ := strings.Cut(out, "compare: candidate")
	if headline, _, _ = strings.Cut(headline, "\n"); !strings.Contains(headline, "quality -") || !strings.Contains(out, "answers passing their checks 100.0 % of 360") {
		t.Errorf("the output does not say the answers are worse beside each side's share:\n%s", out)
	}
	code, out, c = run("fast-right")
	if q := metric(c, "quality"); code != 0 || c.Verdict != decide.Better || q.Verdict == decide.Worse {
		t.Fatalf("fast and right: exit %d, verdict %q, quality %+v\n%s", code, c.Verdict, q, out)
	}
}
