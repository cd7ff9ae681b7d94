// Package load reads a configuration whole: config's decoding and
// validation, then the checks of the packages that read what it names
// (prompt's datasets and golden sets, burst/plan's traces, the files target's clients
// read) and bound what it may cost (burst/plan's limits), every problem
// with its file and line.
package load

import (
	"github.com/llmprobe/llmprobe/burst/plan"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/target"
)

// checks run in this order: the bounds need the datasets' and golden sets'
// prompts and the traces' counts.
var checks = []config.Check{prompt.CheckDatasets, prompt.CheckGolden, plan.CheckTraces, target.CheckFiles, plan.CheckBounds}

// File reads and checks a configuration file; files it names are read
// relative to its directory.
func File(path string) (*config.Config, error) {
	return config.LoadFile(path, checks...)
}

// Parse checks a configuration's YAML; filename is for its errors, and
// files it names are read relative to the working directory.
func Parse(data []byte, filename string) (*config.Config, error) {
	return config.Parse(data, filename, checks...)
}

// overrideChecks are the checks an override can change the outcome of: a
// burst's rate and duration change its trace cut and its bounds; the
// datasets, golden sets and files c names were read and checked when c was loaded, and
// the copy shares what they found.
var overrideChecks = []config.Check{plan.CheckTraces, plan.CheckBounds}

// Overridden is c, as File or Parse loaded it, with burst's override
// applied and checked again as a loaded file is (config.Config.Overridden).
func Overridden(c *config.Config, burst string, o config.Override) (*config.Config, error) {
	return c.Overridden(burst, o, overrideChecks...)
}
