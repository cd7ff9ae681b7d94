package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/burst/plan"
	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/load"
	"github.com/llmprobe/llmprobe/internal/redact"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
)

// GateOptions are the flags of `llmprobe gate`.
type GateOptions struct {
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
}

// Exit codes of `llmprobe gate`, the contract with release pipelines.
const (
	GatePassed     = 0
	GateFailed     = 1 // the target was measured and failed a gate
	GateError      = 2 // a usage or configuration error
	GateUnmeasured = 3 // the target could not be measured, or the report not written
)

// Gate runs one burst (or its sweep) now, prints its table, stores its
// report, and returns the exit code. A preflight request goes first: a
// target that cannot answer it is not measured at all, and the gate says why.
func Gate(ctx context.Context, o GateOptions) int {
	cfg, err := load.File(o.ConfigFile)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	secrets := redact.New()
	secrets.Add(redact.Secrets(cfg))
	o.Stdout, o.Stderr = secrets.Writer(o.Stdout), secrets.Writer(o.Stderr)
	b, err := cfg.LookupBurst(o.Burst)
	if err != nil {
		fmt.Fprintf(o.Stderr, "llmprobe gate: %v\n", err)
		return GateError
	}
	overrides := o.Override.Flags()
	if len(overrides) > 0 {
		if cfg, err = load.Overridden(cfg, b.Name, o.Override); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: %v\n", err)
			return GateError
		}
		if b.Sweep != nil && o.Override.Rate != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: --rate replaces the sweep of burst %s (%s): one run at %g/s\n", b.Name, rateList(plan.Rates(b)), *o.Override.Rate)
		}
		b, _ = cfg.Burst(b.Name)
		fmt.Fprintf(o.Stderr, "llmprobe gate: overridden for this run: %s\n", strings.Join(overrides, " "))
	}
	if err := o.checkSplit(b, time.Now()); err != nil {
		fmt.Fprintf(o.Stderr, "llmprobe gate: %v\n", err)
		return GateError
	}
	var baseline *report.Report
	if o.Baseline != "" {
		if baseline, err = readReport(o.Baseline); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: --baseline: %v\n", err)
			return GateError
		}
	}
	t, _ := cfg.Target(b.Target)
	client, err := prober.NewClient(t)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return GateError
	}
	defer client.Close()
	scenarios := cfg.ScenariosOf(b)

	res := preflight(ctx, client, scenarios[0], b.Seed)
	if res.Outcome != prober.OutcomeSuccess {
		why := fmt.Sprintf("preflight request to target %s (%s) failed, the burst was not sent: %s: %s", t.Name, t.URL, res.Outcome, res.FailureText())
		fmt.Fprintf(o.Stderr, "llmprobe gate: %s\n", why)
		stub := &report.Report{Burst: b.Name, Target: t.Name, Model: t.Model, Overrides: overrides}
		o.writeCI(stub, secrets, report.Check{Name: "preflight", Status: report.StatusError, Detail: why})
		return GateUnmeasured
	}
	fmt.Fprintf(o.Stderr, "preflight: target %s answered, first token after %s\n", t.Name, res.TTFT.Round(time.Millisecond))

	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 5 * time.Second
	}
	if !o.Start.IsZero() {
		// Checked again: the preflight took time, and a late shard's share
		// would not line up with the others'.
		if err := o.checkSplit(b, time.Now()); err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: %v\n", err)
			return GateError
		}
		what := "burst " + b.Name
		if o.Shard.Count > 1 {
			what = fmt.Sprintf("shard %d/%d of burst %s", o.Shard.Index, o.Shard.Count, b.Name)
		}
		fmt.Fprintf(o.Stderr, "llmprobe gate: %s starts at %s (in %s)\n", what, o.Start.UTC().Format(time.RFC3339Nano), time.Until(o.Start).Round(time.Millisecond))
		if !waitUntil(ctx, o.Start.Add(-startLead)) {
			fmt.Fprintf(o.Stderr, "llmprobe gate: %v before the burst started\n", context.Cause(ctx))
			return GateUnmeasured
		}
	}
	prog := &progress{w: o.Stderr, name: b.Name, terminal: o.Terminal, every: o.ProgressInterval, start: time.Now()}
	runner := burst.Runner{
		Client:    client,
		Store:     report.NewStore(o.StoragePath, secrets),
		Baseline:  baseline,
		Progress:  prog.update,
		Overrides: overrides,
		Shard:     o.Shard,
		Start:     o.Start,
	}
	if o.StoragePath == "" {
		runner.Store = nil
	}
	if o.GPU {
		g := collector.NewGPU(log.NewNopLogger(), 2*time.Second)
		g.Start()
		defer g.Stop()
		runner.GPU = g
	}
	rep, saveErr := runner.Run(ctx, b, scenarios)
	prog.finish()
	rep.WriteText(o.Stdout)
	code := GatePassed
	var problems []report.Check
	fail := func(name, why string) {
		fmt.Fprintf(o.Stderr, "llmprobe gate: %s\n", why)
		problems = append(problems, report.Check{Name: name, Status: report.StatusError, Detail: why})
		code = GateUnmeasured
	}
	switch {
	case unmeasured(rep) != "":
		fail("measurable", fmt.Sprintf("target %s could not be measured: %s", t.Name, unmeasured(rep)))
	case ctx.Err() != nil:
		fail("interrupted", rep.AbortReason)
	case !rep.Passed:
		code = GateFailed
	}
	if saveErr != nil {
		fail("report_stored", fmt.Sprintf("the report was not stored in %s: %v", o.StoragePath, saveErr))
	}
	if o.Output != "" {
		if err := report.WriteJSON(o.Output, rep, secrets); err != nil {
			fail("report_written", fmt.Sprintf("writing %s: %v", o.Output, err))
		}
	}
	if !o.writeCI(rep, secrets, problems...) {
		code = GateUnmeasured
	}
	return code
}

// writeCI writes the JUnit and Markdown files that were asked for; false if
// one could not be written.
func (o GateOptions) writeCI(rep *report.Report, secrets *redact.Redactor, extra ...report.Check) bool {
	ok := true
	for _, f := range []struct {
		path   string
		render func(io.Writer, ...report.Check) error
	}{{o.JUnit, rep.WriteJUnit}, {o.Markdown, rep.WriteMarkdown}} {
		if f.path == "" {
			continue
		}
		err := report.WriteFile(f.path, secrets, func(w io.Writer) error { return f.render(w, extra...) })
		if err != nil {
			fmt.Fprintf(o.Stderr, "llmprobe gate: writing %s: %v\n", f.path, err)
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

// progress shows how far a burst is: on a terminal one line rewritten in
// place, elsewhere (CI logs) a full line every interval and at each run's
// end, so a log gets a few lines per minute, never a carriage return.
type progress struct {
	w           io.Writer
	name        string
	terminal    bool
	every       time.Duration
	start, last time.Time
	done, total int
	shown       bool // the latest counts are printed
}

// update is called with the runner's lock held, once per finished request.
func (p *progress) update(done, total int) {
	p.done, p.total, p.shown = done, total, false
	if p.terminal {
		if done == total || done%10 == 0 {
			fmt.Fprintf(p.w, "\r%s: %d/%d requests done", p.name, done, total)
			p.shown = true
		}
		return
	}
	if now := time.Now(); done == total || now.Sub(p.last) >= p.every && now.Sub(p.start) >= p.every {
		p.line(now)
	}
}

func (p *progress) line(now time.Time) {
	fmt.Fprintf(p.w, "%s: %d/%d requests done after %s\n", p.name, p.done, p.total, now.Sub(p.start).Round(time.Second))
	p.last, p.shown = now, true
}

// finish ends the progress output once the burst is over.
func (p *progress) finish() {
	switch {
	case p.terminal && p.total > 0:
		if !p.shown {
			fmt.Fprintf(p.w, "\r%s: %d/%d requests done", p.name, p.done, p.total)
		}
		fmt.Fprintln(p.w)
	case !p.terminal && !p.shown && p.total > 0:
		p.line(time.Now())
	}
}

// preflight sends one request of the burst's first scenario, measured like
// any other, before the burst is sent.
func preflight(ctx context.Context, c *prober.Client, s config.Scenario, seed uint64) *prober.Result {
	p, maxTokens := prompt.NewBuilder(s, seed^0x9e3779b97f4a7c15).Next()
	return c.Do(ctx, prober.Request{Scenario: s, Traffic: prober.TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
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
	f := rep.Failures[0]
	return f.Phase + ": " + f.Reason + ": " + f.Example
}

// readReport loads a report JSON file, as `llmprobe gate --output` writes it.
func readReport(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a report: %w", path, err)
	}
	if r.ID == "" {
		return nil, errors.New(path + " is not a report: it has no id")
	}
	return &r, nil
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
func (o GateOptions) checkSplit(b config.Burst, now time.Time) error {
	split := o.Shard.Count > 1
	switch {
	case !split && o.Start.IsZero():
		return nil
	case split && o.Start.IsZero():
		return fmt.Errorf("--burst.shard=%d/%d needs --burst.start: every shard counts its share of the schedule from that one instant (RFC 3339, like %s), or the shares do not make up one burst",
			o.Shard.Index, o.Shard.Count, now.Add(2*time.Minute).UTC().Format(time.RFC3339))
	case b.Sweep != nil:
		return fmt.Errorf("--burst.shard and --burst.start run one rate, and burst %s sweeps rates (%s), each step judged before the next: give --rate too", b.Name, rateList(plan.Rates(b)))
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
