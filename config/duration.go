package config

import (
	"time"

	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/config/internal/yamlerr"
	"go.yaml.in/yaml/v3"
)

// Duration is a duration written as Prometheus does (500ms, 2s, 1m) or as Go
// does (1.5s). It reports its own line when invalid, which the decoder can't.
type Duration time.Duration

// UnmarshalYAML parses a scalar; a scalar needs no strict-mode decoding.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return yamlerr.AtValue(n, "a duration must be a string like 500ms, 2s or 1m")
	}
	if md, err := model.ParseDuration(n.Value); err == nil {
		*d = Duration(md)
		return nil
	}
	td, err := time.ParseDuration(n.Value)
	if err != nil {
		return yamlerr.AtValue(n, "invalid duration %q (use a form like 500ms, 2s or 1m)", n.Value)
	}
	*d = Duration(td)
	return nil
}

// MarshalYAML writes the Prometheus form.
func (d Duration) MarshalYAML() (any, error) {
	return d.String(), nil
}

func (d Duration) String() string {
	td := time.Duration(d)
	if td%time.Millisecond != 0 {
		return td.String()
	}
	return model.Duration(td).String()
}

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
