// Package alerts holds llmprobe's Prometheus recording and alerting rules,
// and renders them as a prometheus-operator PrometheusRule.
package alerts

//go:generate go run ./internal/prometheusrule ../deploy/kubernetes/base/prometheusrule.yaml
// The Helm chart ships a copy: Helm reads no file outside the chart.
//go:generate cp llmprobe.rules.yml ../deploy/helm/llmprobe/files/llmprobe.rules.yml

import (
	"bytes"
	_ "embed"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"go.yaml.in/yaml/v3"
)

// Rules is the rules file, alerts/llmprobe.rules.yml.
//
//go:embed llmprobe.rules.yml
var Rules []byte

// PrometheusRule wraps the rule groups in a PrometheusRule manifest, so the
// file Prometheus loads and the one the operator loads never differ.
func PrometheusRule() ([]byte, error) {
	var file struct {
		Groups []yaml.Node `yaml:"groups"`
	}
	if err := yaml.Unmarshal(Rules, &file); err != nil {
		return nil, fmt.Errorf("llmprobe.rules.yml: %w", err)
	}
	manifest := map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":   "llmprobe",
			"labels": map[string]string{"app.kubernetes.io/name": "llmprobe", "app.kubernetes.io/component": "alerting-rules"},
		},
		"spec": map[string]any{"groups": file.Groups},
	}
	var buf bytes.Buffer
	buf.WriteString("# Generated from alerts/llmprobe.rules.yml by `make generate`; do not edit.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(manifest); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// Timing is the for: and keep_firing_for: of the alert named alert as
// shipped (0 where it sets none): what a simulation of the alert applies.
func Timing(alert string) (forDur, keepFiring time.Duration, err error) {
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string         `yaml:"alert"`
				For   model.Duration `yaml:"for"`
				Keep  model.Duration `yaml:"keep_firing_for"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(Rules, &f); err != nil {
		return 0, 0, fmt.Errorf("llmprobe.rules.yml: %w", err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == alert {
				return time.Duration(r.For), time.Duration(r.Keep), nil
			}
		}
	}
	return 0, 0, fmt.Errorf("llmprobe.rules.yml: no alert %s", alert)
}
