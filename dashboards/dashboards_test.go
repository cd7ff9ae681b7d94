package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/llmprobe/llmprobe/internal/metricdoc"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// The committed JSON is what the Go code generates; a stale file fails.
func TestDashboardsAreGenerated(t *testing.T) {
	files, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := filepath.Glob("*.json")
	if len(committed) != len(files) {
		t.Errorf("%d JSON files committed, %d generated", len(committed), len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v (run make generate)", name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s is stale: run make generate", name)
		}
	}
}

// panelJSON is the part of a panel the checks read.
type panelJSON struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

type dashboardJSON struct {
	Title      string      `json:"title"`
	Panels     []panelJSON `json:"panels"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

func loadAll(t *testing.T) map[string]dashboardJSON {
	t.Helper()
	files, _ := filepath.Glob("*.json")
	out := map[string]dashboardJSON{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboardJSON
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = d
	}
	return out
}

// Each dashboard passes the SDK's strict unmarshalling and validation.
func TestDashboardsStrict(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	files, _ := filepath.Glob("*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard.Dashboard
		// On success the SDK can return an empty, non-nil cog.BuildErrors.
		if err := d.UnmarshalJSONStrict(b); err != nil {
			var be cog.BuildErrors
			if !errors.As(err, &be) || len(be) > 0 {
				t.Errorf("%s: strict unmarshal: %v", f, err)
			}
		}
		if err := d.Validate(); err != nil {
			var be cog.BuildErrors
			if !errors.As(err, &be) || len(be) > 0 {
				t.Errorf("%s: validate: %v", f, err)
			}
		}
	}
	// The check can fail: an unknown field is refused.
	var d dashboard.Dashboard
	err := d.UnmarshalJSONStrict([]byte(`{"title": "x", "panelz": []}`))
	var be cog.BuildErrors
	if err == nil || (errors.As(err, &be) && len(be) == 0) {
		t.Error("strict unmarshal accepted an unknown field")
	}
}

// Every panel has a description and a unit; queries use $__rate_interval;
// the probe dashboards have datasource, target, model and scenario variables.
func TestPanelsAreDescribed(t *testing.T) {
	fixedWindow := regexp.MustCompile(`rate\([^)]*\[\d+[smhd]\]\)`)
	for file, d := range loadAll(t) {
		var vars []string
		for _, v := range d.Templating.List {
			vars = append(vars, v.Name)
		}
		if !slices.Contains(vars, "datasource") {
			t.Errorf("%s: no datasource variable", file)
		}
		if strings.Contains(file, "slo") || strings.Contains(file, "latency") {
			for _, v := range []string{"target", "model", "scenario"} {
				if !slices.Contains(vars, v) {
					t.Errorf("%s: no %s variable", file, v)
				}
			}
		}
		for _, p := range d.Panels {
			if p.Type == "row" {
				continue
			}
			if p.Description == "" {
				t.Errorf("%s: panel %q has no description", file, p.Title)
			}
			if p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s: panel %q has no unit", file, p.Title)
			}
			for _, tg := range p.Targets {
				if fixedWindow.MatchString(tg.Expr) {
					t.Errorf("%s: panel %q uses a fixed rate window instead of $__rate_interval: %s", file, p.Title, tg.Expr)
				}
			}
		}
	}
}

// Every expression parses (promtool checks them as recording rules), and
// every llmprobe_ metric it names is in docs/metrics.md.
func TestQueriesParseAndNameDocumentedMetrics(t *testing.T) {
	names, err := metricdoc.Names("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard-queries\n    rules:\n")
	i := 0
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	for where, expr := range queries {
		for _, m := range metricdoc.Undocumented(expr, names) {
			t.Errorf("%s names %s, which docs/metrics.md does not list", where, m)
		}
		b, _ := json.Marshal(Concrete(expr, "5m"))
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, b)
		i++
	}
	promtool := testkit.Tool(t, "promtool", "apt-get install prometheus")
	path := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("dashboard queries do not parse: %v\n%s", err, out)
	}
}
