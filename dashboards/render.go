package dashboards

import (
	"encoding/json"
	"fmt"
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
