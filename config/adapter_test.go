package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// Every mistake of a scenario's adapters at once, by line and field.
func TestAdaptersErrorsAtOnce(t *testing.T) {
	_, err := config.LoadFile("testdata/bad_adapters.yml")
	for _, want := range []string{
		`bad_adapters.yml:8: scenarios[0].adapters[1].name: "sql-lora" repeats adapters[0]`,
		`bad_adapters.yml:9: scenarios[0].adapters[2].name: must be 1 to 128 characters`,
		`bad_adapters.yml:9: scenarios[0].adapters[2].weight: -1 must be a finite number above 0 (unset is 1)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %q", err, want)
		}
	}
}
