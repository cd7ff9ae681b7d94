package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	simengine "github.com/llmprobe/llmprobe/sim"
)

// The documented sweep's engine (docs/decisions.md, "Sweeps"): 4 slots,
// 5 ms decode steps growing 1 ms a sequence.
var kneeSimFlags = []string{"--sim.max-batch=4", "--sim.decode-base=5ms", "--sim.decode-per-seq=1ms"}

// kneeYAML is the documented sweep with the given seed.
func kneeYAML(target *sim, seed int) string {
	return fmt.Sprintf(`targets:
  - {name: sim, url: %q}
scenarios:
  - name: chat
    prompt_tokens: 64
    output_tokens: 32
    slo: {ttft: 300ms, tpot: 100ms, target_ratio: 0.9}
bursts:
  - name: curve
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {process: poisson}
    requests: 600
    seed: %d
    sweep: {auto: {start: 4, step: 4, max: 24, resolution: 1}}
    capacity: {target_rate: 100, headroom: 0.2, gpus_per_instance: 1}
    cost: {per_gpu_hour: 2.5}
`, target.url(), seed)
}

// longRunKnee is the documented sweep's engine's long-run knee: the rate
// whose goodput over five simulated hours of its own scheduler is 90 %.
func longRunKnee() (float64, error) {
	cfg := simengine.DefaultConfig()
	cfg.MaxBatch, cfg.DecodeBase, cfg.DecodePerSeq = 4, 5*time.Millisecond, time.Millisecond
	w := simengine.Workload{PromptTokens: 64, OutputTokens: 32, TTFT: 300 * time.Millisecond, TPOT: 100 * time.Millisecond, Duration: 5 * time.Hour, Seed: 1}
	return simengine.LongRunKnee(cfg, w, 0.9, 1, 24, 0.02)
}

// KneeResult is one seed's sweep.
type KneeResult struct {
	Seed            int      `json:"seed"`
	Passing         *float64 `json:"passing"`
	Failing         *float64 `json:"failing"`
	Holds           bool     `json:"holds_long_run_knee"`
	FewestInstances int      `json:"fewest_instances"`
	Instances       int      `json:"instances"`
	FleetPerMillion *float64 `json:"fleet_per_million_output"`
	WallSeconds     float64  `json:"wall_seconds"`
}

// runKnee runs the documented sweep once per seed (o.runs of them, from 1),
// o.parallel at a time, each against a sim of its own, and holds each
// knee's interval against the long-run knee. The sweeps are paced by the
// sims' clocks, not by CPU: at the sweep's rates (4–12/s) a pair of
// processes uses a few percent of a core.
func runKnee(ctx context.Context, o options, progress io.Writer) (float64, []KneeResult, error) {
	truth, err := longRunKnee()
	if err != nil {
		return 0, nil, err
	}
	fmt.Fprintf(progress, "long-run knee of the sim's engine: %.2f/s\n", truth)
	var sims fleet
	defer sims.stop()
	targets := make(chan *sim, max(o.parallel, 1))
	for k := range cap(targets) {
		target, err := sims.start(ctx, o, fmt.Sprintf("curve-%d", k), kneeSimFlags)
		if err != nil {
			return truth, nil, err
		}
		targets <- target
	}
	out := make([]KneeResult, o.runs)
	errs := make([]error, o.runs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range o.runs {
		target := <-targets
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { targets <- target }()
			out[i], errs[i] = sweepOnce(ctx, o, target, i+1, truth)
			mu.Lock()
			defer mu.Unlock()
			if errs[i] != nil {
				fmt.Fprintf(progress, "sweep seed %d: %v\n", i+1, errs[i])
				return
			}
			r := out[i]
			fmt.Fprintf(progress, "sweep seed %d/%d: knee [%s, %s), holds %.2f: %v (%.0fs)\n", r.Seed, o.runs, rateText(r.Passing), rateText(r.Failing), truth, r.Holds, r.WallSeconds)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return truth, nil, err
	}
	return truth, out, nil
}

// sweepOnce runs the documented sweep with one seed against target.
func sweepOnce(ctx context.Context, o options, target *sim, seed int, truth float64) (KneeResult, error) {
	res := KneeResult{Seed: seed}
	config := filepath.Join(o.out, fmt.Sprintf("sweep-%02d.yml", seed))
	if err := os.WriteFile(config, []byte(kneeYAML(target, seed)), 0o644); err != nil {
		return res, err
	}
	path := filepath.Join(o.out, fmt.Sprintf("sweep-%02d.json", seed))
	start := time.Now()
	args := []string{"--config.file=" + config, "--burst=curve"}
	if _, err := gate(ctx, o, args, path, fmt.Sprintf("sweep-%02d", seed)); err != nil {
		return res, err
	}
	res.WallSeconds = time.Since(start).Seconds()
	if err := res.read(path); err != nil {
		return res, fmt.Errorf("seed %d: %w", seed, err)
	}
	res.Holds = res.Passing != nil && *res.Passing <= truth && (res.Failing == nil || truth < *res.Failing)
	return res, nil
}

func (r *KneeResult) read(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep struct {
		Knee struct {
			Passing  *float64 `json:"passing"`
			Failing  *float64 `json:"failing"`
			Capacity *struct {
				Instances       int `json:"instances"`
				FewestInstances int `json:"fewest_instances"`
			} `json:"capacity"`
			Fleet *struct {
				PerMillionOutput *float64 `json:"per_million_output_tokens"`
			} `json:"fleet_cost"`
		} `json:"knee"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	k := rep.Knee
	r.Passing, r.Failing = k.Passing, k.Failing
	if k.Capacity != nil {
		r.Instances, r.FewestInstances = k.Capacity.Instances, k.Capacity.FewestInstances
	}
	if k.Fleet != nil {
		r.FleetPerMillion = k.Fleet.PerMillionOutput
	}
	return nil
}

func printKnee(w io.Writer, truth float64, results []KneeResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "seed\tknee (/s)\tholds the long-run knee\tinstances for 100/s + 20 %\tfleet per M output tokens\twall")
	held := 0
	for _, r := range results {
		if r.Holds {
			held++
		}
		inst := fmt.Sprint(r.Instances)
		if r.FewestInstances > 0 && r.FewestInstances < r.Instances {
			inst = fmt.Sprintf("%d–%d", r.FewestInstances, r.Instances)
		}
		fmt.Fprintf(tw, "%d\t[%s, %s)\t%v\t%s\t%s\t%.0f s\n", r.Seed, rateText(r.Passing), rateText(r.Failing), r.Holds, inst, num(r.FleetPerMillion, 3), r.WallSeconds)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d of %d knee intervals hold the long-run knee %.2f/s\n", held, len(results), truth)
}

func rateText(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%g", *p)
}
