package dashboards

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dataSourceRef is how every query names its data source: the dashboard's
// variable, which Grafana sets after import or provisioning.
const dataSourceRef = "${datasource}"

// docs/dashboards.md's import steps hold for the JSON: no __inputs (so
// Grafana asks for no data source on import), a Prometheus datasource
// variable that every panel, query, variable and annotation reads, and the
// schemaVersion the page states with its minimum Grafana, which the README
// and the compose stack's Grafana agree with.
func TestDashboardsImportAsDocumented(t *testing.T) {
	doc := readText(t, "../docs/dashboards.md")
	for _, claim := range []string{"no `__inputs`", "`${datasource}`", "**Data source**"} {
		if !strings.Contains(doc, claim) {
			t.Errorf("docs/dashboards.md no longer says %q: hold this test to what it says now", claim)
		}
	}
	schema := atoi(t, "docs/dashboards.md", regexp.MustCompile("`schemaVersion` (\\d+)").FindStringSubmatch(doc))
	minGrafana := regexp.MustCompile(`\*\*Grafana (\d+\.\d+) or newer\.\*\*`).FindStringSubmatch(doc)
	if minGrafana == nil {
		t.Fatal("docs/dashboards.md states no minimum Grafana (**Grafana X.Y or newer.**)")
	}
	if !strings.Contains(readText(t, "../README.md"), "Grafana "+minGrafana[1]+" or newer") {
		t.Errorf("the README does not state the minimum Grafana docs/dashboards.md states (%s)", minGrafana[1])
	}
	image := regexp.MustCompile(`image: grafana/grafana:(\d+\.\d+)\.\d+`).FindStringSubmatch(readText(t, "../deploy/docker/compose.yaml"))
	if image == nil || versionLess(image[1], minGrafana[1]) {
		t.Errorf("deploy/docker/compose.yaml runs Grafana %v, older than the minimum %s", image, minGrafana[1])
	}

	files, _ := filepath.Glob("*.json")
	for _, f := range files {
		var d map[string]any
		if err := json.Unmarshal([]byte(readText(t, f)), &d); err != nil {
			t.Fatal(err)
		}
		if _, ok := d["__inputs"]; ok {
			t.Errorf("%s has __inputs: the import steps of docs/dashboards.md say Grafana asks for no data source", f)
		}
		if v, _ := d["schemaVersion"].(float64); int(v) != schema {
			t.Errorf("%s: schemaVersion %v, docs/dashboards.md says %d (and a minimum Grafana for it)", f, d["schemaVersion"], schema)
		}
		checkDataSources(t, f, d)
	}
}

// checkDataSources: the datasource variable is Prometheus, and every
// panel (inside rows too), query, variable and annotation reads through it.
func checkDataSources(t *testing.T, file string, d map[string]any) {
	t.Helper()
	vars := objects(field(d["templating"], "list"))
	if len(vars) == 0 || vars[0]["name"] != "datasource" || vars[0]["type"] != "datasource" || vars[0]["query"] != "prometheus" {
		t.Errorf("%s: the first variable is not a datasource variable of type prometheus: %v", file, vars)
	}
	refs := 0
	check := func(where string, obj map[string]any) {
		ds, _ := obj["datasource"].(map[string]any)
		if ds["uid"] != dataSourceRef || ds["type"] != "prometheus" {
			t.Errorf("%s: %s reads %v, not the datasource variable", file, where, obj["datasource"])
		}
		refs++
	}
	for _, v := range vars[1:] {
		if v["type"] == "query" {
			check("variable "+str(v["name"]), v)
		}
	}
	for _, a := range objects(field(d["annotations"], "list")) {
		check("annotation "+str(a["name"]), a)
	}
	var panels func([]map[string]any)
	panels = func(ps []map[string]any) {
		for _, p := range ps {
			panels(objects(p["panels"]))
			if p["type"] == "row" {
				continue
			}
			check("panel "+str(p["title"]), p)
			for _, tg := range objects(p["targets"]) {
				check("a query of panel "+str(p["title"]), tg)
			}
		}
	}
	panels(objects(d["panels"]))
	if refs < 10 {
		t.Errorf("%s: only %d data source references read", file, refs)
	}
}

// field is obj[key] where obj is a JSON object, else nil.
func field(obj any, key string) any {
	m, _ := obj.(map[string]any)
	return m[key]
}

// objects are the JSON objects of a JSON list.
func objects(v any) []map[string]any {
	items, _ := v.([]any)
	var out []map[string]any
	for _, it := range items {
		if o, ok := it.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func atoi(t *testing.T, where string, m []string) int {
	t.Helper()
	if m == nil {
		t.Fatalf("%s states no schemaVersion", where)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// versionLess compares major.minor versions.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 2 {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}
