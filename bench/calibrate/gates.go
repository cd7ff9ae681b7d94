package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// gatesYAML is the regression gates' calibration burst: 200 requests at
// 20/s, TTFT and TPOT p50 gated at +20 % and goodput at 5 points, on the
// assumed spread (one run a side, nothing stored).
func gatesYAML(baseline *sim) string {
	return fmt.Sprintf(`targets:
  - {name: stable, url: %q}
scenarios:
  - name: chat
    prompt_tokens: 32
    output_tokens: 16
    slo: {ttft: 2s, target_ratio: 0.95}
`, baseline.url()) + releaseBurst + `    max_regression:
      - {metric: ttft, quantile: p50, max_increase: 0.2}
      - {metric: tpot, quantile: p50, max_increase: 0.2}
      - {metric: goodput, max_drop: 0.05}
`
}

// gateSimFlags are the gates' sims, as in docs/decisions.md's regression
// gate example: 20 ms decode steps (slower by the condition), 1 ms prefill.
func gateSimFlags(c condition) []string {
	decode := time.Duration(math.Round(float64(20*time.Millisecond) * (1 + c.slower/100)))
	return []string{"--sim.decode-base=" + decode.String(), "--sim.prefill-base=1ms"}
}

// GateResult is one candidate gate run against the baseline's report.
type GateResult struct {
	Condition string `json:"condition"`
	Run       int    `json:"run"`
	ExitCode  int    `json:"exit_code"`
	// Change holds each regression gate's change (a fraction; goodput's in
	// points as a fraction), by gate name.
	Change      map[string]float64 `json:"change"`
	WallSeconds float64            `json:"wall_seconds"`
}

// runGates runs one baseline gate against the stable sim and then, per
// condition, runs of `llmprobe gate --baseline` against its candidate sim.
func runGates(ctx context.Context, o options, progress io.Writer) ([]GateResult, error) {
	var sims fleet
	defer sims.stop()
	baseline, err := sims.start(ctx, o, "stable", gateSimFlags(condition{name: "identical"}))
	if err != nil {
		return nil, err
	}
	config := filepath.Join(o.out, "gates.yml")
	if err := os.WriteFile(config, []byte(gatesYAML(baseline)), 0o644); err != nil {
		return nil, err
	}
	base := filepath.Join(o.out, "gates-baseline.json")
	release := []string{"--config.file=" + config, "--burst=release"}
	if _, err := gate(ctx, o, release, base, "baseline"); err != nil {
		return nil, err
	}
	var out []GateResult
	for _, c := range o.conditions {
		cand, err := sims.start(ctx, o, c.target(), gateSimFlags(c))
		if err != nil {
			return out, err
		}
		for k := range o.runs {
			path := filepath.Join(o.out, fmt.Sprintf("gates-%s-%02d.json", c.name, k+1))
			start := time.Now()
			code, err := gate(ctx, o, append(release, "--baseline="+base, "--target.url="+cand.url()), path, fmt.Sprintf("gates-%s-%02d", c.name, k+1))
			if err != nil {
				return out, err
			}
			res := GateResult{Condition: c.name, Run: k + 1, ExitCode: code, WallSeconds: time.Since(start).Seconds(), Change: map[string]float64{}}
			if err := res.read(path); err != nil {
				return out, fmt.Errorf("%s run %d: %w", c.name, k+1, err)
			}
			fmt.Fprintf(progress, "gates %s run %d/%d: exit %d %v (%.0fs)\n", c.name, k+1, o.runs, code, res.Change, res.WallSeconds)
			out = append(out, res)
		}
	}
	return out, nil
}

// gate runs `llmprobe gate` with args beside o.busy busy loops, its report
// to output and nothing stored, and returns its exit code; 0, 1 and 3 are
// verdicts, anything else an error.
func gate(ctx context.Context, o options, args []string, output, name string) (int, error) {
	args = append([]string{"gate", "--storage.path=", "--output=" + output}, args...)
	logf, err := os.Create(filepath.Join(o.out, name+".txt"))
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	busy, err := startBusy(o.busy)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, o.binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	busy.stop()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case errors.As(err, &exit) && (exit.ExitCode() == 1 || exit.ExitCode() == 3):
		return exit.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("%s: %w (see %s)", name, err, logf.Name())
	}
	return 0, nil
}

// read takes the regression gates' changes from a gate's report.
func (r *GateResult) read(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep struct {
		Gates []struct {
			Name  string   `json:"name"`
			Value *float64 `json:"value"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	for _, g := range rep.Gates {
		if strings.HasPrefix(g.Name, "regression_") && g.Value != nil {
			r.Change[strings.TrimPrefix(g.Name, "regression_")] = *g.Value
		}
	}
	return nil
}

// printGates prints one row per condition: exit codes and the median change
// of each latency gate.
func printGates(w io.Writer, conds []condition, results []GateResult, busy int) {
	host := "quiet"
	if busy > 0 {
		host = fmt.Sprintf("busy (%d loops)", busy)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\tcandidate\truns\texit 0\texit 1\texit 3\tTTFT p50 change (median)\tTPOT p50 change (median)\tgoodput change (median)")
	for _, c := range conds {
		var n, codes [4]int
		var ttft, tpot, good []float64
		for _, r := range results {
			if r.Condition != c.name {
				continue
			}
			n[0]++
			if r.ExitCode < len(codes) {
				codes[r.ExitCode]++
			}
			for name, into := range map[string]*[]float64{"ttft_p50": &ttft, "tpot_p50": &tpot, "goodput": &good} {
				if v, ok := r.Change[name]; ok {
					*into = append(*into, v)
				}
			}
		}
		pct := func(xs []float64, unit string, scale float64) string {
			if len(xs) == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%+.1f %s", scale*median(xs), unit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", host, c.name, n[0], codes[0], codes[1], codes[3], pct(ttft, "%", 100), pct(tpot, "%", 100), pct(good, "pp", 100))
	}
	_ = tw.Flush()
}
