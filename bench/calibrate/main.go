// Command calibrate checks `llmprobe compare` (and, with -mode=gates, the
// regression gates of `llmprobe gate --baseline`) against simulated engines
// whose true difference is known. It starts one truth-stamping baseline sim and one
// candidate sim per condition (the candidate's decode step N % slower, or
// identical), runs the real binary's compare between them again and again,
// optionally beside busy loops that steal CPU, and after every run compares
// the TPOT p50 interval with the ratio of the engines' own median TPOTs. It
// prints one table: exit codes, how often the interval covered the truth,
// how wide the intervals were, and how long a run took.
//
//	go build -o bin/llmprobe ./cmd/llmprobe
//	go run ./bench/calibrate                               # 10 runs of identical, 15, 25, 40 % (hours)
//	go run ./bench/calibrate -dry -busy=0 -rounds=2        # one identical run: checks the bench works
//	go run ./bench/calibrate -conditions=identical,40 -runs=20 -json=calibrate.json -out=DIR
//	go run ./bench/calibrate -mode=gates -conditions=identical,8,40 -runs=10   # one baseline run, N candidate runs each
//	go run ./bench/calibrate -mode=knee -runs=3                                # the documented sweep, seeds 1-3
//
// `make calibrate` runs both, quiet and busy, beside the simulated days of
// the always-on judge and the knee's coverage across seeds.
//
// Every run keeps its compare JSON, stdout, stderr and the sims' truth under
// -out (a temp dir unless given), beside the config it used.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The baseline sim's decode step: its defaults, which a condition scales.
const (
	decodeBase   = 10 * time.Millisecond
	decodePerSeq = 200 * time.Microsecond
)

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/llmprobe", "a built llmprobe binary")
	flag.IntVar(&o.runs, "runs", 10, "compare runs per condition")
	flag.IntVar(&o.rounds, "rounds", 0, "passed to compare as --rounds (0: compare's default)")
	flag.IntVar(&o.parallel, "parallel", 1, "knee mode: sweeps run side by side, each against a sim of its own")
	flag.IntVar(&o.busy, "busy", 2, "busy loops (sh -c 'while :; do :; done') running beside each compare run")
	conds := flag.String("conditions", "identical,15,25,40", "comma list: identical, or N for a candidate whose decode step is N % slower")
	flag.StringVar(&o.out, "out", "", "directory for the config, the sims' logs and every run's artefacts (default: a new temp dir)")
	flag.StringVar(&o.jsonPath, "json", "", "write the table and every run as JSON here (empty: do not)")
	dry := flag.Bool("dry", false, "one run of the identical condition only: checks the bench works")
	flag.StringVar(&o.mode, "mode", "compare", "compare: llmprobe compare runs; gates: llmprobe gate --baseline runs against one baseline run; knee: the documented sweep with seeds 1 to -runs against the long-run knee")
	flag.Parse()

	var err error
	if *dry {
		o.runs, *conds = 1, "identical"
	}
	if o.conditions, err = parseConditions(*conds); err != nil {
		fail(err)
	}
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", "llmprobe-calibrate-"); err != nil {
			fail(err)
		}
	} else if err := os.MkdirAll(o.out, 0o755); err != nil {
		fail(err)
	}
	if o.binary, err = filepath.Abs(o.binary); err != nil {
		fail(err)
	}

	// A signal cancels ctx: the running compare is killed, and run's
	// deferred cleanup stops the sims and busy loops before we exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(os.Stderr, "artefacts:", o.out)
	switch o.mode {
	case "gates":
		results, err := runGates(ctx, o, os.Stderr)
		printGates(os.Stdout, o.conditions, results, o.busy)
		if err != nil {
			fail(err)
		}
		return
	case "knee":
		truth, results, err := runKnee(ctx, o, os.Stderr)
		printKnee(os.Stdout, truth, results)
		if err != nil {
			fail(err)
		}
		return
	case "compare":
	default:
		fail(fmt.Errorf("-mode %q: want compare, gates or knee", o.mode))
	}
	results, err := run(ctx, o, os.Stderr)
	rows := summarize(o.conditions, results)
	printTable(os.Stdout, rows)
	if o.jsonPath != "" {
		b, _ := json.MarshalIndent(struct {
			Rows []Row    `json:"rows"`
			Runs []Result `json:"runs"`
		}{rows, results}, "", "  ")
		if werr := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); werr != nil {
			fail(werr)
		}
		fmt.Println("\nwritten:", o.jsonPath)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/calibrate:", err)
	os.Exit(1)
}

type options struct {
	mode       string
	binary     string
	runs       int
	rounds     int
	busy       int
	parallel   int
	conditions []condition
	out        string
	jsonPath   string
}

// condition is one candidate: its decode step slower than the baseline's by
// slower percent (0: identical, the baseline's defaults).
type condition struct {
	name   string
	slower float64
}

func parseConditions(s string) ([]condition, error) {
	var out []condition
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		c := condition{name: f}
		if f != "identical" {
			n, err := strconv.ParseFloat(f, 64)
			if err != nil || n <= -100 {
				return nil, fmt.Errorf("condition %q: want identical or a percentage", f)
			}
			c.slower = n
		}
		if slices.ContainsFunc(out, func(d condition) bool { return d.name == c.name }) {
			return nil, fmt.Errorf("condition %q given twice", f)
		}
		out = append(out, c)
	}
	return out, nil
}

func (c condition) target() string { return "cand-" + c.name }

// simFlags are the candidate sim's decode flags; identical keeps the defaults.
func (c condition) simFlags() []string {
	if c.name == "identical" {
		return nil
	}
	scale := func(d time.Duration) string {
		return time.Duration(math.Round(float64(d) * (1 + c.slower/100))).String()
	}
	return []string{"--sim.decode-base=" + scale(decodeBase), "--sim.decode-per-seq=" + scale(decodePerSeq)}
}

// run starts the sims, runs every condition's compares and stops the sims,
// also when it fails or ctx is cancelled. It returns the runs done so far.
func run(ctx context.Context, o options, progress io.Writer) ([]Result, error) {
	var sims fleet
	defer sims.stop()
	baseline, err := sims.start(ctx, o, "stable", nil)
	if err != nil {
		return nil, err
	}
	candidates := make([]*sim, len(o.conditions))
	for i, c := range o.conditions {
		if candidates[i], err = sims.start(ctx, o, c.target(), c.simFlags()); err != nil {
			return nil, err
		}
	}
	config := filepath.Join(o.out, "compare.yml")
	if err := os.WriteFile(config, []byte(configYAML(baseline, o.conditions, candidates)), 0o644); err != nil {
		return nil, err
	}

	var results []Result
	for i, c := range o.conditions {
		for k := range o.runs {
			r := runner{o: o, config: config, cond: c, baseline: baseline, candidate: candidates[i], index: k + 1}
			res, err := r.run(ctx)
			if err != nil {
				return results, fmt.Errorf("%s run %d: %w", c.name, k+1, err)
			}
			fmt.Fprintln(progress, res.line(o.runs))
			results = append(results, res)
		}
	}
	return results, nil
}

// configYAML is docs/decisions.md's worked example with one candidate
// target per condition.
func configYAML(baseline *sim, conds []condition, candidates []*sim) string {
	var b strings.Builder
	b.WriteString("targets:\n")
	fmt.Fprintf(&b, "  - {name: stable, url: %q}\n", baseline.url())
	for i, c := range conds {
		fmt.Fprintf(&b, "  - {name: %s, url: %q}\n", c.target(), candidates[i].url())
	}
	b.WriteString(`scenarios:
  - name: chat
    prompt_tokens: {distribution: uniform, min: 64, max: 256}
    output_tokens: 32
    slo: {ttft: 2s, target_ratio: 0.95}
` + releaseBurst)
	return b.String()
}

// releaseBurst is the burst both calibrations run: 200 requests at 20/s
// against the stable target, seeded.
const releaseBurst = `bursts:
  - name: release
    target: stable
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    requests: 200
    warmup: {requests: 5}
    seed: 42
`

// sim is one `llmprobe sim` child process.
type sim struct {
	name string
	addr string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
}

func (s *sim) url() string { return "http://" + s.addr }

// ready polls GET /v1/models until it answers 200, for up to 10 s.
func (s *sim) ready(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if status, _, err := get(ctx, s.url()+"/v1/models"); err == nil && status == http.StatusOK {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("sim %s exited before it answered (see %s)", s.name, s.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("sim %s did not answer at %s within 10s (see %s)", s.name, s.addr, s.log.Name())
}

// truth drains the sim's truth log: everything since the last call.
func (s *sim) truth(ctx context.Context) ([]byte, error) {
	status, body, err := get(ctx, s.url()+"/sim/truth")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("sim %s: GET /sim/truth: status %d", s.name, status)
	}
	return body, nil
}

func (s *sim) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
	s.log.Close()
}

// fleet is every sim started, so that all of them are stopped at the end.
type fleet []*sim

func (f *fleet) start(ctx context.Context, o options, name string, flags []string) (*sim, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(o.out, "sim-"+name+".log"))
	if err != nil {
		return nil, err
	}
	args := append([]string{"sim", "--sim.listen-address=" + addr, "--sim.truth-stamps"}, flags...)
	s := &sim{name: name, addr: addr, cmd: exec.Command(o.binary, args...), log: log, done: make(chan struct{})}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("sim %s: %w", name, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	*f = append(*f, s)
	return s, s.ready(ctx)
}

// stop has a pointer receiver: run defers it before the sims are started.
func (f *fleet) stop() {
	for _, s := range *f {
		s.stop()
	}
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func get(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// busyLoops are shell loops that compete with compare for the CPUs, as a
// loaded CI runner would.
type busyLoops []*exec.Cmd

func startBusy(n int) (busyLoops, error) {
	var b busyLoops
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			b.stop()
			return nil, err
		}
		b = append(b, c)
	}
	return b, nil
}

// stop kills the loops; `:` is a builtin, so the shell is the whole loop.
func (b busyLoops) stop() {
	for _, c := range b {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
}

// runner is one compare run of one condition.
type runner struct {
	o         options
	config    string
	cond      condition
	baseline  *sim
	candidate *sim
	index     int
}

func (r runner) path(ext string) string {
	return filepath.Join(r.o.out, fmt.Sprintf("%s-%02d.%s", r.cond.name, r.index, ext))
}

func (r runner) run(ctx context.Context) (Result, error) {
	res := Result{Condition: r.cond.name, Run: r.index, Output: r.path("json")}
	// Drain what earlier runs left, so the truth is this run's alone.
	for _, s := range []*sim{r.baseline, r.candidate} {
		if _, err := s.truth(ctx); err != nil {
			return res, err
		}
	}
	args := []string{"compare", "--config.file=" + r.config, "--burst=release", "--baseline=stable", "--candidate=" + r.cond.target()}
	if r.o.rounds > 0 {
		args = append(args, "--rounds="+strconv.Itoa(r.o.rounds))
	}
	args = append(args, "--output="+res.Output)
	stdout, err := os.Create(r.path("txt"))
	if err != nil {
		return res, err
	}
	defer stdout.Close()
	stderr, err := os.Create(r.path("err"))
	if err != nil {
		return res, err
	}
	defer stderr.Close()

	busy, err := startBusy(r.o.busy)
	if err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, r.o.binary, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err = cmd.Run()
	res.WallSeconds = time.Since(start).Seconds()
	busy.stop()
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode() // -1: killed by a signal, counted as other
	case err != nil:
		return res, err
	}

	base, err := r.baseline.truth(ctx)
	if err != nil {
		return res, err
	}
	cand, err := r.candidate.truth(ctx)
	if err != nil {
		return res, err
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"baseline": base, "candidate": cand})
	if err := os.WriteFile(r.path("truth.json"), b, 0o644); err != nil {
		return res, err
	}
	if res.Truth, err = truthRatio(base, cand); err != nil {
		return res, err
	}
	if err := res.readCompare(); err != nil {
		// No JSON (compare failed early): the run counts by its exit code.
		res.Problem = err.Error()
	}
	if t, i := res.Truth.Ratio, res.Metrics["tpot"]; t != nil && i.Lower != nil && i.Upper != nil {
		covered := *i.Lower <= *t && *t <= *i.Upper
		res.Covered = &covered
	}
	return res, nil
}

// Result is one compare run.
type Result struct {
	Condition   string  `json:"condition"`
	Run         int     `json:"run"`
	ExitCode    int     `json:"exit_code"`
	WallSeconds float64 `json:"wall_seconds"`
	Verdict     string  `json:"verdict"`
	Truth       Truth   `json:"truth"`
	// Metrics holds the p50 interval of ttft, tpot, itl and e2e.
	Metrics map[string]Interval `json:"p50"`
	// Covered: whether the TPOT p50 interval holds the truth ratio; null
	// where either is missing.
	Covered *bool  `json:"tpot_p50_covered"`
	Output  string `json:"output"`
	Problem string `json:"problem,omitempty"`
}

// Interval is one metric's estimate and 95 % interval, as compare wrote them.
type Interval struct {
	Estimate *float64 `json:"estimate"`
	Lower    *float64 `json:"lower"`
	Upper    *float64 `json:"upper"`
	Verdict  string   `json:"verdict"`
}

// halfWidthPct is the interval's half-width as a percentage of the estimate.
func (i Interval) halfWidthPct() (float64, bool) {
	if i.Estimate == nil || i.Lower == nil || i.Upper == nil || *i.Estimate == 0 {
		return 0, false
	}
	return (*i.Upper - *i.Lower) / 2 / *i.Estimate * 100, true
}

func (i Interval) String() string {
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	return fmt.Sprintf("%s [%s, %s]", f(i.Estimate), f(i.Lower), f(i.Upper))
}

// readCompare reads the run's compare JSON: its verdict and p50 intervals.
func (r *Result) readCompare() error {
	b, err := os.ReadFile(r.Output)
	if err != nil {
		return err
	}
	var doc struct {
		Verdict string `json:"verdict"`
		Metrics []struct {
			Metric   string `json:"metric"`
			Quantile string `json:"quantile"`
			Interval
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", r.Output, err)
	}
	r.Verdict, r.Metrics = doc.Verdict, map[string]Interval{}
	for _, m := range doc.Metrics {
		if m.Quantile == "p50" && slices.Contains([]string{"ttft", "tpot", "itl", "e2e"}, m.Metric) {
			r.Metrics[m.Metric] = m.Interval
		}
	}
	return nil
}

func (r Result) line(runs int) string {
	s := fmt.Sprintf("%s run %d/%d: exit %d, %.1fs, verdict %q, tpot p50 %s, truth",
		r.Condition, r.Run, runs, r.ExitCode, r.WallSeconds, r.Verdict, r.Metrics["tpot"])
	if r.Truth.Ratio == nil {
		s += " -"
	} else {
		s += fmt.Sprintf(" %.3f", *r.Truth.Ratio)
	}
	switch {
	case r.Covered == nil:
	case *r.Covered:
		s += ", covered"
	default:
		s += ", NOT covered"
	}
	if r.Problem != "" {
		s += " (" + r.Problem + ")"
	}
	return s
}

// Truth is the engines' own TPOT: per request with at least 3 output
// chunks, the mean gap from its first to its last chunk.
type Truth struct {
	BaselineRequests  int      `json:"baseline_requests"`
	CandidateRequests int      `json:"candidate_requests"`
	BaselineTPOTMs    *float64 `json:"baseline_tpot_p50_ms"`
	CandidateTPOTMs   *float64 `json:"candidate_tpot_p50_ms"`
	// Ratio is the Hodges–Lehmann estimate of the paired log ratios of the
	// engines' own TPOTs, the same estimand compare's TPOT p50 has, over the
	// same pairs: both sims got the same requests in the same order, so the
	// i-th request each read is one pair. Paired is false where the counts
	// differ and Ratio is the ratio of the two medians instead.
	Ratio   *float64 `json:"ratio"`
	Paired  bool     `json:"paired"`
	Dropped int      `json:"dropped"`
}

// truthRatio reads both sims' GET /sim/truth answers.
func truthRatio(baseline, candidate []byte) (Truth, error) {
	var t Truth
	b, bd, err := tpots(baseline)
	if err != nil {
		return t, fmt.Errorf("baseline truth: %w", err)
	}
	c, cd, err := tpots(candidate)
	if err != nil {
		return t, fmt.Errorf("candidate truth: %w", err)
	}
	t.BaselineRequests, t.CandidateRequests, t.Dropped = len(b), len(c), bd+cd
	if len(b) == 0 || len(c) == 0 {
		return t, nil
	}
	bm, cm := median(b), median(c)
	t.BaselineTPOTMs, t.CandidateTPOTMs = ptr(bm/1e6), ptr(cm/1e6)
	if len(b) == len(c) {
		logs := make([]float64, len(b))
		for i := range b {
			logs[i] = math.Log(c[i] / b[i])
		}
		t.Ratio, t.Paired = ptr(math.Exp(hodgesLehmann(logs))), true
	} else if bm > 0 {
		t.Ratio = ptr(cm / bm)
	}
	return t, nil
}

// hodgesLehmann is the median of the Walsh averages of xs.
func hodgesLehmann(xs []float64) float64 {
	walsh := make([]float64, 0, len(xs)*(len(xs)+1)/2)
	for i := range xs {
		for j := i; j < len(xs); j++ {
			walsh = append(walsh, (xs[i]+xs[j])/2)
		}
	}
	return median(walsh)
}

// tpots are the truth's per-request TPOTs in nanoseconds, in the order the
// engine read the requests, and its dropped count.
func tpots(truth []byte) ([]float64, int, error) {
	var rec struct {
		Stamps   map[string][]int64 `json:"stamps"`
		Received map[string]struct {
			Read int64 `json:"read"`
		} `json:"received"`
		Dropped int `json:"dropped"`
	}
	if err := json.Unmarshal(truth, &rec); err != nil {
		return nil, 0, err
	}
	ids := make([]string, 0, len(rec.Stamps))
	for id, s := range rec.Stamps {
		if len(s) >= 3 {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(rec.Received[a].Read, rec.Received[b].Read) })
	out := make([]float64, len(ids))
	for i, id := range ids {
		s := rec.Stamps[id]
		out[i] = float64(s[len(s)-1]-s[0]) / float64(len(s)-1)
	}
	return out, rec.Dropped, nil
}

// Row is one line of the table: one condition, or "all".
type Row struct {
	Condition string `json:"condition"`
	Runs      int    `json:"runs"`
	Exit0     int    `json:"exit_0"`
	Exit1     int    `json:"exit_1"`
	Exit3     int    `json:"exit_3"`
	ExitOther int    `json:"exit_other"`
	// Covered of Coverable runs had the truth ratio in the TPOT p50
	// interval; Coverable counts the runs with both.
	Covered   int `json:"tpot_p50_covered"`
	Coverable int `json:"tpot_p50_coverable"`
	// HoldOne of HoldOneOf p50 intervals (ttft, tpot, itl, e2e) of
	// identical sims held 1, the ratio they are known to have.
	HoldOne   int `json:"identical_p50s_holding_1"`
	HoldOneOf int `json:"identical_p50s"`
	// Medians over the runs; null where no run had the figure.
	TruthRatio        *float64 `json:"truth_ratio_median"`
	TPOTEstimate      *float64 `json:"tpot_p50_estimate_median"`
	TPOTHalfWidthPct  *float64 `json:"tpot_p50_half_width_pct_median"`
	TTFTHalfWidthPct  *float64 `json:"ttft_p50_half_width_pct_median"`
	WallSecondsMedian *float64 `json:"wall_seconds_median"`
}

func summarize(conds []condition, results []Result) []Row {
	var rows []Row
	for _, c := range conds {
		rows = append(rows, summarizeRuns(c.name, func(r Result) bool { return r.Condition == c.name }, results))
	}
	return append(rows, summarizeRuns("all", func(Result) bool { return true }, results))
}

func summarizeRuns(name string, keep func(Result) bool, results []Result) Row {
	row := Row{Condition: name}
	var truth, est, tpotHW, ttftHW, wall []float64
	for _, r := range results {
		if !keep(r) {
			continue
		}
		row.Runs++
		switch r.ExitCode {
		case 0:
			row.Exit0++
		case 1:
			row.Exit1++
		case 3:
			row.Exit3++
		default:
			row.ExitOther++
		}
		if r.Covered != nil {
			row.Coverable++
			if *r.Covered {
				row.Covered++
			}
		}
		if r.Truth.Ratio != nil {
			truth = append(truth, *r.Truth.Ratio)
		}
		if r.Condition == "identical" {
			for _, m := range r.Metrics {
				if m.Lower != nil && m.Upper != nil {
					row.HoldOneOf++
					if *m.Lower <= 1 && 1 <= *m.Upper {
						row.HoldOne++
					}
				}
			}
		}
		if e := r.Metrics["tpot"].Estimate; e != nil {
			est = append(est, *e)
		}
		if hw, ok := r.Metrics["tpot"].halfWidthPct(); ok {
			tpotHW = append(tpotHW, hw)
		}
		if hw, ok := r.Metrics["ttft"].halfWidthPct(); ok {
			ttftHW = append(ttftHW, hw)
		}
		wall = append(wall, r.WallSeconds)
	}
	row.TruthRatio, row.TPOTEstimate = medianOrNil(truth), medianOrNil(est)
	row.TPOTHalfWidthPct, row.TTFTHalfWidthPct = medianOrNil(tpotHW), medianOrNil(ttftHW)
	row.WallSecondsMedian = medianOrNil(wall)
	return row
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tRUNS\tEXIT 0\tEXIT 1\tEXIT 3\tOTHER\tTPOT P50 COVERS TRUTH\tIDENTICAL P50S HOLD 1\tTRUTH\tTPOT P50\tTPOT P50 ±%\tTTFT P50 ±%\tWALL S")
	for _, r := range rows {
		held := "-"
		if r.HoldOneOf > 0 {
			held = fmt.Sprintf("%d of %d", r.HoldOne, r.HoldOneOf)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d of %d\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.Condition, r.Runs, r.Exit0, r.Exit1, r.Exit3, r.ExitOther, r.Covered, r.Coverable, held,
			num(r.TruthRatio, 3), num(r.TPOTEstimate, 3), num(r.TPOTHalfWidthPct, 2), num(r.TTFTHalfWidthPct, 2), num(r.WallSecondsMedian, 1))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nTRUTH and TPOT P50: medians over the runs of the engines' own paired ratio and of compare's estimate; ±%: median half-width of the 95 % interval, as % of the estimate; IDENTICAL P50S HOLD 1: of the four p50 intervals of each identical run, those holding 1.")
}

func num(p *float64, prec int) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianOrNil(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	return ptr(median(xs))
}

func ptr(f float64) *float64 { return &f }
