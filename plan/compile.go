package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/target"
)

// Plan is a configuration compiled into what llmprobe runs. It is not
// changed once made; a reload compiles a new one. Its exported fields are
// what config.Equal compares, so a dataset, golden set or trace that
// changed on disk is a change even where the YAML is not.
type Plan struct {
	// Config is the configuration it was compiled from.
	Config *config.Config
	// Scenarios are every scenario with what its prompts are drawn from,
	// in the configuration's order; Bursts every burst, compiled.
	Scenarios []*Scenario
	Bursts    []*Burst
}

// Scenario is a configured scenario and what its prompts are drawn from.
type Scenario struct {
	config.Scenario
	Source prompt.Source
}

// Builder is a seeded prompt builder of s.
func (s *Scenario) Builder(seed uint64) *prompt.Builder {
	return prompt.NewBuilder(s.Scenario, s.Source, seed)
}

// File reads a configuration file and compiles it: decoding, validation
// and compiling report every problem of all three together, each with its
// file, line and field. Files it names are read relative to its directory.
func File(path string) (*Plan, error) {
	var c compiler
	cfg, err := config.LoadFile(path, c.compile)
	if err != nil {
		return nil, err
	}
	return c.plan(cfg), nil
}

// Parse compiles a configuration's YAML, as File does; filename is for its
// errors, and files it names are read relative to the working directory.
func Parse(data []byte, filename string) (*Plan, error) {
	var c compiler
	cfg, err := config.Parse(data, filename, c.compile)
	if err != nil {
		return nil, err
	}
	return c.plan(cfg), nil
}

// Compile compiles cfg, decoded and validated already (config.Parse without
// the compile): what File and Parse do after decoding and validating, its
// problems named by their field.
func Compile(cfg *config.Config) (*Plan, error) {
	var c compiler
	if errs := c.compile(cfg, nil); len(errs) > 0 {
		return nil, joined(errs)
	}
	return c.plan(cfg), nil
}

// Of is cfg compiled with its limits left unchecked: the plan of a
// configuration made in code (tools, tests), which File and Parse would
// hold to them. It panics on a file it cannot read.
func Of(cfg *config.Config) *Plan {
	var c compiler
	var errs config.FieldErrors
	c.sources, errs = prompt.ReadSources(cfg)
	traces, terrs := scanTraces(cfg, nil)
	if errs = append(errs, terrs...); len(errs) > 0 {
		panic(joined(errs))
	}
	c.traces = traces
	return c.plan(cfg)
}

// CompileBurst compiles burst b of scenarios made in code rather than
// loaded (tools, tests): its trace scanned and its scenarios' datasets and
// golden sets read; no limit is checked.
func CompileBurst(b config.Burst, scenarios ...config.Scenario) (*Burst, error) {
	cfg := &config.Config{Scenarios: scenarios, Bursts: []config.Burst{b}, Limits: config.DefaultLimits}
	sources, errs := prompt.ReadSources(cfg)
	traces, terrs := scanTraces(cfg, nil)
	if errs = append(errs, terrs...); len(errs) > 0 {
		return nil, joined(errs)
	}
	c := compiler{sources: sources, traces: traces}
	return c.plan(cfg).Bursts[0], nil
}

// BurstOf is CompileBurst for a burst known to compile (tests); it panics
// otherwise.
func BurstOf(b config.Burst, scenarios ...config.Scenario) *Burst {
	pb, err := CompileBurst(b, scenarios...)
	if err != nil {
		panic(err)
	}
	return pb
}

// joined is every problem as one error.
func joined(errs []*config.FieldError) error {
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// Overridden is p with burst's override applied and compiled again, as a
// loaded file is (config.Config.Overridden). The datasets, golden sets and
// files p's configuration names were read when p was compiled: the new
// plan shares them; a trace is cut again.
func (p *Plan) Overridden(burst string, o config.Override) (*Plan, error) {
	c := compiler{sources: p.sources()}
	cfg, err := p.Config.Overridden(burst, o, c.compile)
	if err != nil {
		return nil, err
	}
	return c.plan(cfg), nil
}

// Retargeted is p with burst sent to target, a configured target, instead
// of its own (a comparison's side). Nothing is read again.
func (p *Plan) Retargeted(burst, target string) (*Plan, error) {
	if _, ok := p.Config.Target(target); !ok {
		names := make([]string, len(p.Config.Targets))
		for i, t := range p.Config.Targets {
			names[i] = t.Name
		}
		return nil, fmt.Errorf("unknown target %q; configured: %s", target, strings.Join(names, ", "))
	}
	i := slices.IndexFunc(p.Config.Bursts, func(b config.Burst) bool { return b.Name == burst })
	if i < 0 {
		_, err := p.Config.LookupBurst(burst)
		return nil, err
	}
	cfg := *p.Config
	cfg.Bursts = slices.Clone(cfg.Bursts)
	cfg.Bursts[i].Target = target
	c := compiler{sources: p.sources(), traces: map[string]*TraceScan{}}
	for _, b := range p.Bursts {
		c.traces[b.Name] = b.Trace
	}
	return c.plan(&cfg), nil
}

// Shard is the part of p that replica s runs: the targets it owns, and the
// bursts and comparisons that go with them (shard.Shard.Filter).
func (p *Plan) Shard(s shard.Shard) *Plan {
	cfg := s.Filter(p.Config)
	if cfg == p.Config {
		return p
	}
	out := &Plan{Config: cfg, Scenarios: p.Scenarios}
	for _, b := range p.Bursts {
		if slices.ContainsFunc(cfg.Bursts, func(c config.Burst) bool { return c.Name == b.Name }) {
			out.Bursts = append(out.Bursts, b)
		}
	}
	return out
}

// Scenario is the scenario named.
func (p *Plan) Scenario(name string) (*Scenario, bool) {
	i := slices.IndexFunc(p.Scenarios, func(s *Scenario) bool { return s.Name == name })
	if i < 0 {
		return nil, false
	}
	return p.Scenarios[i], true
}

// Burst is the burst named, or an error that lists the bursts there are.
func (p *Plan) Burst(name string) (*Burst, error) {
	i := slices.IndexFunc(p.Bursts, func(b *Burst) bool { return b.Name == name })
	if i < 0 {
		_, err := p.Config.LookupBurst(name)
		return nil, err
	}
	return p.Bursts[i], nil
}

// sources are what p's scenarios draw their prompts from, by name.
func (p *Plan) sources() map[string]prompt.Source {
	out := map[string]prompt.Source{}
	for _, s := range p.Scenarios {
		out[s.Name] = s.Source
	}
	return out
}

// compiler compiles a configuration as it loads: it runs after config's
// own validation (a config.Check), reads what the configuration names
// (datasets and golden sets, traces, the files its targets' clients read)
// and bounds what it may cost, every problem with the field at fault. It
// never changes the configuration: what it reads goes into the plan.
type compiler struct {
	// sources, when set, were read by an earlier compile of the same
	// configuration, whose files are then not read again.
	sources map[string]prompt.Source
	traces  map[string]*TraceScan
}

// compile is the config.Check of a load: each step sees the problems found
// before it, as the bounds need the datasets' prompts and the traces'
// counts and mean nothing once any field was refused.
func (c *compiler) compile(cfg *config.Config, found []*config.FieldError) []*config.FieldError {
	var errs config.FieldErrors
	if c.sources == nil {
		c.sources, errs = prompt.ReadSources(cfg)
		errs = append(errs, target.CheckFiles(cfg, found)...)
	}
	traces, terrs := scanTraces(cfg, found)
	c.traces, errs = traces, append(errs, terrs...)
	all := append(slices.Clone(found), errs...)
	return append(errs, c.plan(cfg).checkBounds(all)...)
}

// plan is cfg with what the compile read.
func (c *compiler) plan(cfg *config.Config) *Plan {
	p := &Plan{Config: cfg}
	for _, s := range cfg.Scenarios {
		p.Scenarios = append(p.Scenarios, &Scenario{Scenario: s, Source: c.sources[s.Name]})
	}
	for _, b := range cfg.Bursts {
		p.Bursts = append(p.Bursts, compileBurst(p, b, c.traces[b.Name]))
	}
	return p
}

// checkBounds refuses scenarios and bursts past the limits, once every
// field is in range (sizes mean nothing before).
func (p *Plan) checkBounds(found []*config.FieldError) []*config.FieldError {
	if len(found) > 0 {
		return nil
	}
	var errs config.FieldErrors
	l := p.Config.Limits
	for i, s := range p.Scenarios {
		if n := maxPromptTokens(s); n > l.MaxPromptTokens {
			errs.Add(promptField(s, i), "%s", tooLong(s, n, l.MaxPromptTokens))
		}
	}
	if n, rate, bytes := p.CanaryFootprint(); rate > l.MaxCanaryRate*(1+1e-9) {
		errs.Add("canary", "%d schedules send %.4g requests per second, past limits.max_canary_rate (%g): lengthen intervals, pair fewer targets and scenarios, or raise the limit", n, rate, l.MaxCanaryRate)
	} else if bytes > int64(l.MaxCanaryMemory) {
		errs.Add("canary", "%d schedules may hold up to %s with every target hanging to its timeout, past limits.max_canary_memory (%s): shorten timeouts, prompts or images, lengthen intervals, or raise the limit", n, config.Bytes(bytes), config.Bytes(int64(l.MaxCanaryMemory)))
	}
	for i, b := range p.Bursts {
		path := fmt.Sprintf("bursts[%d]", i)
		f := b.Footprint
		if f.Requests > l.MaxPlannedRequests {
			errs.Add(path, "plans up to %d requests per run, past limits.max_planned_requests (%d): lower its rate, duration or requests, or raise the limit", f.Requests, l.MaxPlannedRequests)
		} else if f.Bytes > int64(l.MaxBurstMemory) {
			errs.Add(path, "may hold up to %s, past limits.max_burst_memory (%s): lower its rate, duration, max_concurrency, token lengths or images, or raise the limit", config.Bytes(f.Bytes), config.Bytes(int64(l.MaxBurstMemory)))
		}
	}
	return errs
}

// promptField is the field a scenario's prompt length comes from.
func promptField(s *Scenario, i int) string {
	switch {
	case s.PromptDataset != nil:
		return fmt.Sprintf("scenarios[%d].prompt_dataset.file", i)
	case s.Golden != nil:
		return fmt.Sprintf("scenarios[%d].golden.file", i)
	}
	return fmt.Sprintf("scenarios[%d].prompt_tokens", i)
}

// tooLong says why s's prompts of n tokens are past the limit.
func tooLong(s *Scenario, n, limit int) string {
	switch {
	case s.PromptDataset != nil:
		longest := slices.MaxFunc(s.Source.Dataset, func(a, b prompt.DatasetPrompt) int { return a.Tokens - b.Tokens })
		return fmt.Sprintf("the prompt at %s:%d is about %d tokens with its nonce line (estimated), past limits.max_prompt_tokens (%d): raise the limit or drop that conversation", s.PromptDataset.File, longest.Line, n, limit)
	case s.Golden != nil:
		return fmt.Sprintf("the prompt at %s:%d is about %d tokens with its nonce line (estimated), past limits.max_prompt_tokens (%d): raise the limit or shorten that line", s.Golden.File, longestGolden(s.Source.Golden).Line, n, limit)
	}
	what := ""
	if cv := s.Conversation; cv != nil {
		what = fmt.Sprintf(" (turn %d of the conversation, with every earlier message and answer)", cv.Turns)
	}
	return fmt.Sprintf("prompts of up to %d tokens%s are past limits.max_prompt_tokens (%d)", n, what, limit)
}
