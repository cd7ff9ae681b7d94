package gate

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/gpu"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/push"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/tracing"
)

// Options are the flags of `llmprobe gate`.
type Options struct {
	ConfigFile, Burst string
	// Override changes the burst or its target for this run.
	Override config.Override
	// Output, if set, receives the report JSON too; JUnit and Markdown the
	// report as JUnit XML and as a CI step summary, written whatever the
	// exit code once the burst is known.
	Output, JUnit, Markdown string
	StoragePath             string
	// Baseline, if set, is the report file to compare with instead of the
	// burst's previous report.
	Baseline string
	GPU      bool
	// Shard runs only this replica's share of the burst (--burst.shard=i/N),
	// its offsets counted from Start (--burst.start), which every shard
	// must share; zero Start starts now.
	Shard shard.Shard
	Start time.Time
	// Stdout gets the report table, Stderr progress and errors. Terminal
	// says Stderr is one: progress rewrites one line there, elsewhere it
	// prints a line every ProgressInterval.
	Stdout, Stderr   io.Writer
	Terminal         bool
	ProgressInterval time.Duration
	// Verbose prints every detail of the report, not only its summary.
	Verbose bool
	// Push, if set, gets the run on every exit but UsageError.
	Push *push.Pusher
}

// gateRun is one run of `llmprobe gate`: the options and what its steps
// found out before the burst.
type gateRun struct {
	Options
	plan      *plan.Plan
	burst     *plan.Burst
	overrides []string
	secrets   *redact.Redactor
	baseline  *report.Report
	tracer    *tracing.Exporter // spans of the burst's requests, when tracing is configured
}

// Run runs one burst (or its sweep) now, prints its table, stores its
// report, and returns the outcome. A preflight request goes first: a
// target that cannot answer it is not measured at all, and the gate says why.
func Run(ctx context.Context, o Options) Outcome {
	g := &gateRun{Options: o}
	if !g.load() {
		return UsageError
	}
	t, _ := g.plan.Config.Target(g.burst.Target)
	var ok bool
	if g.tracer, ok = startSpans("gate", g.plan.Config, g.Stderr); !ok {
		return UsageError
	}
	defer flushSpans("gate", g.tracer, g.plan.Config, g.Stderr)
	client, err := prober.NewClient(t, prober.WithSampler(g.tracer))
	if err != nil {
		fmt.Fprintln(g.Stderr, err)
		return UsageError
	}
	defer client.Close()
	if !g.baselineFits(t) {
		return Unmeasured
	}
	if !g.preflight(ctx, client, t, g.burst.Mix[0]) {
		return Unmeasured
	}
	if g.ProgressInterval <= 0 {
		g.ProgressInterval = 5 * time.Second
	}
	if code := g.waitForStart(ctx); code != Passed {
		return code
	}
	rep, saveErr := g.measure(ctx, client)
	return g.verdict(ctx, t, rep, saveErr)
}

// load reads the configuration and the baseline, applies the overrides and
// checks the split; false (a usage error, said on Stderr) stops the gate.
// From here on Stdout and Stderr mask the configuration's secrets.
func (g *gateRun) load() bool {
	p, b, secrets, ok := loadBurst("gate", g.ConfigFile, g.Burst, g.Push.Secrets(), &g.Stdout, &g.Stderr)
	if !ok {
		return false
	}
	g.secrets = secrets
	var err error
	g.overrides = g.Override.Flags()
	if len(g.overrides) > 0 {
		if p, err = p.Overridden(b.Name, g.Override); err != nil {
			fmt.Fprintf(g.Stderr, "llmprobe gate: %v\n", err)
			return false
		}
		if b.Sweep != nil && g.Override.Rate != nil {
			fmt.Fprintf(g.Stderr, "llmprobe gate: --rate replaces the sweep of burst %s (%s): one run at %g/s\n", b.Name, rateList(b.Rates()), *g.Override.Rate)
		}
		b, _ = p.Burst(b.Name)
		fmt.Fprintf(g.Stderr, "llmprobe gate: overridden for this run: %s\n", strings.Join(g.overrides, " "))
	}
	g.plan, g.burst = p, b
	if err := g.checkSplit(b, time.Now()); err != nil {
		fmt.Fprintf(g.Stderr, "llmprobe gate: %v\n", err)
		return false
	}
	if g.Baseline != "" {
		if g.baseline, err = store.Read(g.Baseline); err != nil {
			fmt.Fprintf(g.Stderr, "llmprobe gate: --baseline: %v\n", err)
			return false
		}
	}
	return true
}

// baselineFits refuses a named baseline whose request set is not the one
// this run plans, before anything is sent: the burst would run only to be
// refused. A sweep's rate and count, a trace's and a shard's are known only
// after the run, and so is a discovered model: JudgeNamed judges those.
func (g *gateRun) baselineFits(t config.Target) bool {
	b := g.burst
	if g.baseline == nil || b.Sweep != nil || b.Arrival.Process == config.ArrivalTrace || g.Shard.Count > 1 {
		return true
	}
	rate := b.Rates()[0]
	r := report.Build(b.Burst, report.Run{Rate: rate, Planned: b.PlannedMeasured(rate), Start: time.Now()}, report.Meta{Scenarios: b.ScenarioConfigs()})
	r.Overrides = g.overrides
	why := report.RefusedBeforeRun(r, g.baseline)
	if why == "" {
		return true
	}
	fmt.Fprintf(g.Stdout, "REFUSED %s\nFAIL  baseline: the burst was not sent\n", why)
	fmt.Fprintf(g.Stderr, "llmprobe gate: --baseline %s: %s; the burst was not sent\n", g.Baseline, why)
	g.notMeasured(t, render.Check{Name: "baseline", Status: render.StatusError, Detail: why + "; the burst was not sent"})
	return false
}

// preflight sends one request of the burst's first scenario, measured like
// any other, before the burst is sent; false when the target could not
// answer it, which the gate says and writes to its CI files.
func (g *gateRun) preflight(ctx context.Context, c *prober.Client, t config.Target, s *plan.Scenario) bool {
	why := preflight(ctx, c, t, g.burst.Seed, s, g.tracer, g.Stderr)
	if why == "" {
		return true
	}
	fmt.Fprintf(g.Stderr, "llmprobe gate: %s\n", why)
	fmt.Fprintf(g.Stdout, "gate: %s — %s\n", decide.NotMeasured, why)
	g.notMeasured(t, render.Check{Name: "preflight", Status: render.StatusError, Detail: why})
	return false
}

// notMeasured writes the files of a run that sent no burst: a report
// JSON that says why, and the CI files with the check that stopped it.
func (g *gateRun) notMeasured(t config.Target, why render.Check) {
	host, _ := os.Hostname()
	now := time.Now()
	stub := report.Build(g.burst.Burst, report.Run{Rate: g.burst.Rates()[0], Start: now, End: now},
		report.Meta{Model: t.Model, Version: version.Version, Host: host, Scenarios: g.burst.ScenarioConfigs()})
	stub.Target, stub.Overrides = t.Name, g.overrides
	stub.Verdict, stub.VerdictReason = decide.Unmeasured(why.Detail)
	stub.ID = "" // no run, none stored: the renderings show only the check that stopped it
	if g.Output != "" {
		if err := store.WriteJSON(g.Output, stub, g.secrets); err != nil {
			fmt.Fprintf(g.Stderr, "llmprobe gate: writing %s: %v\n", g.Output, err)
		}
	}
	g.writeCI(stub, why)
	push.Publish(context.Background(), g.Push, "gate", push.JobGate, stub, g.Stderr)
}

// loadBurst reads the configuration file and looks up the burst, saying
// on stderr why it cannot (false: a usage error of command cmd). From then
// on *stdout and *stderr mask the configuration's secrets and extraSecrets.
func loadBurst(cmd, file, burst string, extraSecrets []string, stdout, stderr *io.Writer) (*plan.Plan, *plan.Burst, *redact.Redactor, bool) {
	p, err := plan.File(file)
	if err != nil {
		fmt.Fprintln(*stderr, err)
		return nil, nil, nil, false
	}
	secrets := redact.New()
	secrets.Add(config.Secrets(p.Config))
	secrets.Add(extraSecrets)
	*stdout, *stderr = secrets.Writer(*stdout), secrets.Writer(*stderr)
	b, err := p.Burst(burst)
	if err != nil {
		fmt.Fprintf(*stderr, "llmprobe %s: %v\n", cmd, err)
		return nil, nil, nil, false
	}
	return p, b, secrets, true
}

// preflight sends one request of scenario s, measured like any other,
// before a burst of seed goes to target t: "" when t answered it (said on
// stderr), else why it did not. spans gets its result.
func preflight(ctx context.Context, c *prober.Client, t config.Target, seed uint64, s *plan.Scenario, spans prober.Observer, stderr io.Writer) string {
	p, maxTokens := s.Builder(seed ^ 0x9e3779b97f4a7c15).Next()
	res := c.Do(ctx, prober.Request{Scenario: s.Scenario, Traffic: prober.TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	spans.Observe(res)
	if res.Outcome != prober.OutcomeSuccess {
		return fmt.Sprintf("preflight request to target %s (%s) failed, the burst was not sent: %s", t.Name, t.URL, res.FailureText())
	}
	// An answer without tokens (embeddings) has no TTFT to show, only its e2e.
	took := fmt.Sprintf("in %s", res.E2E.Round(time.Millisecond))
	if res.FirstTokenSeen() {
		took = fmt.Sprintf("first token after %s", res.TTFT.Round(time.Millisecond))
	}
	fmt.Fprintf(stderr, "preflight: target %s answered, %s\n", t.Name, took)
	return ""
}

// waitForStart waits for --burst.start, checked again first: the preflight
// took time, and a late shard's share would not line up with the others'.
func (g *gateRun) waitForStart(ctx context.Context) Outcome {
	if g.Start.IsZero() {
		return Passed
	}
	b := g.burst
	if err := g.checkSplit(b, time.Now()); err != nil {
		fmt.Fprintf(g.Stderr, "llmprobe gate: %v\n", err)
		return UsageError
	}
	what := "burst " + b.Name
	if g.Shard.Count > 1 {
		what = fmt.Sprintf("shard %d/%d of burst %s", g.Shard.Index, g.Shard.Count, b.Name)
	}
	fmt.Fprintf(g.Stderr, "llmprobe gate: %s starts at %s (in %s)\n", what, g.Start.UTC().Format(time.RFC3339Nano), time.Until(g.Start).Round(time.Millisecond))
	if !waitUntil(ctx, g.Start.Add(-startLead)) {
		fmt.Fprintf(g.Stderr, "llmprobe gate: %v before the burst started\n", context.Cause(ctx))
		return Unmeasured
	}
	return Passed
}

// measure runs the burst with progress on Stderr, the node's GPUs read
// where asked, and the report stored where there is a storage path.
func (g *gateRun) measure(ctx context.Context, client *prober.Client) (*report.Report, error) {
	prog := &progress{w: g.Stderr, name: g.burst.Name, terminal: g.Terminal, every: g.ProgressInterval, start: time.Now()}
	runner := burst.Runner{
		Client:    client,
		Baseline:  g.baseline,
		Progress:  prog.update,
		Overrides: g.overrides,
		Shard:     g.Shard,
		Start:     g.Start,
		Spans:     g.tracer,
	}
	if g.StoragePath != "" {
		runner.Store = store.New(g.StoragePath, g.secrets)
	}
	if g.GPU {
		gpus := gpu.New(log.NewNopLogger(), 2*time.Second)
		gpus.Start()
		defer gpus.Stop()
		runner.GPU = gpus
	}
	rep, saveErr := runner.Run(ctx, g.burst)
	prog.finish()
	if saveErr == nil {
		fmt.Fprintf(g.Stderr, "llmprobe gate: %s\n", g.kept(runner.Store, rep))
	}
	return rep, saveErr
}

// kept says where the report was kept, or why nowhere and what keeps it.
func (g *gateRun) kept(st *store.Store, rep *report.Report) string {
	why := "--storage.path is empty"
	if st != nil {
		var path string
		if path, why = st.Where(rep); path != "" {
			return "report kept in " + path
		}
	}
	if g.Output != "" {
		return fmt.Sprintf("report not kept: %s; --output writes it to %s", why, g.Output)
	}
	return fmt.Sprintf("report not kept: %s; --output=FILE writes it", why)
}

// verdict prints the report's table, writes its files, and gives the exit
// code: what the report says, unless the target could not be measured, the
// burst was interrupted or a file could not be written.
func (g *gateRun) verdict(ctx context.Context, t config.Target, rep *report.Report, saveErr error) Outcome {
	code := Passed
	var problems []render.Check
	fail := func(name, why string) {
		fmt.Fprintf(g.Stderr, "llmprobe gate: %s\n", why)
		problems = append(problems, render.Check{Name: name, Status: render.StatusError, Detail: why})
		code = Unmeasured
	}
	if why := unmeasured(rep); why != "" {
		rep.Verdict, rep.VerdictReason = decide.Unmeasured(fmt.Sprintf("target %s could not be measured: %s", t.Name, why))
	}
	if g.Verbose {
		render.Text(g.Stdout, rep)
	} else {
		render.Brief(g.Stdout, rep)
	}
	switch {
	case rep.Verdict == decide.NotMeasured:
		fail("measurable", rep.VerdictReason)
	case ctx.Err() != nil:
		fail("interrupted", rep.AbortReason)
	case report.Refused(rep) != "":
		// Its gate fails in the report; the run is not a verdict.
		fmt.Fprintf(g.Stderr, "llmprobe gate: --baseline %s: %s\n", g.Baseline, report.Refused(rep))
		code = Unmeasured
	case rep.Verdict == decide.Inconclusive, rep.Verdict == decide.NotEnough, rep.Verdict == decide.NothingJudged:
		fmt.Fprintf(g.Stderr, "llmprobe gate: %s: %s\n", rep.Verdict, rep.VerdictReason)
		code = Unmeasured
	case !rep.Passed:
		code = Failed
	}
	if saveErr != nil {
		fail("report_stored", fmt.Sprintf("the report was not stored in %s: %v", g.StoragePath, saveErr))
	}
	if g.Output != "" {
		if err := store.WriteJSON(g.Output, rep, g.secrets); err != nil {
			fail("report_written", fmt.Sprintf("writing %s: %v", g.Output, err))
		}
	}
	if !g.writeCI(rep, problems...) {
		code = Unmeasured
	}
	push.Publish(ctx, g.Push, "gate", push.JobGate, rep, g.Stderr)
	return code
}

// writeCI writes the JUnit and Markdown files that were asked for; false if
// one could not be written.
func (g *gateRun) writeCI(rep *report.Report, extra ...render.Check) bool {
	ok := true
	for _, f := range []struct {
		path   string
		render func(io.Writer, *report.Report, ...render.Check) error
	}{{g.JUnit, render.JUnit}, {g.Markdown, render.Markdown}} {
		if f.path == "" {
			continue
		}
		err := store.WriteFile(f.path, g.secrets, func(w io.Writer) error { return f.render(w, rep, extra...) })
		if err != nil {
			fmt.Fprintf(g.Stderr, "llmprobe gate: writing %s: %v\n", f.path, err)
			ok = false
		}
	}
	return ok
}

func rateList(rates []float64) string {
	s := make([]string, len(rates))
	for i, r := range rates {
		s[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(s, ", ") + "/s"
}

// unmeasured says why a run measured nothing of the target ("" when it did):
// no request was sent, or none got an answer.
func unmeasured(rep *report.Report) string {
	switch {
	case rep.Requests == 0:
		return "no request was sent"
	case rep.Outcomes[prober.OutcomeConnectionError] == rep.Requests:
		return fmt.Sprintf("every request failed to connect (%s)", topFailure(rep))
	}
	return ""
}

func topFailure(rep *report.Report) string {
	if len(rep.Failures) == 0 {
		return "no reason recorded"
	}
	return rep.Failures[0].Text()
}

// Bounds on --burst.start.
const (
	// maxStartAhead is how far ahead a start may be: further is a mistake
	// (a date for another day) that would hold the replicas idle.
	maxStartAhead = time.Hour
	// startLead is how long before the start the runner takes over from
	// the wait, to be ready for the first arrival.
	startLead = 500 * time.Millisecond
)

// checkSplit checks --burst.shard and --burst.start against burst b at now.
func (o Options) checkSplit(b *plan.Burst, now time.Time) error {
	split := o.Shard.Count > 1
	switch {
	case !split && o.Start.IsZero():
		return nil
	case split && o.Push != nil:
		return fmt.Errorf("--push.url with --burst.shard=%d/%d: a shard's report is a share of the burst, and the shards would replace each other's push: give --push.url to report merge, whose report is the burst's", o.Shard.Index, o.Shard.Count)
	case split && o.Start.IsZero():
		return fmt.Errorf("--burst.shard=%d/%d needs --burst.start: every shard counts its share of the schedule from that one instant (RFC 3339, like %s), or the shares do not make up one burst",
			o.Shard.Index, o.Shard.Count, now.Add(2*time.Minute).UTC().Format(time.RFC3339))
	case b.Sweep != nil:
		return fmt.Errorf("--burst.shard and --burst.start run one rate, and burst %s sweeps rates (%s), each step judged before the next: give --rate too", b.Name, rateList(b.Rates()))
	case !o.Start.After(now):
		return fmt.Errorf("--burst.start=%s passed %s ago, before this run was ready to send: a late shard's share would not line up with the others'; give every replica a start far enough ahead to be scheduled and to pull its image",
			o.Start.UTC().Format(time.RFC3339Nano), now.Sub(o.Start).Round(time.Millisecond))
	case o.Start.Sub(now) > maxStartAhead:
		return fmt.Errorf("--burst.start=%s is %s ahead, more than %s: is it the right day and time zone?", o.Start.Format(time.RFC3339), o.Start.Sub(now).Round(time.Second), maxStartAhead)
	}
	return nil
}

// waitUntil waits until t, or until ctx ends: then it reports false.
func waitUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
