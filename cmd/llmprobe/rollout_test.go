package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// argoTemplate is what the test reads of the shipped Argo Rollouts
// AnalysisTemplate: its one metric's query and conditions.
type argoTemplate struct {
	Spec struct {
		Metrics []struct {
			SuccessCondition string `yaml:"successCondition"`
			FailureCondition string `yaml:"failureCondition"`
			Provider         struct {
				Prometheus struct {
					Query string `yaml:"query"`
				} `yaml:"prometheus"`
			} `yaml:"provider"`
		} `yaml:"metrics"`
	} `yaml:"spec"`
}

// flaggerTemplate is the shipped Flagger MetricTemplate's query.
type flaggerTemplate struct {
	Spec struct {
		Query string `yaml:"query"`
	} `yaml:"spec"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(readFile(t, path)), into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// argoOutcome is the phase Argo Rollouts gives a measurement whose query
// returned result: the shipped conditions evaluated as Argo evaluates
// them (expr, with result the vector's values).
func argoOutcome(t *testing.T, m argoMetric, result []float64) string {
	t.Helper()
	env := map[string]any{"result": result}
	for _, c := range []struct{ phase, cond string }{{"Failed", m.failure}, {"Successful", m.success}} {
		out, err := expr.Eval(c.cond, env)
		if err != nil {
			t.Fatalf("condition %q on %v: %v", c.cond, result, err)
		}
		if out == true {
			return c.phase
		}
	}
	return "Inconclusive"
}

type argoMetric struct{ query, success, failure string }

// rolloutTemplates are the shipped templates' queries for comparison.
func rolloutTemplates(t *testing.T, comparison string) (argo argoMetric, flaggerQuery string) {
	t.Helper()
	var a argoTemplate
	readYAML(t, "../../deploy/rollouts/argo-analysistemplate.yaml", &a)
	if len(a.Spec.Metrics) != 1 {
		t.Fatalf("the AnalysisTemplate has %d metrics, want 1", len(a.Spec.Metrics))
	}
	m := a.Spec.Metrics[0]
	argo = argoMetric{strings.ReplaceAll(m.Provider.Prometheus.Query, "{{args.comparison}}", comparison), m.SuccessCondition, m.FailureCondition}
	var f flaggerTemplate
	readYAML(t, "../../deploy/rollouts/flagger-metrictemplate.yaml", &f)
	flaggerQuery = strings.ReplaceAll(f.Spec.Query, "{{ variables.comparison }}", comparison)
	for _, q := range []string{argo.query, flaggerQuery} {
		if strings.Contains(q, "{{") || !strings.Contains(q, "llmprobe_comparison_decision") {
			t.Fatalf("template query %q: want llmprobe_comparison_decision with every variable filled", q)
		}
	}
	return argo, flaggerQuery
}

// The shipped conditions map the decision's values as docs/control-loops.md
// says: 1 succeeds, -1 fails, 0 and no series at all are inconclusive.
func TestArgoConditionsMapTheDecision(t *testing.T) {
	argo, _ := rolloutTemplates(t, "c")
	for _, c := range []struct {
		result []float64
		want   string
	}{{[]float64{1}, "Successful"}, {[]float64{-1}, "Failed"}, {[]float64{0}, "Inconclusive"}, {nil, "Inconclusive"}} {
		if got := argoOutcome(t, argo, c.result); got != c.want {
			t.Errorf("result %v: %s, want %s", c.result, got, c.want)
		}
	}
}

// checkRolloutVerdicts evaluates the shipped templates' queries in prom and
// reads /api/v1/comparisons: all three must say want (1 pass, -1 fail).
func checkRolloutVerdicts(t *testing.T, prom, daemon, comparison string, want int) {
	t.Helper()
	argo, flaggerQuery := rolloutTemplates(t, comparison)
	values := func(q string) []float64 {
		got, err := promInstant(prom, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []float64
		for _, s := range got {
			v, _ := strconv.ParseFloat(s.Value[1].(string), 64)
			out = append(out, v)
		}
		return out
	}
	wantArgo := map[int]string{1: "Successful", -1: "Failed"}[want]
	if got := values(argo.query); argoOutcome(t, argo, got) != wantArgo {
		t.Errorf("Argo Rollouts: %s gives %v: %s, want %s", argo.query, got, argoOutcome(t, argo, got), wantArgo)
	}
	// Flagger's thresholdRange {min: 1}: a check passes at 1 only.
	if got := values(flaggerQuery); len(got) != 1 || (got[0] >= 1) != (want == 1) {
		t.Errorf("Flagger: %s gives %v, want the check to pass: %v", flaggerQuery, got, want == 1)
	}
	_, body := testkit.Get(daemon + "/api/v1/comparisons")
	var api struct {
		Comparisons []struct {
			Comparison    string `json:"comparison"`
			Decision      string `json:"decision"`
			DecisionValue int    `json:"decision_value"`
			Pairs         int    `json:"pairs"`
			Candidate     struct {
				Target, Version string
			} `json:"candidate"`
			Metrics []struct {
				Metric   string `json:"metric"`
				Decision string `json:"decision"`
				Figures  []struct {
					Percentile string   `json:"percentile"`
					Ratio      float64  `json:"ratio"`
					Lower      *float64 `json:"lower"`
					Upper      *float64 `json:"upper"`
				} `json:"figures"`
			} `json:"metrics"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(body), &api); err != nil || len(api.Comparisons) != 1 {
		t.Fatalf("/api/v1/comparisons: %v\n%s", err, body)
	}
	c := api.Comparisons[0]
	word := map[int]string{1: "pass", -1: "fail"}[want]
	if c.Comparison != comparison || c.DecisionValue != want || c.Decision != word || c.Pairs < 20 || c.Candidate.Target == "" || c.Candidate.Version == "" {
		t.Errorf("/api/v1/comparisons disagrees with Prometheus (want %s):\n%s", word, body)
	}
	for _, m := range c.Metrics {
		if m.Metric == "tpot" && (m.Decision != word || len(m.Figures) == 0 || m.Figures[0].Lower == nil) {
			t.Errorf("/api/v1/comparisons: tpot %+v, want %s with its p50 interval", m, word)
		}
	}
	t.Logf("/api/v1/comparisons:\n%s", body)
}
