// Command scale measures llmprobe's own timing at scale: its real burst
// runner and canary scheduler drive a truth-stamping simulated engine in a
// child process, and every request's TTFT and inter-token gaps are compared
// with when the engine wrote each token. It prints one table and writes it as
// JSON, so runs can be compared.
//
//	go run ./bench/scale                  # the full ladder (a few minutes)
//	go run ./bench/scale -smoke           # seconds; CI runs it as a test
//	go run ./bench/scale -profile=DIR     # pprof CPU, alloc, block, mutex
//	go run ./bench/scale -runs=3          # the ladder 3 times: in how many runs each row's bound held
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-kit/log"
	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/bench/internal/simchild"
	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/canary"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/stats"
)

func main() {
	simchild.ServeIfChild()
	o := defaults()
	smoke := flag.Bool("smoke", false, "a few seconds at small scale: checks the bench runs, measures little")
	rates := flag.String("rates", floats(o.rates), "open-loop arrival rates, per second")
	streams := flag.String("streams", ints(o.streams), "concurrent stream counts")
	flag.DurationVar(&o.duration, "duration", o.duration, "measured time per rate")
	flag.IntVar(&o.tokens, "tokens", o.tokens, "output tokens per request")
	flag.IntVar(&o.canaryTargets, "canary.targets", o.canaryTargets, "targets of the canary row (0 leaves it out)")
	flag.IntVar(&o.canaryScenarios, "canary.scenarios", o.canaryScenarios, "scenarios per target of the canary row")
	flag.StringVar(&o.jsonPath, "json", "bench-scale.json", "write the table here as JSON (empty: do not)")
	flag.StringVar(&o.profileDir, "profile", "", "write pprof CPU, alloc, block and mutex profiles here: of the largest streams row, and of the cost row, its bare reader and the canary row in subdirectories")
	flag.Float64Var(&o.costRate, "cost.rate", o.costRate, "the rate of the row whose CPU per request is set beside a bare net/http reader's (0 leaves it out)")
	flag.DurationVar(&o.costFor, "cost.duration", o.costFor, "measured time of the cost row")
	flag.Float64Var(&o.pacerRate, "pacer.rate", o.pacerRate, "the rate of the row of the pacer alone, with a sender that does nothing (0 leaves it out)")
	flag.Float64Var(&o.dispatchRate, "dispatch.rate", o.dispatchRate, "the rate of the row whose dispatch delay is judged (0 leaves it out)")
	flag.IntVar(&o.dispatchTokens, "dispatch.tokens", o.dispatchTokens, "output tokens per request of the dispatch row")
	render := flag.Bool("render", true, "measure the /metrics render with the daemon's benchmark (needs the go command)")
	rssBin := flag.String("rss.bin", "", "measure this built llmprobe's idle RSS with bench/rss (about 70 s; empty: do not)")
	flag.IntVar(&o.runs, "runs", o.runs, "run the ladder this many times and count in how many runs each row's bound held")
	traced := flag.Bool("tracing", false, "export every request's span (sampling 1) to an OTLP sink in this process")
	flag.Parse()
	if *traced {
		stop, err := startTracing()
		if err != nil {
			fail(err)
		}
		defer stop()
	}
	if *smoke {
		runs := o.runs
		o = smokeOptions(o.jsonPath, o.profileDir)
		o.runs = runs
	} else {
		var err error
		if o.rates, err = parseList(*rates, func(f string) (float64, error) { return strconv.ParseFloat(f, 64) }); err != nil {
			fail(err)
		}
		if o.streams, err = parseList(*streams, strconv.Atoi); err != nil {
			fail(err)
		}
	}
	rows, err := run(context.Background(), o, os.Stderr)
	if err != nil {
		fail(err)
	}
	printTable(os.Stdout, rows)
	printHolds(os.Stdout, rows)
	var renderFigure, rss *[2]float64
	if *render && !*smoke {
		if renderFigure, err = renderMs(); err != nil {
			fail(err)
		}
	}
	if *rssBin != "" {
		if rss, err = idleRSS(*rssBin); err != nil {
			fail(err)
		}
	}
	gs := goals(rows, renderFigure, rss)
	printGoals(os.Stdout, gs)
	if o.jsonPath != "" {
		b, _ := json.MarshalIndent(struct {
			Rows  []Row  `json:"rows"`
			Goals []goal `json:"goals"`
		}{rows, gs}, "", "  ")
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			fail(err)
		}
		fmt.Println("\nwritten:", o.jsonPath)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/scale:", err)
	os.Exit(1)
}

type options struct {
	rates           []float64
	streams         []int
	duration        time.Duration
	tokens          int
	decodeStep      time.Duration // the engine's step: the gap between tokens
	canaryTargets   int
	canaryScenarios int
	canaryFor       time.Duration
	jsonPath        string
	profileDir      string
	runs            int // the ladder's repetitions: how often the bound held is counted over them
	// costRate and costFor: the row whose CPU per request is set beside
	// the bare net/http reader's, measured on the same engine just before.
	costRate float64
	costFor  time.Duration
	// pacerRate and pacerFor: the row of the dispatcher's pacer alone.
	pacerRate float64
	pacerFor  time.Duration
	// dispatchRate and dispatchTokens: the row whose dispatch delay is
	// judged, short answers so the streams leave the pacer room.
	dispatchRate   float64
	dispatchTokens int
}

func defaults() options {
	return options{
		rates:    []float64{10, 100, 300, 1000, 2000},
		streams:  []int{10, 1000},
		duration: 10 * time.Second, tokens: 64, decodeStep: 20 * time.Millisecond,
		canaryTargets: 100, canaryScenarios: 2, canaryFor: 10 * time.Second, runs: 1,
		costRate: 300, costFor: 8 * time.Second,
		pacerRate: 2000, pacerFor: 5 * time.Second,
		dispatchRate: 2000, dispatchTokens: 4,
	}
}

func smokeOptions(jsonPath, profileDir string) options {
	return options{
		rates: []float64{20}, streams: []int{20}, duration: time.Second, tokens: 8, decodeStep: 5 * time.Millisecond,
		canaryTargets: 3, canaryScenarios: 1, canaryFor: 1500 * time.Millisecond,
		jsonPath: jsonPath, profileDir: profileDir, runs: 1,
		costRate: 20, costFor: time.Second,
		pacerRate: 200, pacerFor: 500 * time.Millisecond,
		dispatchRate: 50, dispatchTokens: 2,
	}
}

// Row is one line of the table. Times are milliseconds; null is n/a.
type Row struct {
	Name         string   `json:"name"`
	Rate         float64  `json:"rate"`
	AchievedRate *float64 `json:"achieved_rate"`
	Requests     int      `json:"requests"`
	Succeeded    int      `json:"succeeded"`
	// Matched is how many successes were compared with the engine's truth.
	Matched     int       `json:"matched"`
	PeakStreams int       `json:"peak_streams"`
	Dispatch    Quantiles `json:"dispatch_delay_ms"`
	TTFTError   Quantiles `json:"ttft_error_ms"`
	ITLError    Quantiles `json:"itl_error_ms"`
	// Bound is the error bound the run published about itself (the
	// report's); Honest says whether the measured TTFT error p99 stayed
	// within the bound's p99 plus loopback.
	Bound     Quantiles `json:"published_bound_ms"`
	Honest    *bool     `json:"bound_honest"`
	Saturated *bool     `json:"client_saturated"`
	// Within is the share of matched requests whose TTFT error stayed
	// within the bound's p99 plus loopback: how often the bound held, not
	// only whether its p99 did.
	Within *float64 `json:"within_bound"`
	// Send is the prober's own time to write each request once sent (the
	// handshake of a new connection, the network's, left out), part of the
	// TTFT error. EmitterRead is the request written until the emitter had
	// read it (loopback transit and the emitter's own accept and read
	// lag), and EmitterAccept a new connection's handshake done until the
	// emitter accepted it: the emitter's delay, which is not the prober's
	// error. Received counts the matched requests with the emitter's receipt.
	Send          Quantiles `json:"prober_send_ms"`
	EmitterRead   Quantiles `json:"emitter_read_lag_ms"`
	EmitterAccept Quantiles `json:"emitter_accept_lag_ms"`
	Received      int       `json:"received"`
	// NewConns counts the successes that opened a connection.
	NewConns int `json:"new_connections"`
	// Run numbers the ladder's repetition the row is of, from 1.
	Run int `json:"run"`

	ttftErrors []float64 // per matched request, for Within
	// HeapPerStreamKiB and StackPerStreamKiB: live heap and goroutine stacks
	// per open stream, measured with every stream open.
	HeapPerStreamKiB  *float64 `json:"heap_per_stream_kib"`
	StackPerStreamKiB *float64 `json:"stack_per_stream_kib"`
	CPUPerRequestMs   *float64 `json:"cpu_per_request_ms"`
	// FloorCPUPerRequestMs is a bare net/http reader's CPU per request at
	// the same rate on the same engine (the cost row only), and
	// FloorComplete how many of its FloorRequests got every token.
	FloorCPUPerRequestMs *float64 `json:"floor_cpu_per_request_ms,omitempty"`
	FloorRequests        int      `json:"floor_requests,omitempty"`
	FloorComplete        int      `json:"floor_complete,omitempty"`
	// PollerCPUPerRequestMs is the spike's: one thread reading every
	// connection through one epoll set, on the same schedule.
	PollerCPUPerRequestMs *float64  `json:"poller_cpu_per_request_ms,omitempty"`
	PollerRequests        int       `json:"poller_requests,omitempty"`
	PollerComplete        int       `json:"poller_complete,omitempty"`
	GCPause               Quantiles `json:"gc_pause_ms"`
	GCCycles              uint64    `json:"gc_cycles"`
	Loopback              *float64  `json:"loopback_ms"`
}

// Quantiles of a set of milliseconds; null when it had no samples.
type Quantiles struct {
	P50 *float64 `json:"p50"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

func run(ctx context.Context, o options, progress io.Writer) ([]Row, error) {
	var rows []Row
	for k := range max(o.runs, 1) {
		if o.runs > 1 {
			fmt.Fprintf(progress, "run %d of %d\n", k+1, o.runs)
		}
		more, err := ladder(ctx, o, progress)
		for i := range more {
			more[i].Run = k + 1
		}
		rows = append(rows, more...)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// ladder runs every row once.
func ladder(ctx context.Context, o options, progress io.Writer) ([]Row, error) {
	loop, err := loopback()
	if err != nil {
		return nil, err
	}
	var rows []Row
	if o.costRate > 0 {
		fmt.Fprintf(progress, "CPU per request at %g/s for %s, beside a bare net/http reader ...\n", o.costRate, o.costFor)
		row, err := costRow(ctx, o)
		if err != nil {
			return rows, err
		}
		row.Loopback = &loop
		judgeBound(&row, loop)
		rows = append(rows, row)
	}
	if o.pacerRate > 0 {
		fmt.Fprintf(progress, "the pacer alone at %g/s for %s ...\n", o.pacerRate, o.pacerFor)
		rows = append(rows, pacerRow(o.pacerRate, o.pacerFor))
	}
	if o.dispatchRate > 0 {
		fmt.Fprintf(progress, "dispatch at %g/s of %d-token answers for %s ...\n", o.dispatchRate, o.dispatchTokens, o.duration)
		short := o
		short.tokens = o.dispatchTokens
		row, err := burstRow(ctx, short, fmt.Sprintf("dispatch %g/s×%d", o.dispatchRate, o.dispatchTokens), o.dispatchRate, o.duration, o.decodeStep, 0, "")
		if err != nil {
			return rows, err
		}
		row.Loopback = &loop
		judgeBound(&row, loop)
		rows = append(rows, row)
	}
	for _, rate := range o.rates {
		fmt.Fprintf(progress, "rate %g/s for %s ...\n", rate, o.duration)
		row, err := burstRow(ctx, o, fmt.Sprintf("rate %g/s", rate), rate, o.duration, o.decodeStep, 0, "")
		if err != nil {
			return rows, err
		}
		row.Loopback = &loop
		judgeBound(&row, loop)
		rows = append(rows, row)
	}
	for i, n := range o.streams {
		// n arrivals over a second, each streaming long enough that all n
		// are open at once.
		step := max(o.decodeStep, 2*time.Second/time.Duration(o.tokens))
		fmt.Fprintf(progress, "%d concurrent streams ...\n", n)
		profile := ""
		if o.profileDir != "" && i == len(o.streams)-1 {
			profile = o.profileDir
		}
		row, err := burstRow(ctx, o, fmt.Sprintf("%d streams", n), float64(n), time.Second, step, n, profile)
		if err != nil {
			return rows, err
		}
		row.Loopback = &loop
		judgeBound(&row, loop)
		rows = append(rows, row)
	}
	if o.canaryTargets > 0 {
		fmt.Fprintf(progress, "canaries: %d targets × %d scenarios ...\n", o.canaryTargets, o.canaryScenarios)
		row, err := canaryRow(ctx, o)
		if err != nil {
			return rows, err
		}
		row.Loopback = &loop
		judgeBound(&row, loop)
		rows = append(rows, row)
	}
	return rows, nil
}

// emitter starts the truth-stamping engine in its own process.
func emitter(step time.Duration) (string, func(), error) {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.MaxQueue = 1<<20, 1<<20
	cfg.PrefillBase, cfg.PrefillPerToken, cfg.DecodeBase, cfg.DecodePerSeq = step, 0, step, 0
	cfg.Faults.RoleOnlyFirstChunk = false
	cfg.TruthStamps = true
	return simchild.Start(cfg)
}

func newClient(name, url string) (*prober.Client, error) {
	t := config.DefaultTarget
	t.Name, t.URL, t.API, t.Model = name, url, config.APICompletions, "sim-model"
	t.HTTPClientConfig = promconfig.DefaultHTTPClientConfig
	return prober.NewClient(t, clientOptions()...)
}

func benchScenario(name string, tokens int) config.Scenario {
	s := config.DefaultScenario
	s.Name = name
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 32}
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: tokens}
	s.SLO.TTFT = config.Duration(500 * time.Millisecond)
	s.SLO.TPOT = config.Duration(100 * time.Millisecond)
	return s
}

// burstRow runs one burst at rate through the real runner.
func burstRow(ctx context.Context, o options, name string, rate float64, d, step time.Duration, streams int, profileDir string) (Row, error) {
	url, stop, err := emitter(step)
	if err != nil {
		return Row{}, err
	}
	defer stop()
	client, err := newClient("sim", url)
	if err != nil {
		return Row{}, err
	}
	defer client.Close()
	sc := benchScenario("bench", o.tokens)
	b := config.DefaultBurst
	b.Name, b.Target = "bench", "sim"
	b.Scenarios = []config.WeightedScenario{{Scenario: sc.Name, Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: rate, Burstiness: 1}
	b.Duration = config.Duration(d)
	// A second of warmup opens the connections a daemon would hold open.
	b.Warmup = config.Warmup{Duration: config.Duration(time.Second)}
	if streams > 0 {
		// Exactly streams arrivals, evenly over a second; warm() opened the way.
		b.Arrival.Process = config.ArrivalConstant
		b.Duration, b.Requests, b.Warmup = 0, streams, config.Warmup{}
	}
	b.MaxConcurrency = 1 << 16
	b.Brake = config.Brake{}

	if err := warm(ctx, client, sc); err != nil {
		return Row{}, err
	}
	results := &collected{}
	peak := newPeakSampler(streams)
	var stopProfile func() error
	if profileDir != "" {
		peak.heapProfile = filepath.Join(profileDir, "heap.pprof")
		if stopProfile, err = startProfiles(profileDir); err != nil {
			return Row{}, err
		}
	}
	m := startMeter()
	compiled, err := plan.CompileBurst(b, sc)
	if err != nil {
		return Row{}, err
	}
	rep, err := burst.Runner{Client: client, Observer: results, InFlight: peak}.Run(ctx, compiled)
	if err != nil {
		return Row{}, err
	}
	row := m.stop(name, rate, len(results.all)+rep.WarmupRequests)
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			return Row{}, err
		}
	}
	row.AchievedRate = rep.AchievedRate
	row.Requests = rep.Requests
	row.Dispatch = fromSummary(rep.Latency["dispatch_delay"])
	saturated := rep.ClientSaturated
	row.Saturated = &saturated
	if e := rep.ErrorBound; e != nil {
		row.Bound = Quantiles{P99: msOf(e.P99), Max: msOf(e.Max)}
	}
	peak.fill(&row)
	if err := compare(url, results.all, &row); err != nil {
		return row, err
	}
	return row, nil
}

// costRow is llmprobe's burst at the cost rate beside the bare reader's
// floor, each on a fresh engine; with -profile, their profiles go to
// DIR/cost and DIR/floor.
func costRow(ctx context.Context, o options) (Row, error) {
	url, stop, err := emitter(o.decodeStep)
	if err != nil {
		return Row{}, err
	}
	var stopProfile func() error
	if o.profileDir != "" {
		if stopProfile, err = startProfiles(filepath.Join(o.profileDir, "floor")); err != nil {
			return Row{}, err
		}
	}
	floor, complete, requests, err := floorBurst(ctx, url, o.costRate, o.costFor, o.tokens)
	stop()
	if err != nil {
		return Row{}, err
	}
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			return Row{}, err
		}
	}
	if url, stop, err = emitter(o.decodeStep); err != nil {
		return Row{}, err
	}
	poller, pollerComplete, pollerRequests, err := pollerBurst(url, o.costRate, o.costFor, o.tokens)
	stop()
	if err != nil {
		return Row{}, err
	}
	profile := ""
	if o.profileDir != "" {
		profile = filepath.Join(o.profileDir, "cost")
	}
	row, err := burstRow(ctx, o, fmt.Sprintf("cost %g/s", o.costRate), o.costRate, o.costFor, o.decodeStep, 0, profile)
	row.FloorCPUPerRequestMs, row.FloorRequests, row.FloorComplete = &floor, requests, complete
	row.PollerCPUPerRequestMs, row.PollerRequests, row.PollerComplete = &poller, pollerRequests, pollerComplete
	return row, err
}

// warm opens a connection before the clock starts, as a long-running daemon has.
func warm(ctx context.Context, c *prober.Client, sc config.Scenario) error {
	res := c.Do(ctx, prober.Request{Scenario: sc, Traffic: prober.TrafficBurst, MaxTokens: 1, Sched: time.Now()})
	if res.Outcome != prober.OutcomeSuccess {
		return fmt.Errorf("warm-up request to the emitter: %s: %s", res.Outcome, res.Error)
	}
	return nil
}

// canaryRow runs the canary scheduler over many targets on the emitter, each
// pair once a second.
func canaryRow(ctx context.Context, o options) (Row, error) {
	url, stop, err := emitter(o.decodeStep)
	if err != nil {
		return Row{}, err
	}
	defer stop()
	var y strings.Builder
	y.WriteString("targets:\n")
	for i := range o.canaryTargets {
		fmt.Fprintf(&y, "  - {name: t%03d, url: %q, api: completions, model: sim-model}\n", i, url)
	}
	y.WriteString("scenarios:\n")
	for i := range o.canaryScenarios {
		fmt.Fprintf(&y, "  - {name: s%d, prompt_tokens: 32, output_tokens: %d, slo: {ttft: 500ms, tpot: 100ms}}\n", i, o.tokens)
	}
	y.WriteString("canary: {interval: 1s, jitter: 0s}\n")
	fmt.Fprintf(&y, "limits: {max_canary_rate: %d, max_canary_memory: 4GiB}\n", o.canaryTargets*o.canaryScenarios+1)
	p, err := plan.Parse([]byte(y.String()), "canary-bench.yml")
	if err != nil {
		return Row{}, err
	}
	cfg := p.Config
	clients := map[string]*prober.Client{}
	for _, t := range cfg.Targets {
		c, err := prober.NewClient(t, clientOptions()...)
		if err != nil {
			return Row{}, err
		}
		defer c.Close()
		sc, _ := cfg.Scenario(cfg.Scenarios[0].Name)
		if err := warm(ctx, c, sc); err != nil {
			return Row{}, err
		}
		clients[t.Name] = c
	}
	results := &collected{}
	peak := newPeakSampler(0)
	var stopProfile func() error
	if o.profileDir != "" {
		if stopProfile, err = startProfiles(filepath.Join(o.profileDir, "canary")); err != nil {
			return Row{}, err
		}
	}
	m := startMeter()
	runCtx, cancel := context.WithCancel(ctx)
	s := canary.NewScheduler(runCtx, log.NewNopLogger(), results, peak)
	s.Apply(p, clients)
	time.Sleep(o.canaryFor) // the canaries run on their own clock; this is only how long to watch
	cancel()
	s.Stop()
	name := fmt.Sprintf("canary %d×%d", o.canaryTargets, o.canaryScenarios)
	pairs := float64(o.canaryTargets * o.canaryScenarios)
	row := m.stop(name, pairs, len(results.all))
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			return Row{}, err
		}
	}
	row.Requests = len(results.all)
	var dispatch []float64
	for _, r := range results.all {
		dispatch = append(dispatch, ms(r.DispatchDelay))
	}
	row.Dispatch = quantiles(dispatch)
	peak.fill(&row)
	if err := compare(url, results.all, &row); err != nil {
		return row, err
	}
	return row, nil
}

// compare fetches the engine's truth and computes each success's error.
// TTFT's is how much it exceeds what the engine did, from the prober's
// side alone: how late the request left, plus the prober's own time to
// write it (send side), plus the prober's stamp of the first chunk minus
// the engine's write of it (read side). What lies between (the handshake,
// loopback transit, the emitter's accepting and reading, its prefill) is
// the network's and the engine's: the emitter's receipt shows its part
// apart. ITL's is the difference between the prober's gap and the
// engine's, per gap.
func compare(url string, results []*prober.Result, row *Row) error {
	resp, err := http.Get(url + "/sim/truth")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var truth sim.TruthRecord
	if err := json.NewDecoder(resp.Body).Decode(&truth); err != nil {
		return fmt.Errorf("truth: %w", err)
	}
	var itl, send, read, accept []float64
	for _, r := range results {
		if r.Outcome != prober.OutcomeSuccess {
			continue
		}
		row.Succeeded++
		if !r.Timings.ConnReused {
			row.NewConns++
		}
		stamps := truth.Stamps[r.RequestID]
		// One token a chunk: the ITL samples are the chunk gaps.
		if len(stamps) != r.OutputChunks || len(r.ITL) != len(stamps)-1 {
			continue
		}
		row.Matched++
		at := r.Sched.Add(r.TTFT)
		prevErr := at.UnixNano() - stamps[0]
		// TTFT counts from t_sched: a late send is error too.
		late := r.DispatchDelay + r.QueueWait
		tm := r.Timings
		handshake := tm.DNS + tm.Connect + tm.TLS
		writing := max(tm.Wrote-late-handshake, 0)
		send = append(send, ms(writing))
		row.ttftErrors = append(row.ttftErrors, float64(prevErr+int64(late+writing))/1e6)
		if rc, ok := truth.Received[r.RequestID]; ok && rc.Read > 0 {
			row.Received++
			read = append(read, float64(rc.Read-r.Sched.Add(tm.Wrote).UnixNano())/1e6)
			if !tm.ConnReused && rc.Accepted > 0 {
				accept = append(accept, float64(rc.Accepted-r.Sched.Add(late+handshake).UnixNano())/1e6)
			}
		}
		for i, gap := range r.ITL {
			at = at.Add(gap)
			e := at.UnixNano() - stamps[i+1]
			itl = append(itl, float64(abs(e-prevErr))/1e6)
			prevErr = e
		}
	}
	row.TTFTError, row.ITLError = quantiles(row.ttftErrors), quantiles(itl)
	row.Send, row.EmitterRead, row.EmitterAccept = quantiles(send), quantiles(read), quantiles(accept)
	return nil
}

// judgeBound notes whether the published bound held the measured error:
// its p99 against the error's, and for how many requests.
func judgeBound(row *Row, loopback float64) {
	if row.Bound.P99 == nil || row.TTFTError.P99 == nil {
		return
	}
	limit := *row.Bound.P99 + loopback
	honest := *row.TTFTError.P99 <= limit
	row.Honest = &honest
	within := 0
	for _, e := range row.ttftErrors {
		if e <= limit {
			within++
		}
	}
	share := float64(within) / float64(len(row.ttftErrors))
	row.Within = &share
}

// printHolds says in how many rows, and in how many runs of each row, the
// published bound held.
func printHolds(w io.Writer, rows []Row) {
	if len(rows) == 0 {
		return
	}
	type tally struct{ held, judged, runs int }
	var names []string
	by := map[string]*tally{}
	held, judged := 0, 0
	for _, r := range rows {
		t := by[r.Name]
		if t == nil {
			t = &tally{}
			by[r.Name] = t
			names = append(names, r.Name)
		}
		t.runs++
		if r.Honest == nil {
			continue
		}
		t.judged++
		judged++
		if *r.Honest {
			t.held++
			held++
		}
	}
	fmt.Fprintf(w, "\nthe bound held in %d of %d judged rows", held, judged)
	if runs := slices.MaxFunc(rows, func(a, b Row) int { return a.Run - b.Run }).Run; runs > 1 {
		fmt.Fprintf(w, " over %d runs", runs)
	}
	fmt.Fprintln(w, ":")
	for _, n := range names {
		t := by[n]
		if t.judged == 0 {
			fmt.Fprintf(w, "  %s: not judged (no published bound) in %d runs\n", n, t.runs)
			continue
		}
		fmt.Fprintf(w, "  %s: held in %d of %d runs\n", n, t.held, t.judged)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

type collected struct {
	mu  sync.Mutex
	all []*prober.Result
}

func (c *collected) Observe(r *prober.Result) {
	c.mu.Lock()
	c.all = append(c.all, r)
	c.mu.Unlock()
	if tracer != nil {
		tracer.Observe(r)
	}
}

// peakSampler counts open streams and, when target (if set) are open at
// once, measures the live heap and stacks per open stream against a
// baseline taken before the run. The sample forces one GC; the row's GC
// columns include it.
type peakSampler struct {
	open, peak atomic.Int64
	target     int64
	once       sync.Once
	base       [2]uint64
	sampled    chan struct{}
	heapPer    *float64
	stackPer   *float64
	// heapProfile, when set, gets the live heap's profile at the sample.
	heapProfile string
}

func newPeakSampler(target int) *peakSampler {
	p := &peakSampler{target: int64(target), sampled: make(chan struct{})}
	if target > 0 {
		p.base = liveMemory()
	} else {
		close(p.sampled)
	}
	return p
}

func (p *peakSampler) Started(string, string, string) {
	n := p.open.Add(1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	if p.target > 0 && n >= p.target {
		p.once.Do(func() { go p.sample() })
	}
}

func (p *peakSampler) sample() {
	defer close(p.sampled)
	mem := liveMemory()
	if p.heapProfile != "" {
		if f, err := os.Create(p.heapProfile); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	open := float64(p.open.Load())
	if open <= 0 {
		return
	}
	heap := float64(int64(mem[0])-int64(p.base[0])) / open / 1024
	stack := float64(int64(mem[1])-int64(p.base[1])) / open / 1024
	p.heapPer, p.stackPer = &heap, &stack
}

// liveMemory is the live heap and the goroutine stacks, right after a GC.
func liveMemory() [2]uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return [2]uint64{s[0].Value.Uint64(), s[1].Value.Uint64()}
}

func (p *peakSampler) Finished(string, string, string) { p.open.Add(-1) }

func (p *peakSampler) fill(row *Row) {
	<-p.sampled
	row.PeakStreams = int(p.peak.Load())
	row.HeapPerStreamKiB, row.StackPerStreamKiB = p.heapPer, p.stackPer
}

// meter measures the process over a row: CPU time, GC pauses and cycles.
type meter struct {
	cpu     time.Duration
	samples []metrics.Sample
}

const (
	gcPauses = "/sched/pauses/total/gc:seconds"
	gcCycles = "/gc/cycles/total:gc-cycles"
)

func startMeter() *meter {
	m := &meter{cpu: cpuTime(), samples: []metrics.Sample{{Name: gcPauses}, {Name: gcCycles}}}
	metrics.Read(m.samples)
	return m
}

func (m *meter) stop(name string, rate float64, requests int) Row {
	after := []metrics.Sample{{Name: gcPauses}, {Name: gcCycles}}
	metrics.Read(after)
	row := Row{Name: name, Rate: rate}
	if requests > 0 {
		v := ms(cpuTime()-m.cpu) / float64(requests)
		row.CPUPerRequestMs = &v
	}
	gc := burst.SelfMeasureTail(m.samples[0].Value.Float64Histogram(), after[0].Value.Float64Histogram())
	row.GCPause = Quantiles{P99: msOf(gc.P99), Max: msOf(gc.Max)}
	row.GCCycles = after[1].Value.Uint64() - m.samples[1].Value.Uint64()
	return row
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fromSummary(s stats.Summary) Quantiles {
	if s.Count == 0 {
		return Quantiles{}
	}
	p50, p99, mx := 1000*s.P50, 1000*s.P99, 1000*s.Max
	return Quantiles{P50: &p50, P99: &p99, Max: &mx}
}

func quantiles(v []float64) Quantiles {
	if len(v) == 0 {
		return Quantiles{}
	}
	s := stats.Summarize(v)
	p50, p99, mx := s.P50, s.P99, s.Max
	return Quantiles{P50: &p50, P99: &p99, Max: &mx}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// msOf turns seconds into milliseconds, n/a staying n/a.
func msOf(seconds *float64) *float64 {
	if seconds == nil {
		return nil
	}
	v := 1000 * *seconds
	return &v
}

// loopback is half the median round trip of a small message over TCP on
// this host: the part of any error no client can remove.
func loopback() (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	buf := make([]byte, 64)
	var rtts []float64
	for range 1000 {
		t := time.Now()
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return 0, err
		}
		rtts = append(rtts, ms(time.Since(t)))
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2] / 2, nil
}

func startProfiles(dir string) (func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		return nil, err
	}
	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	runtime.SetMutexProfileFraction(10)
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		f.Close()
		for _, name := range []string{"allocs", "block", "mutex"} {
			out, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err != nil {
				return err
			}
			err = pprof.Lookup(name).WriteTo(out, 0)
			out.Close()
			if err != nil {
				return err
			}
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		return nil
	}, nil
}

func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "row\trun\tachieved/s\treqs\tmatched\tpeak streams\tdispatch p50\tp99\tsend p99\tTTFT err p50\tp99\tmax\tITL err p50\tp99\tmax\temitter lag p50\tp99\taccept lag p99\tbound p99\tmax\tholds\twithin\tsaturated\theap/stream KiB\tstack/stream KiB\tCPU/req ms\tGC pause p99\tmax\tGCs\t")
	for _, r := range rows {
		sat, holds, within := "n/a", "n/a", "n/a"
		if r.Saturated != nil {
			sat = strconv.FormatBool(*r.Saturated)
		}
		if r.Honest != nil {
			holds = strconv.FormatBool(*r.Honest)
		}
		if r.Within != nil {
			within = strconv.FormatFloat(100**r.Within, 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n",
			r.Name, r.Run, num(r.AchievedRate, 1), r.Requests, r.Matched, r.PeakStreams,
			num(r.Dispatch.P50, 3), num(r.Dispatch.P99, 3), num(r.Send.P99, 3),
			num(r.TTFTError.P50, 3), num(r.TTFTError.P99, 3), num(r.TTFTError.Max, 3),
			num(r.ITLError.P50, 3), num(r.ITLError.P99, 3), num(r.ITLError.Max, 3),
			num(r.EmitterRead.P50, 3), num(r.EmitterRead.P99, 3), num(r.EmitterAccept.P99, 3),
			num(r.Bound.P99, 3), num(r.Bound.Max, 3), holds, within, sat,
			num(r.HeapPerStreamKiB, 1), num(r.StackPerStreamKiB, 1), num(r.CPUPerRequestMs, 3),
			num(r.GCPause.P99, 3), num(r.GCPause.Max, 3), r.GCCycles)
	}
	tw.Flush()
	if len(rows) > 0 && rows[0].Loopback != nil {
		fmt.Fprintf(w, "times in ms; loopback one way %.3f ms; %d CPUs; TTFT error = send lateness + the prober's writing of the request (send) + its stamp of the first chunk - the engine's write; "+
			"emitter lag = request written until the emitter read it, accept lag = handshake done until it accepted (the emitter's, not booked as error); "+
			"holds: TTFT error p99 <= bound p99 + loopback; within: the share of requests whose TTFT error is within that too\n", *rows[0].Loopback, runtime.NumCPU())
	}
}

func num(v *float64, prec int) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func floats(v []float64) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(s, ",")
}

func ints(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ",")
}
