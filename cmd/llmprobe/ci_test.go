package main

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// The CI templates of examples/ci, and docs/ci.md, rest on these names.
const (
	ciToken  = "ci-test-token-7d1f"
	ciConfig = "ci/llmprobe.yml"
	// ciPushPassword is the Pushgateway's basic auth password, ciCommit the
	// commit a CI system names (the default release label).
	ciPushPassword = "ci-push-password-3e9a"
	ciCommit       = "0123456789abcdef0123456789abcdef01234567"
)

// ciPushgateway is a Pushgateway that wants basic auth, and the HTTP client
// configuration (prometheus/common's) that passes it.
func ciPushgateway(t *testing.T) (url, httpConfig string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(ciPushPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := writeTemp(t, "pushgateway-web.yml", fmt.Sprintf("basic_auth_users:\n  ci: %q\n", hash))
	return runPushgateway(t, "--web.config.file="+web), fmt.Sprintf("basic_auth: {username: ci, password: %s}\n", ciPushPassword)
}

// checkPushed: the Pushgateway holds job's run of the templates' burst on
// target staging, its verdict passed, labelled with release.
func checkPushed(t *testing.T, pushgateway, job, release string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, pushgateway+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("ci", ciPushPassword)
	code, body := testkit.Do(req)
	if code != http.StatusOK {
		t.Fatalf("Pushgateway /metrics: %d %s", code, body)
	}
	labels := map[string]string{"job": job, "burst": "release-check", "target": "staging", "release": release}
	if v, ok := sampleValue(parseMetrics(t, body), "llmprobe_burst_passed", labels); !ok || v != 1 {
		t.Errorf("the Pushgateway has no passed verdict %v (found %v, value %g)", labels, ok, v)
	}
}

// ghWorkflow is the part of a GitHub Actions workflow the checks read.
type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs string            `yaml:"needs"`
		Env   map[string]string `yaml:"env"`
		Steps []ghStep          `yaml:"steps"`
	} `yaml:"jobs"`
	Defaults struct {
		Run struct {
			Shell string `yaml:"shell"`
		} `yaml:"run"`
	} `yaml:"defaults"`
}

type ghStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

// glJob is the part of a GitLab CI job the checks read.
type glJob struct {
	Extends      string            `yaml:"extends"`
	Stage        string            `yaml:"stage"`
	Image        string            `yaml:"image"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	AllowFailure struct {
		ExitCodes []int `yaml:"exit_codes"`
	} `yaml:"allow_failure"`
	Artifacts struct {
		When    string   `yaml:"when"`
		Paths   []string `yaml:"paths"`
		Reports struct {
			JUnit string `yaml:"junit"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
}

// ciEndpoints are the sims the templates' jobs measure, each behind a
// bearer token, so a job passes only if the token reached llmprobe through
// the secret, the file the job writes and the configuration.
type ciEndpoints struct {
	staging, baseline, candidate string
}

func tokenSim(t *testing.T) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	slowerDecode(&cfg, 3) // as compareConfig: timer delays stay small beside the steps
	engine, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := engine.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+ciToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); engine.Close() })
	return srv.URL
}

// ciWorkdir is a checkout as the templates expect it: ci/llmprobe.yml
// with the example's target, burst and token file, at a size a test runs.
func ciWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeCIConfig(t, dir, "http://staging.invalid:8000")
	return dir
}

// writeCIConfig writes dir's ci/llmprobe.yml, its target at url.
func writeCIConfig(t *testing.T, dir, url string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `targets:
  - name: staging
    url: ` + url + `
    http_client_config:
      authorization: {credentials_file: secrets/token}
scenarios:
  - {name: chat, prompt_tokens: {distribution: uniform, min: 32, max: 128}, output_tokens: 16, slo: {ttft: 5s, target_ratio: 0.9}}
bursts:
  - name: release-check
    target: staging
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    requests: 40
    warmup: {requests: 3}
`
	if err := os.WriteFile(filepath.Join(dir, ciConfig), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ciSecrets are the values a CI system gives the templates' secrets and
// variables.
func ciSecrets(e ciEndpoints) map[string]string {
	return map[string]string{
		"LLMPROBE_TOKEN":         ciToken,
		"LLMPROBE_STAGING_URL":   e.staging,
		"LLMPROBE_BASELINE_URL":  e.baseline,
		"LLMPROBE_CANDIDATE_URL": e.candidate,
		"LLMPROBE_MODEL":         "sim-model",
	}
}

// shellEnv is this process's environment with the built llmprobe first on
// PATH, plus vars.
func shellEnv(vars map[string]string) []string {
	env := append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// runShell runs script as the CI systems run theirs: bash, stopping at the
// first failing command.
func runShell(t *testing.T, dir, script string, vars map[string]string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, shellEnv(vars)
	out, err := cmd.CombinedOutput()
	return exitCode(err), string(out)
}

var (
	exprRe    = regexp.MustCompile(`^\$\{\{ (secrets|vars)\.([A-Z_]+) \}\}$`)
	helpFlags = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--(?:\[no-\])?([a-z][a-z0-9.-]*)`)
)

// resolve gives a workflow's env values as Actions would: a secret or
// variable by its name, anything else as written.
func resolve(t *testing.T, env map[string]string, secrets map[string]string, into map[string]string) {
	t.Helper()
	for k, v := range env {
		if m := exprRe.FindStringSubmatch(v); m != nil {
			into[k] = secrets[m[2]]
			continue
		}
		if strings.Contains(v, "${{") {
			t.Errorf("env %s: %q is an expression other than a secret or variable", k, v)
		}
		into[k] = v
	}
}

// llmprobeCommand is one llmprobe invocation of a script, its line
// continuations joined: the subcommand and its --flag[=value] arguments.
type llmprobeCommand struct {
	sub   string
	flags map[string]string
}

var commandRe = regexp.MustCompile(`llmprobe (gate|compare)((?: +--[a-z.-]+(?:=\S+)?)+)`)

func llmprobeCommands(script string) []llmprobeCommand {
	joined := strings.Join(strings.Fields(strings.ReplaceAll(script, "\\\n", " ")), " ")
	var out []llmprobeCommand
	for _, m := range commandRe.FindAllStringSubmatch(joined, -1) {
		c := llmprobeCommand{sub: m[1], flags: map[string]string{}}
		for _, arg := range strings.Fields(m[2]) {
			name, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			c.flags[name] = value
		}
		out = append(out, c)
	}
	return out
}

// checkCommand holds one template command to the real CLI and to what
// docs/ci.md says each command passes: flags the binary knows, URLs and
// models from the environment only, and the outputs CI shows.
func checkCommand(t *testing.T, where string, c llmprobeCommand, markdown string) {
	t.Helper()
	help, err := exec.Command(binPath, c.sub, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("llmprobe %s --help: %v", c.sub, err)
	}
	known := map[string]bool{}
	for _, m := range helpFlags.FindAllStringSubmatch(string(help), -1) {
		known[m[1]] = true
	}
	for name := range c.flags {
		if !known[name] {
			t.Errorf("%s: llmprobe %s has no flag --%s", where, c.sub, name)
		}
	}
	want := map[string]string{"config.file": ciConfig, "burst": "release-check"}
	fromEnv := []string{"target.url", "target.model"}
	outputs := []string{"output", "output.junit", "output.markdown"}
	if c.sub == "compare" {
		fromEnv = []string{"baseline.url", "baseline.model", "candidate.url", "candidate.model"}
		outputs = append(outputs, "output.html")
	}
	for name, value := range want {
		if c.flags[name] != value {
			t.Errorf("%s: --%s=%q, want %q", where, name, c.flags[name], value)
		}
	}
	for _, name := range fromEnv {
		if v := c.flags[name]; !regexp.MustCompile(`^"\$[A-Z_]+"$`).MatchString(v) {
			t.Errorf("%s: --%s=%q: an endpoint and its model come from the environment (\"$VAR\"), never inline", where, name, v)
		}
	}
	for _, name := range outputs {
		if c.flags[name] == "" {
			t.Errorf("%s: llmprobe %s lacks --%s", where, c.sub, name)
		}
	}
	if markdown != "" && c.flags["output.markdown"] != markdown {
		t.Errorf("%s: --output.markdown=%s, want %s", where, c.flags["output.markdown"], markdown)
	}
}

// checkInstall holds an install step to the README's: go install of the
// command, with the cgo flags that quiet nvml.h.
func checkInstall(t *testing.T, where, script string, env map[string]string) {
	t.Helper()
	if !strings.Contains(script, `go install "github.com/llmprobe/llmprobe/cmd/llmprobe@${LLMPROBE_VERSION}"`) {
		t.Errorf("%s: the install is not the README's go install: %q", where, script)
	}
	if env["CGO_CFLAGS"] != "-Wno-deprecated-declarations" || env["LLMPROBE_VERSION"] == "" {
		t.Errorf("%s: install without CGO_CFLAGS=-Wno-deprecated-declarations or LLMPROBE_VERSION: %v", where, env)
	}
}

// noLiteralSecrets: the only place a secret's value may come from is the
// CI system's store, so the file holds no token and no endpoint.
func noLiteralSecrets(t *testing.T, file string, data []byte) {
	t.Helper()
	for i, line := range strings.Split(string(data), "\n") {
		code, _, _ := strings.Cut(line, " #")
		if strings.HasPrefix(strings.TrimSpace(code), "#") {
			continue
		}
		for _, bad := range []string{"http://", "https://", "Bearer", "sk-", "hf_", ciToken} {
			if strings.Contains(code, bad) {
				t.Errorf("%s:%d: %q holds a literal endpoint or token", file, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// ghJobRun is what one job of the workflow did.
type ghJobRun struct {
	failedStep string // empty when every step passed
	code       int
	output     string
	summary    string
	artifacts  []string // the upload steps' paths
}

// runGitHubJob runs a job's steps in order as Actions would, the actions
// they use aside (checkout, setup-go, upload-artifact: the test has the
// tree, Go and the built llmprobe); the install step is checked, not run.
func runGitHubJob(t *testing.T, w ghWorkflow, job string, secrets map[string]string) ghJobRun {
	t.Helper()
	j, ok := w.Jobs[job]
	if !ok {
		t.Fatalf("the workflow has no job %q", job)
	}
	dir := ciWorkdir(t)
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	var run ghJobRun
	for i, s := range j.Steps {
		where := fmt.Sprintf("github-actions.yml: jobs.%s.steps[%d] (%s)", job, i, s.Name+s.Uses)
		vars := map[string]string{"GITHUB_STEP_SUMMARY": summary, "GITHUB_PATH": filepath.Join(t.TempDir(), "path"), "CI": "true", "GITHUB_SHA": ciCommit}
		resolve(t, w.Env, secrets, vars)
		resolve(t, j.Env, secrets, vars)
		resolve(t, s.Env, secrets, vars)
		switch {
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			if s.If != "always()" {
				t.Errorf("%s: uploads only when the job passed; a failed gate's report matters most (if: always())", where)
			}
			run.artifacts = append(run.artifacts, strings.Fields(s.With["path"])...)
			continue
		case s.Uses != "":
			continue
		case strings.Contains(s.Run, "go install"):
			checkInstall(t, where, s.Run, vars)
			continue
		case run.failedStep != "":
			continue
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("%s: an expression inside run: secrets and inputs reach scripts through env only", where)
		}
		for _, c := range llmprobeCommands(s.Run) {
			checkCommand(t, where, c, `"$GITHUB_STEP_SUMMARY"`)
		}
		code, out := runShell(t, dir, s.Run, vars)
		run.output += out
		if code != 0 {
			run.failedStep, run.code = s.Name, code
		}
	}
	if b, err := os.ReadFile(summary); err == nil {
		run.summary = string(b)
	}
	for i, a := range run.artifacts {
		run.artifacts[i] = filepath.Join(dir, a)
	}
	return run
}

// The GitHub Actions template, run against sims behind a token: the gate
// passes and publishes its summary, JUnit and report; the comparison of
// two identical endpoints passes with its JUnit, page and report; an
// endpoint that refuses connections fails the gate (exit 3) and only warns
// in the comparison.
func TestCIExampleGitHubActions(t *testing.T) {
	data, err := os.ReadFile("../../examples/ci/github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	noLiteralSecrets(t, "github-actions.yml", data)
	var w ghWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	if w.Defaults.Run.Shell != "bash" || w.Jobs["compare"].Needs != "gate" {
		t.Errorf("want bash steps (-eo pipefail) and compare after the gate: shell %q, compare needs %q", w.Defaults.Run.Shell, w.Jobs["compare"].Needs)
	}
	good := ciSecrets(ciEndpoints{tokenSim(t), tokenSim(t), tokenSim(t)})

	gate := runGitHubJob(t, w, "gate", good)
	if gate.failedStep != "" || !strings.Contains(gate.summary, "passed") {
		t.Fatalf("gate job: step %q exit %d, summary:\n%s\n%s", gate.failedStep, gate.code, gate.summary, gate.output)
	}
	checkArtifacts(t, "gate", gate.artifacts, ".json", ".xml")

	cmp := runGitHubJob(t, w, "compare", good)
	if cmp.failedStep != "" || strings.Contains(cmp.output, "::warning") || !strings.Contains(cmp.summary, "within tolerance") {
		t.Fatalf("compare job: step %q exit %d, summary:\n%s\n%s", cmp.failedStep, cmp.code, cmp.summary, cmp.output)
	}
	checkArtifacts(t, "compare", cmp.artifacts, ".json", ".xml", ".html")

	if strings.Contains(gate.output+cmp.output, "push") {
		t.Errorf("no Pushgateway configured, yet the jobs pushed:\n%s\n%s", gate.output, cmp.output)
	}

	// With a Pushgateway behind basic auth: both jobs push, the credentials
	// from the secret, the release the commit's unless a variable names it.
	pushing := maps.Clone(good)
	pushing["LLMPROBE_PUSHGATEWAY_URL"], pushing["LLMPROBE_PUSHGATEWAY_HTTP_CONFIG"] = ciPushgateway(t)
	if r := runGitHubJob(t, w, "gate", pushing); r.failedStep != "" || strings.Contains(r.output, ciPushPassword) {
		t.Fatalf("gate job with a Pushgateway: step %q exit %d\n%s", r.failedStep, r.code, r.output)
	}
	checkPushed(t, pushing["LLMPROBE_PUSHGATEWAY_URL"], "llmprobe_gate", ciCommit[:12])
	pushing["LLMPROBE_RELEASE"] = "v1.2.3"
	if r := runGitHubJob(t, w, "compare", pushing); r.failedStep != "" || strings.Contains(r.output, ciPushPassword) {
		t.Fatalf("compare job with a Pushgateway: step %q exit %d\n%s", r.failedStep, r.code, r.output)
	}
	checkPushed(t, pushing["LLMPROBE_PUSHGATEWAY_URL"], "llmprobe_compare", "v1.2.3")

	down := ciSecrets(ciEndpoints{testkit.RefusedURL(t), good["LLMPROBE_BASELINE_URL"], testkit.RefusedURL(t)})
	if r := runGitHubJob(t, w, "gate", down); r.failedStep != "Gate" || r.code != 3 {
		t.Errorf("gate against a refused endpoint: step %q exit %d, want the Gate step to fail with 3\n%s", r.failedStep, r.code, r.output)
	}
	if r := runGitHubJob(t, w, "compare", down); r.failedStep != "" || !strings.Contains(r.output, "::warning title=llmprobe compare::") {
		t.Errorf("compare with a refused candidate: step %q exit %d, want a warning and a passing job\n%s", r.failedStep, r.code, r.output)
	}
}

// checkArtifacts: every file a job uploads exists, and its JUnit parses
// with passing test cases.
func checkArtifacts(t *testing.T, job string, paths []string, exts ...string) {
	t.Helper()
	for _, ext := range exts {
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, ext) }) {
			t.Errorf("%s: no %s artifact among %v", job, ext, paths)
		}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: artifact %v", job, err)
			continue
		}
		if strings.HasSuffix(p, ".xml") {
			suite := readJUnit(t, p)
			if len(suite.Tests) == 0 || suite.Totals.Failed+suite.Totals.Error > 0 {
				t.Errorf("%s: JUnit %s: %d tests, totals %+v", job, p, len(suite.Tests), suite.Totals)
			}
		}
	}
}

// glPipeline reads the GitLab template's jobs, each with what it extends.
func glPipeline(t *testing.T, data []byte) (stages []string, vars map[string]string, jobs map[string]glJob) {
	t.Helper()
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	jobs = map[string]glJob{}
	for name, node := range top {
		var err error
		switch name {
		case "stages":
			err = node.Decode(&stages)
		case "variables":
			err = node.Decode(&vars)
		default:
			var j glJob
			err = node.Decode(&j)
			jobs[name] = j
		}
		if err != nil {
			t.Fatalf("gitlab-ci.yml: %s: %v", name, err)
		}
	}
	for name, j := range jobs {
		if base, ok := jobs[j.Extends]; ok {
			j.Image = base.Image
			j.BeforeScript = append(base.BeforeScript, j.BeforeScript...)
			jobs[name] = j
		}
	}
	return stages, vars, jobs
}

// runGitLabJob runs a job's before_script and script in one shell, as a
// runner does, with the pipeline's variables and the project's CI/CD
// variables; the install line is checked, not run. It returns the exit
// code and whether GitLab would count the job failed.
func runGitLabJob(t *testing.T, vars map[string]string, j glJob, name string, secrets map[string]string) (code int, failed bool, out, dir string) {
	t.Helper()
	env := map[string]string{"CI": "true"}
	for _, m := range []map[string]string{secrets, vars, j.Variables} {
		for k, v := range m {
			env[k] = v
		}
	}
	var lines []string
	for _, line := range append(slices.Clone(j.BeforeScript), j.Script...) {
		if strings.Contains(line, "go install") {
			checkInstall(t, "gitlab-ci.yml: "+name, line, env)
			continue
		}
		lines = append(lines, line)
	}
	dir = ciWorkdir(t)
	code, out = runShell(t, dir, strings.Join(lines, "\n"), env)
	return code, code != 0 && !slices.Contains(j.AllowFailure.ExitCodes, code), out, dir
}

// The GitLab CI template, run against the same sims: each job's JUnit is
// its artifacts' reports:junit and is written whatever the exit; the gate
// fails on any exit but 0, the comparison allows exit 3 only.
func TestCIExampleGitLab(t *testing.T) {
	data, err := os.ReadFile("../../examples/ci/gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	noLiteralSecrets(t, "gitlab-ci.yml", data)
	stages, vars, jobs := glPipeline(t, data)
	good := ciSecrets(ciEndpoints{tokenSim(t), tokenSim(t), tokenSim(t)})
	for k := range good {
		if _, ok := vars[k]; ok {
			t.Errorf("gitlab-ci.yml defines %s: secrets and endpoints are CI/CD variables of the project", k)
		}
	}
	if !slices.Equal(stages, []string{"gate", "compare"}) {
		t.Errorf("stages %v, want the gate before the comparison", stages)
	}
	down := ciSecrets(ciEndpoints{testkit.RefusedURL(t), good["LLMPROBE_BASELINE_URL"], testkit.RefusedURL(t)})
	// One Pushgateway for both jobs: their groups' job labels differ.
	pushgateway, httpConfig := ciPushgateway(t)
	for _, tc := range []struct {
		job, sub, html string
		allowed        []int
	}{
		{"llmprobe-gate", "gate", "", nil},
		{"llmprobe-compare", "compare", "llmprobe-compare.html", []int{3}},
	} {
		j, ok := jobs[tc.job]
		if !ok {
			t.Fatalf("gitlab-ci.yml has no job %s", tc.job)
		}
		where := "gitlab-ci.yml: " + tc.job
		commands := llmprobeCommands(strings.Join(j.Script, "\n"))
		if len(commands) != 1 || commands[0].sub != tc.sub {
			t.Fatalf("%s: want one llmprobe %s, got %+v", where, tc.sub, commands)
		}
		checkCommand(t, where, commands[0], "")
		junitPath := commands[0].flags["output.junit"]
		if j.Artifacts.Reports.JUnit != junitPath || j.Artifacts.When != "always" || !slices.Equal(j.AllowFailure.ExitCodes, tc.allowed) {
			t.Errorf("%s: reports:junit %q (the command writes %q), artifacts:when %q, allow_failure:exit_codes %v (want %v)", where, j.Artifacts.Reports.JUnit, junitPath, j.Artifacts.When, j.AllowFailure.ExitCodes, tc.allowed)
		}
		for _, f := range []string{"output", "output.markdown", "output.html"} {
			if p := commands[0].flags[f]; p != "" && !slices.Contains(j.Artifacts.Paths, p) {
				t.Errorf("%s: --%s=%s is not among artifacts:paths %v", where, f, p, j.Artifacts.Paths)
			}
		}

		code, failed, out, dir := runGitLabJob(t, vars, j, tc.job, good)
		if failed || code != 0 || strings.Contains(out, "push") {
			t.Fatalf("%s: exit %d, want 0 and no push without a Pushgateway\n%s", where, code, out)
		}
		// With a Pushgateway behind basic auth, its configuration a File
		// variable (a path), the release the commit's.
		pushing := maps.Clone(good)
		pushing["LLMPROBE_PUSHGATEWAY_URL"], pushing["LLMPROBE_PUSHGATEWAY_HTTP_CONFIG"] = pushgateway, writeTemp(t, "pushgateway.yml", httpConfig)
		pushing["CI_COMMIT_SHORT_SHA"] = ciCommit[:8]
		if code, failed, out, _ := runGitLabJob(t, vars, j, tc.job, pushing); failed || code != 0 || strings.Contains(out, ciPushPassword) {
			t.Fatalf("%s with a Pushgateway: exit %d\n%s", where, code, out)
		}
		checkPushed(t, pushgateway, "llmprobe_"+tc.sub, ciCommit[:8])
		var paths []string
		for _, p := range append(j.Artifacts.Paths, j.Artifacts.Reports.JUnit) {
			paths = append(paths, filepath.Join(dir, p))
		}
		checkArtifacts(t, tc.job, paths, ".json", ".xml", ".md")

		code, failed, out, dir = runGitLabJob(t, vars, j, tc.job, down)
		if code != 3 || failed != (tc.sub == "gate") {
			t.Errorf("%s against a refused endpoint: exit %d, job failed %v\n%s", where, code, failed, out)
		}
		if _, err := junit.IngestFile(filepath.Join(dir, junitPath)); err != nil {
			t.Errorf("%s: no JUnit after exit 3 (GitLab publishes it on failure too): %v", where, err)
		}
	}
}

// The configuration the templates run: valid, with the burst, target and
// token file they name.
func TestCIExampleConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ci", "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, "../../examples/ci/llmprobe.yml")
	for _, want := range []string{"name: release-check", "credentials_file: secrets/token"} {
		if !strings.Contains(data, want) {
			t.Errorf("examples/ci/llmprobe.yml lacks %q, which the templates rely on", want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ci", "secrets", "token"), []byte(ciToken), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ciConfig), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binPath, "--config.file="+filepath.Join(dir, ciConfig), "--config.check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "configuration is valid") {
		t.Errorf("examples/ci/llmprobe.yml: %v\n%s", err, out)
	}
}
