package test

import (
	"os"
	"strings"
	"testing"
	"text/template"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/evaluate"
	argotemplate "github.com/argoproj/argo-rollouts/utils/template"
	flaggerv1beta1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	"github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"
)

// The rollout templates of deploy/rollouts decode strictly into the
// projects' own types (an unknown or misplaced field fails), and read
// llmprobe_comparison_decision only. cmd/llmprobe's drill evaluates their
// queries and conditions against a real Prometheus.
func TestRolloutTemplatesDecodeStrictly(t *testing.T) {
	argo, err := os.ReadFile("../../rollouts/argo-analysistemplate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var at rolloutsv1alpha1.AnalysisTemplate
	if err := yaml.UnmarshalStrict(argo, &at); err != nil {
		t.Fatalf("argo-analysistemplate.yaml: %v", err)
	}
	if at.Kind != "AnalysisTemplate" || len(at.Spec.Metrics) != 1 || at.Spec.Metrics[0].Provider.Prometheus == nil {
		t.Fatalf("argo-analysistemplate.yaml: want one Prometheus metric, got %+v", at.Spec)
	}
	m := at.Spec.Metrics[0]
	if m.Count == nil || m.InconclusiveLimit == nil || m.Count.IntVal != m.InconclusiveLimit.IntVal+1 || m.FailureLimit == nil || m.FailureLimit.IntVal != 0 {
		t.Errorf("argo-analysistemplate.yaml: count %v, inconclusiveLimit %v, failureLimit %v: want the first fail to abort and only all-undecided looks to be Inconclusive", m.Count, m.InconclusiveLimit, m.FailureLimit)
	}
	onlyDecision(t, "argo-analysistemplate.yaml", m.Provider.Prometheus.Query)

	flagger, err := os.ReadFile("../../rollouts/flagger-metrictemplate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mt flaggerv1beta1.MetricTemplate
	if err := yaml.UnmarshalStrict(flagger, &mt); err != nil {
		t.Fatalf("flagger-metrictemplate.yaml: %v", err)
	}
	if mt.Kind != "MetricTemplate" || mt.Spec.Provider.Type != "prometheus" {
		t.Fatalf("flagger-metrictemplate.yaml: want a Prometheus MetricTemplate, got %+v", mt.Spec.Provider)
	}
	onlyDecision(t, "flagger-metrictemplate.yaml", mt.Spec.Query)

	argoMapsTheDecision(t, m)
	flaggerRendersTheComparison(t, mt)

	if yaml.UnmarshalStrict([]byte("apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nspec:\n  metricz: []\n"), &at) == nil {
		t.Error("a misspelt field decodes: the check cannot fail")
	}
}

func onlyDecision(t *testing.T, file, query string) {
	t.Helper()
	if strings.Count(query, "llmprobe_") != 1 || !strings.Contains(query, "llmprobe_comparison_decision{") {
		t.Errorf("%s: query %q reads more than llmprobe_comparison_decision", file, query)
	}
}

// argoMapsTheDecision: Argo Rollouts' own evaluator gives the shipped
// conditions' phases as docs/control-loops.md's table says, and its own
// argument resolution fills the query.
func argoMapsTheDecision(t *testing.T, m rolloutsv1alpha1.Metric) {
	t.Helper()
	for _, c := range []struct {
		result []float64
		want   rolloutsv1alpha1.AnalysisPhase
	}{
		{[]float64{1}, rolloutsv1alpha1.AnalysisPhaseSuccessful},
		{[]float64{-1}, rolloutsv1alpha1.AnalysisPhaseFailed},
		{[]float64{0}, rolloutsv1alpha1.AnalysisPhaseInconclusive},
		{[]float64{}, rolloutsv1alpha1.AnalysisPhaseInconclusive},
	} {
		got, err := evaluate.EvaluateResult(c.result, m, *logrus.NewEntry(logrus.New()))
		if err != nil || got != c.want {
			t.Errorf("Argo Rollouts on result %v: %s %v, want %s", c.result, got, err, c.want)
		}
	}
	name, addr := "vllm-upgrade", "http://prometheus:9090"
	query, err := argotemplate.ResolveArgs(m.Provider.Prometheus.Query, []rolloutsv1alpha1.Argument{{Name: "comparison", Value: &name}, {Name: "prometheus-address", Value: &addr}})
	if want := `min(llmprobe_comparison_decision{comparison="vllm-upgrade"})`; err != nil || query != want {
		t.Errorf("Argo Rollouts resolves the query to %q (%v), want %q", query, err, want)
	}
}

// flaggerRendersTheComparison: the query filled from the Canary's
// templateVariables as Flagger renders it (its observers.RenderQuery: a
// text/template with missingkey=error and the model's functions, here
// Flagger's own; the observers package itself needs a Kubernetes API older
// than this module's).
func flaggerRendersTheComparison(t *testing.T, mt flaggerv1beta1.MetricTemplate) {
	t.Helper()
	model := flaggerv1beta1.MetricTemplateModel{Variables: map[string]string{"comparison": "vllm-upgrade"}}
	tmpl, err := template.New("tmpl").Option("missingkey=error").Funcs(model.TemplateFunctions()).Parse(mt.Spec.Query)
	if err != nil {
		t.Fatalf("Flagger cannot parse the query: %v", err)
	}
	var query strings.Builder
	if err := tmpl.Execute(&query, nil); err != nil {
		t.Fatalf("Flagger cannot render the query: %v", err)
	}
	if want := `min(llmprobe_comparison_decision{comparison="vllm-upgrade"})`; query.String() != want {
		t.Errorf("Flagger renders the query to %q, want %q", query.String(), want)
	}
}
