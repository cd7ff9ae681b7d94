package prompt

import "github.com/llmprobe/llmprobe/config"

// read holds what the last CheckDatasets or CheckGolden read, by scenario
// name.
var read map[string]Source

// CheckDatasets reads a configuration's datasets and golden sets as plan's
// compile does, a config.Check for the tests, keeping them in read.
func CheckDatasets(c *config.Config, _ []*config.FieldError) []*config.FieldError {
	var errs config.FieldErrors
	read, errs = ReadSources(c)
	return errs
}

// CheckGolden is CheckDatasets, by the name the golden tests use.
var CheckGolden = CheckDatasets
