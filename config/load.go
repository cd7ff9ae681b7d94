package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config/internal/yamlerr"
)

// A Check is validation another package owns: it reads what a
// configuration names (a dataset, a trace) or bounds what it costs. It runs
// after config's own validation, sees the problems found so far (to skip a
// field already refused, or everything when any was), may complete c (a
// dataset's prompts, a trace's scan), and returns its own problems, which
// are reported with file and line like config's.
type Check func(c *Config, found []*FieldError) []*FieldError

// LoadFile reads, decodes and validates a configuration file, then runs
// checks in order.
func LoadFile(path string, checks ...Check) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(data, path, filepath.Dir(path), checks)
}

// Redacted renders the configuration as YAML with every secret shown as <secret>.
func (c *Config) Redacted() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// Parse decodes and validates YAML. Every error names file, line and field:
// "file:12: targets[1].url: must be an http or https URL".
// Files the configuration names are read relative to the working directory.
// checks run in order after config's own validation.
func Parse(data []byte, filename string, checks ...Check) (*Config, error) {
	return parse(data, filename, "", checks)
}

// parse reads files the configuration names relative to dir.
func parse(data []byte, filename, dir string, checks []Check) (*Config, error) {
	if err := yamlerr.Syntax(data, filename); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	idx := yamlerr.NewIndex(&root)

	cfg, problems, err := yamlerr.Decode(data, idx, func() *Config { return &Config{Limits: DefaultLimits} }, moved)
	if err != nil {
		return nil, decodeError(idx, filename, &root, err)
	}
	if cfg.Canary.Interval == 0 {
		cfg.Canary.Interval = DefaultCanary.Interval
	}
	if dir != "" {
		cfg.setDirectory(dir)
	}
	decoding := problems[:len(problems):len(problems)] // what decoding found: those speak for their fields
	for _, fe := range cfg.check(checks) {
		if yamlerr.Covered(decoding, fe.Path) {
			continue // a problem of the field's value says it already
		}
		fe.Path = writtenAs(idx, fe.Path)
		msg := fe.Msg
		if fe.First != "" {
			msg += fmt.Sprintf(" (first at line %d)", idx.Line(fe.First))
		}
		problems = append(problems, yamlerr.Problem{Line: idx.Line(fe.Path), Path: fe.Path, Msg: msg})
	}
	if len(problems) > 0 {
		return nil, yamlerr.Join(filename, problems)
	}
	return cfg, nil
}

// check validates c and then runs checks, each seeing what was found before it.
func (c *Config) check(checks []Check) []*FieldError {
	errs := []*FieldError(c.validate())
	for _, check := range checks {
		errs = append(errs, check(c, errs)...)
	}
	return errs
}

func (c *Config) setDirectory(dir string) {
	for i := range c.Targets {
		c.Targets[i].HTTPClientConfig.SetDirectory(dir)
	}
	if c.Probe != nil {
		c.Probe.HTTPClientConfig.SetDirectory(dir)
	}
	for i := range c.Scenarios {
		c.Scenarios[i].SetDirectory(dir)
	}
	c.setTraceDirectory(dir)
}

// decodeError locates a decoder error that is not a type error.
func decodeError(idx *yamlerr.Index, filename string, root *yaml.Node, err error) error {
	// Errors from library validators (http_client_config) carry no line: find the
	// target whose block fails on its own.
	decodeTarget := func(n *yaml.Node) error { var t Target; return n.Decode(&t) }
	if ierr := idx.ItemError(filename, root, "targets", "http_client_config", decodeTarget); ierr != nil {
		return ierr
	}
	return fmt.Errorf("%s: %w", filename, err)
}

// normalised maps a field prometheus/common fills from another one the
// file may have written instead (bearer_token_file becomes the
// authorization's credentials_file) to that one.
var normalised = map[string]string{
	"authorization.credentials_file": "bearer_token_file",
	"authorization.credentials":      "bearer_token",
}

// writtenAs is path as the file wrote it: an error names the field the
// user wrote, not the one a library moved its value to.
func writtenAs(idx *yamlerr.Index, path string) string {
	if idx.Has(path) {
		return path
	}
	for to, from := range normalised {
		if head, ok := strings.CutSuffix(path, "."+to); ok && idx.Has(head+"."+from) {
			return head + "." + from
		}
	}
	return path
}

// moved names keys that left for another place.
var moved = map[string]string{
	"targets.headers": "http_client_config.http_headers (a name maps to values, secrets or files)",
}
