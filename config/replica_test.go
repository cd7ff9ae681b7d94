package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// Every mistake of a replicas block at once: no header, "other" and a
// value twice.
func TestReplicasErrorsAtOnce(t *testing.T) {
	_, err := config.LoadFile("testdata/bad_replicas.yml")
	for _, want := range []string{
		`bad_replicas.yml:5: targets[0].replicas.header: is required`,
		`bad_replicas.yml:6: targets[0].replicas.values: "other" is what llmprobe calls every replica not listed`,
		`bad_replicas.yml:6: targets[0].replicas.values: "pod-a" is listed twice`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %q", err, want)
		}
	}
}
