package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	var f ruleFile
	if err := yaml.Unmarshal(Rules, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func promtool(t *testing.T) string {
	t.Helper()
	return testkit.Tool(t, "promtool", "apt-get install prometheus")
}

// promtool checks the rules and runs every unit test in tests/.
func TestPromtool(t *testing.T) {
	bin := promtool(t)
	if out, err := exec.Command(bin, "check", "rules", "llmprobe.rules.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	tests, _ := filepath.Glob("tests/*.yml")
	out, err := exec.Command(bin, append([]string{"test", "rules"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

var (
	alertnameRe = regexp.MustCompile(`(?m)^\s+alertname: (\w+)$`)
	anchorRe    = regexp.MustCompile(`#([a-z0-9-]+)$`)
)

// Every alert has a severity, a summary, a description and a runbook section,
// and a promtool test that fires it (tests list only the firing case; the
// near-miss series in the same test must stay quiet).
func TestEveryAlertIsTestedAndDocumented(t *testing.T) {
	var tested []string
	files, _ := filepath.Glob("tests/*.yml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range alertnameRe.FindAllStringSubmatch(string(b), -1) {
			tested = append(tested, m[1])
		}
	}
	runbooks, err := os.ReadFile("../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if !slices.Contains(tested, r.Alert) {
				t.Errorf("%s has no promtool test", r.Alert)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q", r.Alert, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s lacks the %s annotation", r.Alert, a)
				}
			}
			m := anchorRe.FindStringSubmatch(r.Annotations["runbook_url"])
			if m == nil || !strings.Contains(string(runbooks), "<a id=\""+m[1]+"\"></a>") {
				t.Errorf("%s: runbook %q has no section in docs/runbooks.md", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	if alerts < 16 {
		t.Errorf("%d alerts, want the 16 of the issue", alerts)
	}
}

// Every llmprobe_ metric a rule names exists in docs/metrics.md, which a test
// of its own checks against the exporter.
func TestRulesNameDocumentedMetrics(t *testing.T) {
	names, err := testkit.MetricNames("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			for _, m := range testkit.UndocumentedMetrics(r.Expr, names) {
				t.Errorf("%s%s names %s, which docs/metrics.md does not list", r.Record, r.Alert, m)
			}
		}
	}
}

// The PrometheusRule manifest is generated from the rules file; a stale one fails.
func TestPrometheusRuleIsGenerated(t *testing.T) {
	want, err := PrometheusRule()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../deploy/kubernetes/base/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("deploy/kubernetes/prometheusrule.yaml is stale: run make generate")
	}
}
