package render

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/decide"
)

func ptr(v float64) *float64 { return &v }

func comparison() *compare.Comparison {
	return &compare.Comparison{
		Burst: "release", Seed: 9, Rounds: 2, Order: []string{"baseline", "candidate", "candidate", "baseline"}, Pairs: 80,
		Baseline:  compare.Side{Target: "stable", URL: "http://a", Model: "m", Requests: 80, Succeeded: 80, Good: 80, Samples: map[string][]float64{"tpot": {0.010, 0.011, 0.012}}},
		Candidate: compare.Side{Target: "next|<b>", URL: "http://b", Model: "m", Requests: 80, Succeeded: 80, Good: 78, Samples: map[string][]float64{"tpot": {0.014, 0.015, 0.017}}},
		Metrics: []decide.Metric{
			{Metric: "tpot", Quantile: "p50", Pairs: 80, Estimate: ptr(1.4), Lower: ptr(1.35), Upper: ptr(1.46), P: ptr(0.00001), Tolerance: 0.1, Rounds: []*float64{ptr(1.38), ptr(1.42)}, Judged: true, Verdict: decide.Worse},
			{Metric: "tpot", Quantile: "p99", Method: decide.MethodQuantileRatio, Pairs: 80, Needs: 736, Estimate: ptr(1.3), Rounds: []*float64{ptr(1.2), nil}, Verdict: decide.TooFew},
			{Metric: "ttft", Quantile: "p50", Pairs: 80, Estimate: ptr(0.95), Lower: ptr(0.9), Upper: ptr(0.99), Tolerance: 0.1, Rounds: []*float64{ptr(0.94), ptr(0.96)}, Judged: true, Verdict: decide.Within},
			{Metric: "goodput", Pairs: 80, Estimate: ptr(-0.025), Lower: ptr(-0.08), Upper: ptr(0.03), Tolerance: 0.02, Rounds: []*float64{ptr(0), ptr(-0.05)}, Judged: true, Verdict: decide.NotEnough, SettleRounds: 12},
		},
		Verdict: decide.Worse,
	}
}

// The text reads top-down: the verdict with what decided it first, then
// the sides, the table, throughput and the client.
func TestText(t *testing.T) {
	var b bytes.Buffer
	Text(&b, comparison())
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "compare: candidate next|<b> vs baseline stable: worse: TPOT p50 +40.0 % (95 % CI +35.0 … +46.0 %)" {
		t.Errorf("first line: %q", lines[0])
	}
	for _, want := range []string{
		"order B C C B",
		"tpot p50  80     1.400               [1.350, 1.460]                    <0.0001  1.380 1.420     worse (beyond 10 %)",
		"tpot p99  80     1.300               too few, needs 736 (368 a round)  -        1.200 n/a       too few, not judged",
		"ttft p50  80     0.950               [0.900, 0.990]                    -        0.940 0.960     within tolerance (10 %)",
		"goodput   80     -2.5 pp             [-8.0 pp, +3.0 pp]                -        0.0 pp -5.0 pp  not enough evidence (across 2.0 pp)",
		"judged: tpot p50, ttft p50, goodput (the others are printed, not judged)",
		"throughput (reported, not judged): baseline n/a req/s",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

func TestMarkdownAndJUnit(t *testing.T) {
	var md bytes.Buffer
	if err := Markdown(&md, comparison()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), `next\|<b>`) || !strings.Contains(md.String(), "| tpot p50 | 80 | 1.400 | [1.350, 1.460] | <0.0001 | 1.380 1.420 | **worse (beyond 10 %)** |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var j bytes.Buffer
	if err := JUnit(&j, comparison()); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(j.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suite
	if s.Tests != 5 || s.Failures != 1 || s.Skipped != 1 || s.Errors != 1 || s.Cases[0].Failure == nil ||
		s.Cases[0].Failure.Message != "TPOT p50 worse: +40.0 % (95 % CI +35.0 … +46.0 %) beyond the 10 % tolerance" {
		t.Errorf("junit: %+v", s)
	}
	c := comparison()
	c.Verdict, c.Reasons = decide.NotEnough, []string{c.Metrics[3].Unsettled()}
	j.Reset()
	want := `<error message="not enough evidence: goodput: the interval reaches across the 2 pp tolerance; 12 rounds at this spread would settle it (--rounds=12)">`
	if err := JUnit(&j, c); err != nil || !strings.Contains(j.String(), `<error message="goodput: the interval reaches across`) || !strings.Contains(j.String(), want) {
		t.Errorf("not enough evidence in junit: %v\n%s", err, j.String())
	}
}

// The page draws each side's distribution of a metric with samples, and
// escapes what the configuration names.
func TestHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, comparison()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `<polyline class="side"`); n != 2 {
		t.Errorf("%d distributions drawn, want the two sides of tpot", n)
	}
	if strings.Contains(page, "next|<b>") || !strings.Contains(page, "next|&lt;b&gt;") {
		t.Error("a target name is not escaped")
	}
	if !strings.Contains(page, `<tr class="worse"><td>tpot p50</td>`) {
		t.Errorf("the worse row is not marked:\n%s", page)
	}
}

// The quality row reads in points with its tolerance, each side's share of
// answers passing their checks stands beside its latency, and a worse
// quality decides the headline as latencies do.
func TestQualityRendered(t *testing.T) {
	c := comparison()
	c.Baseline.QualityChecked, c.Baseline.QualityPassed = 80, 79
	c.Candidate.QualityChecked, c.Candidate.QualityPassed = 80, 66
	c.Metrics = []decide.Metric{
		{Metric: "ttft", Quantile: "p50", Pairs: 80, Estimate: ptr(0.6), Lower: ptr(0.55), Upper: ptr(0.65), P: ptr(0.00001), Tolerance: 0.1, Rounds: []*float64{ptr(0.6), ptr(0.6)}, Judged: true, Verdict: decide.Better},
		{Metric: "quality", Method: decide.MethodMcNemar, Pairs: 80, Needs: 300, Estimate: ptr(-0.1625), Lower: ptr(-0.25), Upper: ptr(-0.08), P: ptr(0.0002), Tolerance: 0.02, Rounds: []*float64{ptr(-0.15), ptr(-0.175)}, Judged: true, Verdict: decide.Worse},
	}
	var b bytes.Buffer
	Text(&b, c)
	for _, want := range []string{
		"compare: candidate next|<b> vs baseline stable: worse: quality -16.2 pp (95 % CI -25.0 pp … -8.0 pp)\n",
		"baseline   stable (http://a), model m: 80 requests, 80 succeeded, 80 good, answers passing their checks 98.8 % of 80\n",
		"candidate  next|<b> (http://b), model m: 80 requests, 80 succeeded, 78 good, answers passing their checks 82.5 % of 80\n",
		"quality   80     -16.2 pp            [-25.0 pp, -8.0 pp]  0.0002   -15.0 pp -17.5 pp  worse (beyond 2.0 pp)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	c.Metrics[1].Verdict, c.Metrics[1].Estimate, c.Metrics[1].Lower, c.Metrics[1].Upper = decide.Within, ptr(-0.0125), ptr(-0.0195), ptr(-0.005)
	b.Reset()
	Text(&b, c)
	if !strings.Contains(b.String(), "within tolerance (2.0 pp)") {
		t.Errorf("a significant drop within the tolerance is not said:\n%s", b.String())
	}
}
