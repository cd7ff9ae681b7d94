package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Render builds every dashboard and returns its JSON by file name.
func Render() (map[string][]byte, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(all))
	for name, b := range all {
		d, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		data, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = append(data, '\n')
	}
	return out, nil
}

// Queries returns every expression of every dashboard, panel targets and
// annotations, keyed "dashboard title / panel title / n".
func Queries() (map[string]string, error) {
	files, err := Render()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, data := range files {
		var d struct {
			Title  string `json:"title"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
			Annotations struct {
				List []struct {
					Name string `json:"name"`
					Expr string `json:"expr"`
				} `json:"list"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		for _, p := range d.Panels {
			for i, tg := range p.Targets {
				out[fmt.Sprintf("%s / %s / %d", d.Title, p.Title, i)] = tg.Expr
			}
		}
		for _, a := range d.Annotations.List {
			if a.Expr != "" {
				out[fmt.Sprintf("%s / annotation %s", d.Title, a.Name)] = a.Expr
			}
		}
	}
	return out, nil
}

// Concrete fills Grafana's variables (all values) so an expression can be
// parsed or sent to Prometheus.
func Concrete(expr, rateInterval string) string {
	return strings.NewReplacer("$__rate_interval", rateInterval, "$target", ".*", "$model", ".*", "$scenario", ".*",
		"$burst", ".*", "$gpu", ".*", "$instance", ".*").Replace(expr)
}
