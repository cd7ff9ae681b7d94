package main

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

// Every example configuration passes --config.check without a warning (a
// gate its burst could never judge). Secret files the
// examples mount under /etc/llmprobe/secrets are made in a temporary
// directory, since the check reads every file a configuration names; the
// sample datasets and traces in examples/data go beside each copy, where
// the examples' relative paths look for them.
func TestExamplesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yml")
	if len(files) < 7 {
		t.Fatalf("%d examples, want one per engine (vLLM, SGLang, TGI, llama.cpp, Ollama, TensorRT-LLM, hosted)", len(files))
	}
	secrets := t.TempDir()
	secretRe := regexp.MustCompile(`/etc/llmprobe/secrets/([\w.-]+)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range secretRe.FindAllStringSubmatch(string(data), -1) {
			if err := os.WriteFile(filepath.Join(secrets, m[1]), []byte("sk-example-token\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS("../../examples/data")); err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(data), "/etc/llmprobe/secrets", secrets)), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(binPath, "--config.file="+copyPath, "--config.check").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "configuration is valid") || strings.Contains(string(out), "warning:") {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}

// make build stamps version, revision and build date through ldflags; both
// --version and llmprobe_build_info carry them.
func TestVersionStamping(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary again")
	}
	bin := filepath.Join(t.TempDir(), "llmprobe-stamped")
	pkg := "github.com/prometheus/common/version."
	ldflags := "-X " + pkg + "Version=9.8.7 -X " + pkg + "Revision=abc1234 -X " + pkg + "Branch=main -X " + pkg + "BuildDate=20261122-12:00:00"
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	for _, want := range []string{"9.8.7", "abc1234", "20261122-12:00:00"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("--version lacks %s: %v\n%s", want, err, out)
		}
	}
	d := startBinary(t, bin)
	if v, ok := sampleValue(d.metrics(t), "llmprobe_build_info", map[string]string{"version": "9.8.7", "revision": "abc1234"}); !ok || v != 1 {
		t.Error("llmprobe_build_info does not carry the stamped version")
	}
}

// The systemd unit passes systemd-analyze verify, and its flags file holds
// flags llmprobe accepts.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/systemd/llmprobe.service")
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile("../../deploy/systemd/llmprobe.env")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LLMPROBE_ARGS="([^"]*)"$`).FindSubmatch(env)
	if m == nil {
		t.Fatal("llmprobe.env sets no LLMPROBE_ARGS")
	}
	args := strings.Fields(strings.ReplaceAll(string(m[1]), "/etc/llmprobe/llmprobe.yml", "../../examples/vllm.yml"))
	if out, err := exec.Command(binPath, append(args, "--config.check")...).CombinedOutput(); err != nil {
		t.Errorf("the unit's flags are refused: %v\n%s", err, out)
	}
	analyze := testkit.Tool(t, "systemd-analyze", "apt-get install systemd")
	path := filepath.Join(t.TempDir(), "llmprobe.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/llmprobe", binPath)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// verify exits 0 on unknown keys and bad values; its warnings name the file.
	if err != nil || strings.Contains(string(out), path) {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The compose stack's files parse, point at files that exist, and its
// Prometheus configuration passes promtool check config.
func TestComposeStack(t *testing.T) {
	dir := "../../deploy/docker"
	var compose struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Command []string `yaml:"command"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, name := range []string{"llmprobe", "sim", "prometheus", "alertmanager", "grafana", "pushgateway"} {
		svc, ok := compose.Services[name]
		if !ok {
			t.Errorf("compose.yaml has no %s service", name)
		}
		for _, v := range svc.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					t.Errorf("%s mounts %s, which does not exist", name, src)
				}
			}
		}
	}
	if out, err := exec.Command(binPath, "--config.file="+filepath.Join(dir, "llmprobe.yml"), "--config.check").CombinedOutput(); err != nil {
		t.Errorf("deploy/docker/llmprobe.yml: %v\n%s", err, out)
	}
	for _, f := range []string{"prometheus/prometheus.yml", "alertmanager/alertmanager.yml", "grafana/provisioning/datasources/prometheus.yml", "grafana/provisioning/dashboards/llmprobe.yml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil || len(v) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Exemplars: Prometheus keeps them, Grafana links their trace_id to the
	// probe page ($$ is a literal $ in Grafana's provisioning files).
	// Pushed gate runs keep their labels (docs/ci.md#results-in-prometheus).
	type scrapeJob struct {
		Name        string `yaml:"job_name"`
		HonorLabels bool   `yaml:"honor_labels"`
	}
	var scrape struct {
		Jobs []scrapeJob `yaml:"scrape_configs"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "prometheus/prometheus.yml")); err != nil || yaml.Unmarshal(b, &scrape) != nil ||
		!slices.Contains(scrape.Jobs, scrapeJob{"pushgateway", true}) {
		t.Errorf("the stack's Prometheus does not scrape the Pushgateway with honor_labels: %+v %v", scrape, err)
	}
	if !slices.Contains(compose.Services["prometheus"].Command, "--enable-feature=exemplar-storage") {
		t.Error("the stack's Prometheus does not keep exemplars (--enable-feature=exemplar-storage)")
	}
	var ds struct {
		Datasources []struct {
			JSONData struct {
				Destinations []struct {
					Name string `yaml:"name"`
					URL  string `yaml:"url"`
				} `yaml:"exemplarTraceIdDestinations"`
			} `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "grafana/provisioning/datasources/prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &ds); err != nil || len(ds.Datasources) != 1 || len(ds.Datasources[0].JSONData.Destinations) != 1 ||
		ds.Datasources[0].JSONData.Destinations[0].Name != "trace_id" || !strings.HasSuffix(ds.Datasources[0].JSONData.Destinations[0].URL, ":9479/probe?id=$${__value.raw}") {
		t.Errorf("the Grafana data source does not link exemplars to the probe page: %+v %v", ds, err)
	}
	promtool := testkit.Tool(t, "promtool", "apt-get install prometheus")
	// Inside the stack the rules are mounted at /etc/prometheus/rules; here they are in alerts/.
	prom, _ := os.ReadFile(filepath.Join(dir, "prometheus/prometheus.yml"))
	rules, _ := filepath.Abs("../../alerts/llmprobe.rules.yml")
	local := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(local, []byte(strings.ReplaceAll(string(prom), "/etc/prometheus/rules/llmprobe.rules.yml", rules)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", local).CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

// --config.check warns of a gate its burst could never judge, and still
// exits 0: the configuration is valid.
func TestConfigCheckWarnsOfGatesNeverJudged(t *testing.T) {
	path := testkit.ConfigFile(t, `targets: [{name: t, url: "http://127.0.0.1:1"}]
scenarios: [{name: s, prompt_tokens: 64, output_tokens: 8}]
bursts:
  - name: nightly
    target: t
    scenarios: [{scenario: s}]
    arrival: {rate: 4}
    requests: 80
    max_regression: [{metric: ttft, quantile: p99, max_increase: 0.2}, {metric: tpot, quantile: p50, max_increase: 0.2}]
`)
	out, err := exec.Command(binPath, "--config.file="+path, "--config.check").CombinedOutput()
	want := path + ": warning: burst nightly: max_regression ttft p99 needs 368 samples a run and the run plans 80 measured requests: the gate will never be judged"
	if err != nil || !strings.Contains(string(out), want) || strings.Count(string(out), "warning:") != 1 {
		t.Errorf("exit %v, want 0 and one warning %q:\n%s", err, want, out)
	}
}
