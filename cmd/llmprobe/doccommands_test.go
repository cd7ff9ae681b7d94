package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// How a command block of README.md or docs/*.md is held to what it says.
type commandClass int

const (
	// runAsWritten: each command runs as the block has it, in an empty
	// folder that has the checkout's examples/ and bin/llmprobe.
	runAsWritten commandClass = iota
	// runWithFixture: as runAsWritten, in a folder and environment the
	// row's fixture prepares (the files and servers the text describes);
	// any text the fixture replaces is listed in the row.
	runWithFixture
	// shownOnly: not run here; the row says why, and heldBy names the
	// tests or make targets that run what the block shows.
	shownOnly
)

// docCommand classifies one command block: the block of file that alone
// holds the text contains.
type docCommand struct {
	file, contains string
	class          commandClass
	reason         string
	heldBy         []string
	fixture        func(t *testing.T, dir string) commandFixture
	// exits are the exit statuses wanted by step (0 for steps not named).
	exits map[int]int
	// sameOutput: a transcript's shown output is, line for line, what its
	// command prints.
	sameOutput bool
	// holds is text the block's output must hold: what the page says it
	// prints.
	holds []string
}

// commandFixture is what a fixture gives a block: environment variables,
// and text to replace in the block, old and new in pairs.
type commandFixture struct {
	env     map[string]string
	replace []string
}

// Reasons and tests several rows share.
const (
	compareTranscript = "a transcript of a two-minute comparison of 1,200 pairs; the tests named compare sims of known difference on smaller bursts"
	chartOnly         = "needs a Kubernetes cluster, kubectl and helm; the chart is rendered and linted with Helm's own library instead"
)

var (
	compareTests = []string{"cmd/llmprobe.TestCompareTwoSims", "cmd/llmprobe.TestCompareExitCodes"}
	chartTests   = []string{"deploy/kubernetes/test.TestChartRendersEachVariant", "deploy/kubernetes/test.TestChartLint"}
)

// docCommands is every command block of README.md and docs/*.md: a test
// below fails on a block no row classifies and on a row with no block.
var docCommands = []docCommand{
	{file: "README.md", contains: "helm install llmprobe", class: shownOnly,
		reason: chartOnly,
		heldBy: chartTests},
	{file: "README.md", contains: "kubectl kustomize", class: shownOnly,
		reason: "needs a Kubernetes cluster and kubectl; the overlays are rendered with kustomize's own library instead",
		heldBy: []string{"deploy/kubernetes/test.TestOverlaysRender", "deploy/kubernetes/test.TestChartMatchesKustomize"}},
	{file: "README.md", contains: "make build", class: runWithFixture,
		reason:  "llmprobe.yml is the README's example, its target a sim that wants the token; bin/llmprobe is the binary TestMain builds from the same package, so `make build` is not run again; the daemon's port 9479 must be free",
		fixture: readmeFixture("make build", ":")},
	{file: "README.md", contains: "# every mistake with its line and range", class: runWithFixture,
		reason:  "llmprobe.yml is the README's example, its target a sim that wants the token; the daemon's port 9479 must be free",
		fixture: readmeFixture()},
	{file: "README.md", contains: "make run", class: shownOnly,
		reason: "a menu, not a script: its lines need bursts release-check and capacity, targets vllm-0-11 and vllm-0-12, three shards' reports and a reachable staging host; each line runs in the tests named",
		heldBy: []string{"cmd/llmprobe.TestEndToEndEmbeddedDemo", "cmd/llmprobe.TestGateExitCodes", "cmd/llmprobe.TestGateOverridesAndCIOutputs",
			"cmd/llmprobe.TestSplitBurstMatchesOneProcess", "cmd/llmprobe.TestCompareTwoSims", "cmd/llmprobe.TestSimCommandPosesAsAnEngine"}},
	{file: "docs/ci.md", contains: "--target.url=\"$LLMPROBE_URL\"", class: runWithFixture,
		reason:  "ci/llmprobe.yml and its token as the templates expect them, LLMPROBE_URL a sim that wants the token, GITHUB_STEP_SUMMARY a file",
		fixture: ciFixture},
	{file: "docs/ci.md", contains: "--baseline.url=\"$LLMPROBE_BASELINE_URL\"", class: shownOnly,
		reason: "a comparison of six rounds a side (about a minute); the templates that carry this command run it against two sims",
		heldBy: []string{"cmd/llmprobe.TestCIExampleGitHubActions", "cmd/llmprobe.TestCIExampleGitLab"}},
	{file: "docs/ci.md", contains: "--push.url=http://pushgateway.example:9091", class: runWithFixture,
		reason:  "ci/llmprobe.yml with a sim that wants the token; a real Pushgateway with basic auth in place of pushgateway.example, and ci/secrets/pushgateway.yml that passes it",
		fixture: pushFixture},
	{file: "docs/conversations.md", contains: "--burst=sessions", class: runWithFixture,
		reason:  "conv.yml as the text after the block describes it (a 1,024-token first message, 512 shared, 100-token follow-ups, 32 output tokens, 4 turns, 200 ms think time, sessions at 2/s for 10 s)",
		fixture: conversationFixture, exits: map[int]int{1: 3}, holds: []string{"cached tokens", "measured, nothing judged"}},
	{file: "docs/decisions.md", contains: "[--rounds=6]", class: shownOnly,
		reason: "a synopsis: its optional parts are in brackets",
		heldBy: compareTests},
	{file: "docs/decisions.md", contains: "127.0.0.1:8003 &", class: runAsWritten},
	{file: "docs/decisions.md", contains: "--candidate=next\n", class: shownOnly,
		reason: compareTranscript,
		heldBy: compareTests},
	{file: "docs/decisions.md", contains: "--candidate=twin\n", class: shownOnly,
		reason: compareTranscript,
		heldBy: compareTests},
	{file: "docs/decisions.md", contains: "--candidate=twin --rounds=2", class: shownOnly,
		reason: "a transcript of a comparison of 400 pairs (about a minute); the tests named compare sims of known difference on smaller bursts",
		heldBy: []string{"cmd/llmprobe.TestCompareExitCodes"}},
	{file: "docs/decisions.md", contains: "--sim.version=0.12.0", class: runAsWritten},
	{file: "docs/decisions.md", contains: "--config.file=sweep.yml", class: shownOnly,
		reason: "a sweep of five 600-request steps (about seven minutes); make calibrate runs it with 20 seeds",
		heldBy: []string{"make calibrate", "burst.TestSweepDrawsTheCurveAndSizesTheFleet"}},
	{file: "docs/decisions.md", contains: "--sim.decode-base=28ms", class: runAsWritten},
	{file: "docs/decisions.md", contains: "$ G --burst=release", class: shownOnly,
		reason: "a transcript: G and c.yml are described in the text, and the runs' output is cut (…)",
		heldBy: []string{"cmd/llmprobe.TestNamedBaselineIsBinding", "cmd/llmprobe.TestGateExitCodes"}},
	{file: "docs/decisions.md", contains: "$ bench/calibrate -mode=knee", class: shownOnly,
		reason: "the calibration: 47 minutes on two cores",
		heldBy: []string{"make calibrate"}},
	{file: "docs/empirical-lengths.md", contains: "$ llmprobe --config.file=examples/empirical-lengths.yml", class: runAsWritten, sameOutput: true},
	{file: "docs/helm.md", contains: "helm install llmprobe", class: shownOnly,
		reason: chartOnly,
		heldBy: chartTests},
	{file: "docs/helm.md", contains: "helm test burst-1", class: shownOnly,
		reason: "needs a Kubernetes cluster, kubectl and helm; the burst Job and its test hook are rendered with Helm's own library instead",
		heldBy: []string{"deploy/kubernetes/test.TestChartBurstJob", "deploy/kubernetes/test.TestChartShardsFollowReplicas"}},
	{file: "docs/image.md", contains: "skopeo inspect", class: shownOnly,
		reason: "make image fetches Debian packages from the archive and skopeo is not among the tests' tools; the test named builds the layout from the pinned packages and reads it back",
		heldBy: []string{"deploy/image.TestImageReadsBack"}},
	{file: "docs/image.md", contains: "crane push", class: shownOnly,
		reason: "pushes to a registry and loads into container engines, none of which the tests have"},
	{file: "docs/image.md", contains: "apt-get download", class: shownOnly,
		reason: "refreshes the machine's apt lists as root and reads the archive's current versions: the step that updates deploy/image/packages.lock by hand"},
	{file: "docs/long-context.md", contains: "-bench LongPromptRequest", class: shownOnly,
		reason: "a benchmark: make bench runs every benchmark",
		heldBy: []string{"make bench", "prober.BenchmarkLongPromptRequest"}},
	{file: "docs/long-context.md", contains: "/usr/bin/time -v", class: shownOnly,
		reason: "a memory measurement with GNU time, which is not among the tests' tools; make bench-longctx measures the same run",
		heldBy: []string{"make bench-longctx"}},
	{file: "docs/prompt-datasets.md", contains: "$ llmprobe --config.file=examples/prompt-datasets.yml", class: runAsWritten, sameOutput: true},
	{file: "docs/trace-replay.md", contains: "$ llmprobe --config.file=examples/trace-replay.yml", class: runAsWritten, sameOutput: true},
	{file: "docs/troubleshooting.md", contains: "cat > split.yml", class: runAsWritten, exits: map[int]int{2: 3},
		holds: []string{"TTFT split over", "engine_queue", "not enough evidence"}},
}

// mdBlock is one fenced block of a Markdown file.
type mdBlock struct {
	file, lang string
	line       int // of the opening fence
	body       string
}

func markdownBlocks(t *testing.T, root, rel string) []mdBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []mdBlock
	var cur *mdBlock
	var body []string
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				body = append(body, line)
			}
			continue
		}
		if cur == nil {
			cur, body = &mdBlock{file: rel, lang: strings.TrimSpace(trimmed[3:]), line: i + 1}, nil
			continue
		}
		cur.body = strings.Join(body, "\n") + "\n"
		out = append(out, *cur)
		cur = nil
	}
	return out
}

var commandStart = regexp.MustCompile(`^(\$ |(llmprobe|bin/llmprobe|make|go|kubectl|helm|skopeo|curl) )`)

// isCommandBlock: a block tagged sh, or an untagged one that starts with a
// prompt or a command; outputs, configurations and queries are not.
func (b mdBlock) isCommandBlock() bool {
	if b.lang == "sh" || b.lang == "bash" || b.lang == "console" {
		return true
	}
	return b.lang == "" && commandStart.MatchString(strings.TrimLeft(b.body, "\n"))
}

// shellStep is one command of a block: a line with its continuations or
// here-document, and in a transcript the output shown after it.
type shellStep struct {
	text       string
	output     []string
	background bool
}

func shellSteps(body string) []shellStep {
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	transcript := false
	for _, l := range lines {
		transcript = transcript || strings.HasPrefix(l, "$ ")
	}
	var steps []shellStep
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if transcript && !strings.HasPrefix(l, "$ ") {
			if len(steps) > 0 {
				steps[len(steps)-1].output = append(steps[len(steps)-1].output, l)
			}
			continue
		}
		l = strings.TrimPrefix(l, "$ ")
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		text := l
		for strings.HasSuffix(strings.TrimSpace(withoutComment(l)), "\\") && i+1 < len(lines) {
			i++
			l = lines[i]
			text += "\n" + l
		}
		if m := heredocRe.FindStringSubmatch(text); m != nil {
			for i+1 < len(lines) {
				i++
				text += "\n" + lines[i]
				if lines[i] == m[1] {
					break
				}
			}
		}
		s := shellStep{text: text}
		if cmd := strings.TrimSpace(withoutComment(text)); strings.HasSuffix(cmd, "&") && !strings.HasSuffix(cmd, "&&") {
			s.background = true
		} else {
			s.background = isDaemon(cmd)
		}
		steps = append(steps, s)
	}
	return steps
}

var (
	heredocRe  = regexp.MustCompile(`<<-?'?(\w+)'?`)
	listenRe   = regexp.MustCompile(`--(?:sim|web)\.listen-address=(\S+)`)
	subcommand = regexp.MustCompile(`^(?:bin/)?llmprobe +(sim|gate|compare|report|probe)\b`)
)

// withoutComment cuts a shell comment that follows whitespace.
func withoutComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// isDaemon: a command that serves until stopped (the daemon, the sim,
// make run), which a reader runs in a terminal of its own.
func isDaemon(cmd string) bool {
	switch {
	case strings.HasPrefix(cmd, "make run"):
		return true
	case subcommand.MatchString(cmd):
		return strings.Contains(cmd, "llmprobe sim")
	case strings.HasPrefix(cmd, "llmprobe ") || strings.HasPrefix(cmd, "bin/llmprobe "):
		return !strings.Contains(cmd, "--config.check") && !strings.Contains(cmd, "--help") && !strings.Contains(cmd, "--version")
	}
	return false
}

// listenAddress is where a daemon step serves: its listen flag, or the
// daemon's default port.
func listenAddress(cmd string) string {
	addr := ":9479"
	if m := listenRe.FindStringSubmatch(cmd); m != nil {
		addr = m[1]
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	return addr
}

// Every command block of README.md and docs/*.md has a row in
// docCommands, and every row names one block.
func TestDocsCommandBlocksAreClassified(t *testing.T) {
	root := "../.."
	matched := make([]int, len(docCommands))
	for _, rel := range docsFiles(t, root) {
		for _, b := range markdownBlocks(t, root, rel) {
			var rows []int
			for i, c := range docCommands {
				if c.file == rel && strings.Contains(b.body, c.contains) {
					rows = append(rows, i)
					matched[i]++
				}
			}
			switch {
			case b.isCommandBlock() && len(rows) == 0:
				t.Errorf("%s:%d: a command block no row of docCommands classifies (run as written, with a fixture, or shown only and why):\n%s", rel, b.line, b.body)
			case len(rows) > 1:
				t.Errorf("%s:%d: rows %v all match this block; each row's text must be its block's alone", rel, b.line, rows)
			case len(rows) == 1 && !b.isCommandBlock():
				t.Errorf("%s:%d: row %q matches a block that is not a command block", rel, b.line, docCommands[rows[0]].contains)
			}
		}
	}
	for i, c := range docCommands {
		if matched[i] != 1 {
			t.Errorf("row %s %q matches %d blocks, want 1", c.file, c.contains, matched[i])
		}
		switch {
		case c.class != runAsWritten && c.reason == "":
			t.Errorf("row %s %q: a block not run as written says why", c.file, c.contains)
		case c.class == runWithFixture && c.fixture == nil:
			t.Errorf("row %s %q: run with a fixture, but has none", c.file, c.contains)
		case c.class == shownOnly && c.fixture != nil:
			t.Errorf("row %s %q: shown only, but has a fixture", c.file, c.contains)
		}
		for _, h := range c.heldBy {
			if err := heldByExists(root, h); err != nil {
				t.Errorf("row %s %q: held by %s: %v", c.file, c.contains, h, err)
			}
		}
	}
}

// heldByExists: "make T" is a target of the Makefile, "dir.Name" a test or
// benchmark function of the package in dir.
func heldByExists(root, h string) error {
	if target, ok := strings.CutPrefix(h, "make "); ok {
		mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(mk) {
			return errors.New("no such make target")
		}
		return nil
	}
	i := strings.LastIndex(h, ".")
	if i < 0 {
		return errors.New(`want "make target" or "dir.TestName"`)
	}
	files, _ := filepath.Glob(filepath.Join(root, h[:i], "*_test.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(src), "\nfunc "+h[i+1:]+"(") {
			return nil
		}
	}
	return errors.New("no such function")
}

// The blocks classified to run: each step as a reader would run it, with
// its exit status, a transcript's output line for line.
func TestDocsCommandBlocksRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range docCommands {
		if c.class == shownOnly {
			continue
		}
		var block *mdBlock
		for _, b := range markdownBlocks(t, root, c.file) {
			if strings.Contains(b.body, c.contains) {
				block = &b
				break
			}
		}
		if block == nil {
			t.Errorf("no block of %s holds %q", c.file, c.contains)
			continue
		}
		t.Run(fmt.Sprintf("%s:%d", c.file, block.line), func(t *testing.T) { runBlock(t, root, c, *block) })
	}
}

func runBlock(t *testing.T, root string, c docCommand, b mdBlock) {
	dir := t.TempDir()
	for _, link := range [][2]string{{filepath.Join(root, "examples"), "examples"}, {binPath, "bin/llmprobe"}} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, link[1])), 0o755)
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	var fx commandFixture
	if c.fixture != nil {
		fx = c.fixture(t, dir)
	}
	body, printed := b.body, ""
	for i := 0; i+1 < len(fx.replace); i += 2 {
		if !strings.Contains(body, fx.replace[i]) {
			t.Fatalf("the fixture replaces %q, which %s:%d no longer holds", fx.replace[i], b.file, b.line)
		}
		body = strings.ReplaceAll(body, fx.replace[i], fx.replace[i+1])
	}
	for i, s := range shellSteps(body) {
		where := fmt.Sprintf("%s:%d step %d (%s)", b.file, b.line, i, strings.SplitN(s.text, "\n", 2)[0])
		if s.background {
			startBackground(t, dir, where, s.text, fx.env)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.text)
		cmd.Dir, cmd.Env = dir, shellEnv(fx.env)
		out, err := cmd.CombinedOutput()
		cancel()
		printed += string(out)
		if got := exitCode(err); got != c.exits[i] {
			t.Fatalf("%s: exit %d, want %d:\n%s", where, got, c.exits[i], out)
		}
		if c.sameOutput {
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(s.output, "\n") {
				t.Errorf("%s: the page shows\n%s\nthe command prints\n%s", where, strings.Join(s.output, "\n"), out)
			}
		}
	}
	for _, want := range c.holds {
		if !strings.Contains(printed, want) {
			t.Errorf("%s:%d: the page says it prints %q; it did not:\n%s", b.file, b.line, want, printed)
		}
	}
}

// startBackground starts a serving step in a process group of its own,
// waits until it accepts connections, and stops it when the test ends.
func startBackground(t *testing.T, dir, where, text string, env map[string]string) {
	t.Helper()
	cmdText := strings.TrimSuffix(strings.TrimSpace(withoutComment(text)), "&")
	addr := listenAddress(cmdText)
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Fatalf("%s: %s is in use before the step starts; the block as written needs it free", where, addr)
	}
	var out testkit.Buffer
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "exec "+cmdText)
	cmd.Dir, cmd.Env = dir, shellEnv(env)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("%s: stopped before it served on %s: %v\n%s", where, addr, err, out.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not serving on %s after 60 s:\n%s", where, addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readmeFixture writes llmprobe.yml, the README's example configuration,
// with its target a sim that wants the token and the token's file in the
// folder; replace is text of the block to replace.
func readmeFixture(replace ...string) func(t *testing.T, dir string) commandFixture {
	return func(t *testing.T, dir string) commandFixture {
		var cfg string
		for _, b := range markdownBlocks(t, "../..", "README.md") {
			if b.lang == "yaml" && strings.Contains(b.body, "name: vllm\n") {
				cfg = b.body
			}
		}
		token := filepath.Join(dir, "vllm-token")
		writeFixtureFile(t, token, ciToken)
		for _, r := range [][2]string{{"http://vllm.inference.svc:8000", tokenSim(t)}, {"/etc/llmprobe/secrets/vllm-token", token}} {
			if !strings.Contains(cfg, r[0]) {
				t.Fatalf("README.md's example configuration no longer holds %q", r[0])
			}
			cfg = strings.ReplaceAll(cfg, r[0], r[1])
		}
		writeFixtureFile(t, filepath.Join(dir, "llmprobe.yml"), cfg)
		return commandFixture{replace: replace}
	}
}

// ciFixture is a checkout as docs/ci.md's commands expect it.
func ciFixture(t *testing.T, dir string) commandFixture {
	writeCIConfig(t, dir, "http://staging.invalid:8000")
	writeFixtureFile(t, filepath.Join(dir, "ci", "secrets", "token"), ciToken)
	return commandFixture{env: map[string]string{
		"LLMPROBE_URL":        tokenSim(t),
		"LLMPROBE_MODEL":      "sim-model",
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
	}}
}

// pushFixture: the checkout with its target reachable, and a Pushgateway
// with basic auth in place of the page's.
func pushFixture(t *testing.T, dir string) commandFixture {
	writeCIConfig(t, dir, tokenSim(t))
	writeFixtureFile(t, filepath.Join(dir, "ci", "secrets", "token"), ciToken)
	url, httpConfig := ciPushgateway(t)
	writeFixtureFile(t, filepath.Join(dir, "ci", "secrets", "pushgateway.yml"), httpConfig)
	return commandFixture{replace: []string{"http://pushgateway.example:9091", url}}
}

// conversationFixture is conv.yml as docs/conversations.md describes the
// run after its block.
func conversationFixture(t *testing.T, dir string) commandFixture {
	writeFixtureFile(t, filepath.Join(dir, "conv.yml"), `targets:
  - {name: sim, url: "http://127.0.0.1:18123", timeout: 60s}
scenarios:
  - name: chat
    prompt_tokens: 1024
    shared_prefix_tokens: 512
    output_tokens: 32
    conversation: {turns: 4, followup_tokens: 100, think_time: 200ms}
bursts:
  - name: sessions
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 2}
    duration: 10s
    max_concurrency: 100
`)
	return commandFixture{}
}

func writeFixtureFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
