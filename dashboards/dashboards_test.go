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
	names, err := testkit.MetricNames("../docs/metrics.md")
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
		for _, m := range testkit.UndocumentedMetrics(expr, names) {
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

// rawPanels decodes every panel of every dashboard loosely, by dashboard file.
func rawPanels(t *testing.T) map[string][]map[string]any {
	t.Helper()
	files, _ := filepath.Glob("*.json")
	out := map[string][]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []map[string]any `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		out[f] = d.Panels
	}
	return out
}

// dig follows keys through nested JSON objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func exprs(p map[string]any) []string {
	var out []string
	targets, _ := p["targets"].([]any)
	for _, tg := range targets {
		if e, ok := dig(tg, "expr").(string); ok {
			out = append(out, e)
		}
	}
	return out
}

// Every stat and table colours its values by explicit thresholds, stats
// reduce to the last value, and no figure without samples reads 0.
func TestStatsAndTablesHaveThresholds(t *testing.T) {
	for file, panels := range rawPanels(t) {
		for _, p := range panels {
			typ, title := p["type"], p["title"]
			if typ != "stat" && typ != "table" {
				continue
			}
			steps, _ := dig(p, "fieldConfig", "defaults", "thresholds", "steps").([]any)
			if len(steps) == 0 {
				t.Errorf("%s: %s %q has no thresholds", file, typ, title)
			}
			mappings, _ := dig(p, "fieldConfig", "defaults", "mappings").([]any)
			if !slices.ContainsFunc(mappings, func(m any) bool { return dig(m, "options", "result", "text") == "n/a" }) {
				t.Errorf("%s: %s %q does not show n/a for no samples", file, typ, title)
			}
			if calcs, _ := dig(p, "options", "reduceOptions", "calcs").([]any); typ == "stat" && len(calcs) == 0 {
				t.Errorf("%s: stat %q reduces with no calculation", file, title)
			}
		}
	}
}

// Each latency panel of the client view draws its objective from
// llmprobe_slo_objective_seconds: Grafana's static thresholds cannot follow it.
func TestLatencyPanelsShowTheirObjective(t *testing.T) {
	objectives := map[string]string{
		"llmprobe_time_to_first_token_seconds": "ttft", "llmprobe_inter_token_latency_seconds": "stall",
		"llmprobe_time_per_output_token_seconds": "tpot", "llmprobe_request_duration_seconds": "e2e",
	}
	seen := 0
	for _, p := range rawPanels(t)["llmprobe-latency.json"] {
		if p["type"] != "timeseries" {
			continue
		}
		all := strings.Join(exprs(p), "\n")
		for metric, objective := range objectives {
			if strings.Contains(all, metric+"_bucket") {
				seen++
				if !strings.Contains(all, `llmprobe_slo_objective_seconds{objective="`+objective+`"`) {
					t.Errorf("panel %q shows %s without the %s objective", p["title"], metric, objective)
				}
			}
		}
	}
	if seen != len(objectives) {
		t.Errorf("%d latency panels checked, want %d", seen, len(objectives))
	}
}

// Every graph of the Latency and Upgrades dashboards that draws one of the
// probe's latency histograms shows its exemplars, from exactly one query
// (each that asks draws the same points again); no other panel asks.
func TestLatencyPanelsShowExemplars(t *testing.T) {
	histogram := regexp.MustCompile(`llmprobe_(time_to_first_token|time_to_first_tool_call|inter_token_latency|time_per_output_token|request_duration|dispatch_delay)_seconds_bucket\{`)
	seen := 0
	for file, panels := range rawPanels(t) {
		for _, p := range panels {
			targets, _ := p["targets"].([]any)
			asking, drawing := 0, false
			for _, tg := range targets {
				if dig(tg, "exemplar") == true {
					asking++
					if e, _ := dig(tg, "expr").(string); !histogram.MatchString(e) {
						t.Errorf("%s: panel %q asks for exemplars of %s, which has none", file, p["title"], e)
					}
				}
				e, _ := dig(tg, "expr").(string)
				drawing = drawing || histogram.MatchString(e)
			}
			// Stat panels draw no points to hang an exemplar on.
			wants := drawing && (p["type"] == "timeseries" || p["type"] == "heatmap") && (file == "llmprobe-latency.json" || file == "llmprobe-upgrades.json")
			switch {
			case wants && asking != 1:
				t.Errorf("%s: panel %q draws a latency histogram with %d queries asking for exemplars, want 1", file, p["title"], asking)
			case !wants && asking > 0:
				t.Errorf("%s: panel %q asks for exemplars", file, p["title"])
			}
			if wants {
				seen++
			}
		}
	}
	// TTFT, ITL, TPOT, E2E, two heatmaps, the first tool call and dispatch
	// delay; TTFT and TPOT by engine version.
	if seen != 10 {
		t.Errorf("%d panels with exemplars, want 10", seen)
	}
}

// unitRules name the unit a query's result has, first match wins.
var unitRules = []struct {
	re   *regexp.Regexp
	unit string
}{
	{regexp.MustCompile(`spec_decode_|spec_accept_`), "none"}, // draft acceptance: a share and a length
	{regexp.MustCompile(`/ on \(scenario\) group_left \(\) max by \(scenario\) \(llmprobe_slo_objective_seconds`), "percentunit"},
	{regexp.MustCompile(`rate\(llmprobe_good_requests_total\{[^/]*/ sum\(rate\(llmprobe_requests_total\{`), "percentunit"},
	{regexp.MustCompile(`rate\(llmprobe_quality_checks_total\{result="passed"[^/]*/`), "percentunit"},
	{regexp.MustCompile(`rate\([a-z:_]*seconds_total\{[^/]*/ sum by \(target\) \(rate\([a-z:_]*tokens[a-z_]*total\{`), "s"}, // time per token
	{regexp.MustCompile(`regression_ratio\{|upgrade_ratio\{|comparison_ratio(_lower|_upper)?\{`), "none"},                   // a quantile over the same quantile
	{regexp.MustCompile(`_bytes_per_second\b`), "Bps"},
	{regexp.MustCompile(`_bytes\b`), "bytes"},
	{regexp.MustCompile(`_watts\b`), "watt"},
	{regexp.MustCompile(`_joules_per_output_token\b`), "joule"},
	{regexp.MustCompile(`_celsius\b`), "celsius"},
	{regexp.MustCompile(`_hz\b`), "hertz"},
	{regexp.MustCompile(`rate\([a-z:_]*(tokens_total|tokens_predicted_total|generated_tokens_sum|input_length_sum)\{|tokens_per_second\{`), unitTokPerSec},
	{regexp.MustCompile(`rate\(llmprobe_[a-z_]*requests_total\{`), "reqps"},
	{regexp.MustCompile(`_ratio\{|_perc\{|token_usage\{`), "percentunit"},
	{regexp.MustCompile(`_timestamp_seconds\{`), ""},                                           // dates: checked by eye
	{regexp.MustCompile(`rate\(llmprobe_cgroup_cpu_throttled_seconds_total\[`), "percentunit"}, // seconds a second
	{regexp.MustCompile(`histogram_quantile\(|_seconds\{|_seconds_total\{`), "s"},
}

func expectedUnit(expr string) (string, bool) {
	for _, r := range unitRules {
		if r.re.MatchString(expr) {
			return r.unit, r.unit != ""
		}
	}
	return "", false
}

// A panel's unit is the one its queries' metrics carry: seconds, ratios,
// request and token rates, bytes, watts, joules.
func TestUnitsMatchTheMetrics(t *testing.T) {
	checked := 0
	for file, panels := range rawPanels(t) {
		for _, p := range panels {
			if p["type"] != "timeseries" && p["type"] != "stat" {
				continue
			}
			unit, _ := dig(p, "fieldConfig", "defaults", "unit").(string)
			for _, e := range exprs(p) {
				if strings.Contains(e, "llmprobe_slo_objective_seconds") && !strings.Contains(e, "group_left") && unit == "s" {
					continue // the objective line drawn next to latencies
				}
				if want, ok := expectedUnit(e); ok {
					checked++
					if unit != want {
						t.Errorf("%s: panel %q has unit %q, its query wants %q: %s", file, p["title"], unit, want, e)
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d queries had a unit rule", checked)
	}
}

// Every engine row reads only its own family's metric names, for the
// selected targets, and only for targets whose target_info names that engine.
func TestEngineRowsFollowTargetAndEngine(t *testing.T) {
	prefixes := map[string]string{"vLLM": "vllm:", "SGLang": "sglang:", "TGI": "tgi_", "llama.cpp": "llamacpp:"}
	engineOf := map[string]string{"vLLM": "vllm|llmprobe-sim", "SGLang": "sglang", "TGI": "tgi", "llama.cpp": "llamacpp"}
	rows := 0
	for _, p := range rawPanels(t)["llmprobe-engines.json"] {
		family, _, _ := strings.Cut(p["title"].(string), " ")
		prefix, ok := prefixes[family]
		if !ok || p["type"] == "row" {
			continue
		}
		rows++
		for _, e := range exprs(p) {
			if !strings.Contains(e, `llmprobe_target_info{engine=~"`+engineOf[family]+`", target=~"$target"}`) {
				t.Errorf("%q does not keep to %s targets: %s", p["title"], family, e)
			}
			for other, op := range prefixes {
				if other != family && strings.Contains(e, op) {
					t.Errorf("%q reads %s metrics: %s", p["title"], other, e)
				}
			}
			if strings.Count(e, `target=~"$target"`) < 2 {
				t.Errorf("%q does not follow the target variable: %s", p["title"], e)
			}
		}
		if !slices.ContainsFunc(exprs(p), func(e string) bool { return strings.Contains(e, prefix) }) {
			t.Errorf("%q shows none of %s's own metrics", p["title"], family)
		}
	}
	// Four a family, and the speculative-decoding panel of the three that
	// export the draft model's acceptance.
	if rows != 4*len(prefixes)+3 {
		t.Errorf("%d engine panels, want 4 per family and 3 of speculative decoding", rows)
	}
}

// The burst verdict table links each burst to its newest HTML report on
// llmprobe, at a URL the dashboard's llmprobe_url variable sets.
func TestBurstVerdictsLinkToReports(t *testing.T) {
	b, err := os.ReadFile("llmprobe-bursts.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []map[string]any `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Templating.List, func(v map[string]any) bool {
		return v["name"] == "llmprobe_url" && v["query"] == "http://localhost:9479"
	}) {
		t.Error("no llmprobe_url variable defaulting to http://localhost:9479")
	}
	found := false
	for _, p := range rawPanels(t)["llmprobe-bursts.json"] {
		if p["type"] != "table" {
			continue
		}
		overrides, _ := dig(p, "fieldConfig", "overrides").([]any)
		for _, o := range overrides {
			props, _ := dig(o, "properties").([]any)
			for _, prop := range props {
				links, _ := dig(prop, "value").([]any)
				for _, l := range links {
					if dig(o, "matcher", "options") == "burst" && strings.HasPrefix(fmt.Sprint(dig(l, "url")), "${llmprobe_url}/bursts/latest?burst=${__data.fields.burst") {
						found = true
					}
				}
			}
		}
	}
	if !found {
		t.Error("the burst verdict table has no link from the burst to its report")
	}
}
