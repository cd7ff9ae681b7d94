package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/compare"
	comparerender "github.com/llmprobe/llmprobe/compare/render"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/push"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/tracing"
)

// CompareOptions are the flags of `llmprobe compare`.
type CompareOptions struct {
	ConfigFile, Burst string
	Sides             [2]Side // baseline, candidate
	// Rounds is the runs per side: even, at least 2. Rate, if set,
	// replaces the burst's rate or sweep.
	Rounds int
	Rate   *float64
	// Output gets the comparison JSON; JUnit, Markdown and HTML its
	// renderings, written whatever the exit code once the burst is known.
	Output, JUnit, Markdown, HTML string
	// Stdout gets the comparison, Stderr progress and errors (Terminal:
	// Stderr is one).
	Stdout, Stderr   io.Writer
	Terminal         bool
	ProgressInterval time.Duration
	// Push, if set, gets the candidate's run on every exit but UsageError.
	Push *push.Pusher
}

// Side is one side as its flags name it; empty fields keep the
// burst's target and that target's URL and model.
type Side struct {
	Name               string // baseline or candidate
	Target, URL, Model string
}

// compareRun is one run of `llmprobe compare`: the options, the burst as
// each side runs it, and each side's client.
type compareRun struct {
	CompareOptions
	secrets *redact.Redactor
	bursts  [2]*plan.Burst
	targets [2]config.Target
	plans   [2]*plan.Plan
	clients [2]*prober.Client
	// candidate is the candidate's last run, the one pushed.
	candidate *report.Report
	tracer    *tracing.Exporter // spans of both sides' requests, when tracing is configured
}

// Compare runs the comparison and returns the exit code: gate's
// contract, 0 when every judged metric is shown within its tolerance (or
// better), 1 when one is shown worse beyond it, 3 when the sample shows
// neither or a side could not be measured.
func Compare(ctx context.Context, o CompareOptions) Outcome {
	if o.Rounds < 2 || o.Rounds%2 != 0 {
		fmt.Fprintf(o.Stderr, "llmprobe compare: --rounds=%d: must be even and at least 2, so that each side runs first as often as second\n", o.Rounds)
		return UsageError
	}
	r := &compareRun{CompareOptions: o}
	if !r.load() {
		return UsageError
	}
	var ok bool
	if r.tracer, ok = startSpans("compare", r.plans[0].Config, r.Stderr); !ok {
		return UsageError
	}
	defer flushSpans("compare", r.tracer, r.plans[0].Config, r.Stderr)
	for i := range r.clients {
		c, err := prober.NewClient(r.targets[i], prober.WithSampler(r.tracer))
		if err != nil {
			fmt.Fprintf(r.Stderr, "llmprobe compare: %s: %v\n", r.Sides[i].Name, err)
			return UsageError
		}
		defer c.Close()
		r.clients[i] = c
	}
	for i, c := range r.clients {
		b := r.bursts[i]
		if why := preflight(ctx, c, r.targets[i], b.Seed, b.Mix[0], r.tracer, r.Stderr); why != "" {
			why = r.Sides[i].Name + ": " + why
			fmt.Fprintf(r.Stderr, "llmprobe compare: %s\n", why)
			r.writeFiles(r.stub(why))
			r.publish(ctx, false)
			return Unmeasured
		}
	}
	if r.ProgressInterval <= 0 {
		r.ProgressInterval = 5 * time.Second
	}
	rounds, order, problem := r.runRounds(ctx)
	c := compare.Analyze(r.bursts[0], r.side(0), r.side(1), order, rounds)
	return r.verdict(c, problem)
}

// load reads the configuration and readies the burst for each side:
// false (a usage error, said on Stderr) stops the comparison.
func (r *compareRun) load() bool {
	p, b, secrets, ok := loadBurst("compare", r.ConfigFile, r.Burst, r.Push.Secrets(), &r.Stdout, &r.Stderr)
	if !ok {
		return false
	}
	r.secrets = secrets
	if b.Sweep != nil && r.Rate == nil {
		fmt.Fprintf(r.Stderr, "llmprobe compare: burst %s sweeps rates (%s) and a comparison runs one: give --rate\n", b.Name, rateList(b.Rates()))
		return false
	}
	for i, s := range r.Sides {
		c, err := sidePlan(p, b, s, r.Rate)
		if err != nil {
			fmt.Fprintf(r.Stderr, "llmprobe compare: %v\n", err)
			return false
		}
		r.plans[i] = c
		r.bursts[i], _ = c.Burst(b.Name)
		r.targets[i], _ = c.Config.Target(r.bursts[i].Target)
	}
	return true
}

// sidePlan is p with burst b sent to side s's target, at its URL and
// model where s overrides them, at rate where set, compiled again as a
// loaded file is.
func sidePlan(p *plan.Plan, b *plan.Burst, s Side, rate *float64) (*plan.Plan, error) {
	if s.Target != "" {
		var err error
		if p, err = p.Retargeted(b.Name, s.Target); err != nil {
			return nil, fmt.Errorf("--%s: %v", s.Name, err)
		}
	}
	out, err := p.Overridden(b.Name, config.Override{URL: s.URL, Model: s.Model, Rate: rate})
	if err != nil {
		// The override's errors name gate's flags; these are the side's.
		return nil, fmt.Errorf("%s", strings.ReplaceAll(err.Error(), "--target.", "--"+s.Name+"."))
	}
	return out, nil
}

// runRounds runs the rounds: round k sends the baseline first when k is
// even, the candidate first when odd, both with the nonce salted by k+1.
// It stops at the first interrupted run, saying why.
func (r *compareRun) runRounds(ctx context.Context) (rounds []compare.Round, order []string, problem string) {
	for k := range r.Rounds {
		var round [2]compare.Run
		sides := []int{0, 1}
		if k%2 == 1 {
			sides = []int{1, 0}
		}
		for _, i := range sides {
			round[i] = r.runSide(ctx, k, i)
			order = append(order, r.Sides[i].Name)
			if why := unmeasured(round[i].Report); why != "" {
				return rounds, order, fmt.Sprintf("round %d: %s %s could not be measured: %s", k+1, r.Sides[i].Name, r.targets[i].Name, why)
			}
			if ctx.Err() != nil {
				return rounds, order, fmt.Sprintf("round %d: %s", k+1, round[i].Report.AbortReason)
			}
		}
		rounds = append(rounds, compare.Round{Baseline: round[0], Candidate: round[1]})
	}
	return rounds, order, ""
}

// runSide runs side i's burst once in round k, warmed up, with progress
// on Stderr; its report goes to no store and is judged against nothing.
func (r *compareRun) runSide(ctx context.Context, k, i int) compare.Run {
	name := fmt.Sprintf("round %d/%d %s %s", k+1, r.Rounds, r.Sides[i].Name, r.targets[i].Name)
	prog := &progress{w: r.Stderr, name: name, terminal: r.Terminal, every: r.ProgressInterval, start: time.Now()}
	var run compare.Run
	runner := burst.Runner{Client: r.clients[i], Progress: prog.update, Salt: uint64(k + 1), Measured: func(m report.Run) { run.Measured = m }, Spans: r.tracer}
	b := r.bursts[i]
	// The rounds are the comparison's repetitions; with no store Run
	// returns no error.
	b.Repeat = 0
	run.Report, _ = runner.Run(ctx, b)
	prog.finish()
	if i == 1 {
		r.candidate = run.Report
	}
	return run
}

// side is side i as the comparison names it.
func (r *compareRun) side(i int) compare.Side {
	t := r.targets[i]
	return compare.Side{Target: t.Name, URL: t.URL, Model: t.Model}
}

// stub is the comparison that could not be measured, and why.
func (r *compareRun) stub(why string) *compare.Comparison {
	c := &compare.Comparison{Burst: r.Burst, Seed: r.bursts[0].Seed, Baseline: r.side(0), Candidate: r.side(1)}
	var reason string
	c.Verdict, reason = decide.Unmeasured(why)
	c.Reasons = []string{reason}
	return c
}

// verdict prints the comparison, writes its files and gives the exit code.
func (r *compareRun) verdict(c *compare.Comparison, problem string) Outcome {
	if problem != "" {
		var reason string
		c.Verdict, reason = decide.Unmeasured(problem)
		c.Reasons = append(c.Reasons, reason)
	}
	comparerender.Text(r.Stdout, c)
	code := Unmeasured // not enough evidence, or not measured
	switch c.Verdict {
	case decide.Worse:
		code = Failed
	case decide.Within, decide.Better:
		code = Passed
	}
	r.publish(context.Background(), code == Passed)
	if !r.writeFiles(c) {
		code = Unmeasured
	}
	return code
}

// publish pushes the candidate's last run as the burst's run of its
// target, passed when the comparison found nothing worse and was measured
// and conclusive; a comparison that ran nothing pushes a failed run.
func (r *compareRun) publish(ctx context.Context, passed bool) {
	rep := &report.Report{Burst: r.bursts[1].Name, End: time.Now()}
	if r.candidate != nil {
		cp := *r.candidate
		rep = &cp
	}
	rep.Target, rep.Passed = r.targets[1].Name, passed
	push.Publish(ctx, r.Push, "compare", push.JobCompare, rep, r.Stderr)
}

// writeFiles writes the files that were asked for; false if one could not
// be written.
func (r *compareRun) writeFiles(c *compare.Comparison) bool {
	ok := true
	for _, f := range []struct {
		path   string
		render func(io.Writer) error
	}{
		{r.Output, func(w io.Writer) error {
			e := json.NewEncoder(w)
			e.SetIndent("", "  ")
			return e.Encode(c)
		}},
		{r.JUnit, func(w io.Writer) error { return comparerender.JUnit(w, c) }},
		{r.Markdown, func(w io.Writer) error { return comparerender.Markdown(w, c) }},
		{r.HTML, func(w io.Writer) error { return comparerender.HTML(w, c) }},
	} {
		if f.path == "" {
			continue
		}
		if err := store.WriteFile(f.path, r.secrets, f.render); err != nil {
			fmt.Fprintf(r.Stderr, "llmprobe compare: writing %s: %v\n", f.path, err)
			ok = false
		}
	}
	return ok
}
