package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The configurations that once passed the check and then exhausted the
// daemon, each with the error it must now get: config's, and the limits'
// (plan's).
var absurdConfigs = []string{
	"config/bad_rate_tiny", "config/bad_rate_nan", "config/bad_burstiness", "plan/bad_planned_requests", "config/bad_sweep_max",
	"plan/bad_prompt_tokens", "plan/bad_burst_memory", "config/bad_temperature", "config/bad_target_ratio_nan",
	"config/bad_extra_body_json", "config/bad_extra_body_inf", "config/bad_second_document", "target/bad_ca_file",
	"plan/bad_canary_rate", "plan/bad_canary_memory",
}

// absurd returns a config's path (copied beside nothing, so relative files
// stay missing) and the error it must get, with its path in place of $FILE.
// name is the package directory and the file's name in its testdata.
func absurd(t *testing.T, name string) (path, want string) {
	t.Helper()
	dir, name := filepath.Split(name)
	data, err := os.ReadFile(filepath.Join("../..", dir, "testdata", name+".yml"))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name+".yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	want, ok := strings.CutPrefix(string(first), "# want: ")
	if !ok {
		t.Fatalf("%s lacks its '# want:' line", name)
	}
	want = strings.ReplaceAll(want, "$FILE", path)
	want = strings.ReplaceAll(want, "testdata/", filepath.Dir(path)+"/") // files the config names
	return path, want
}

// capped runs the binary under a soft memory limit and a hard cap on its
// address space: a configuration that made it build a whole burst up front
// would be killed, not refused.
func capped(args ...string) *exec.Cmd {
	cmd := exec.Command("bash", append([]string{"-c", `ulimit -v 2097152 && exec "$@"`, "capped", binPath}, args...)...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=256MiB")
	return cmd
}

// Each absurd configuration fails --config.check and `llmprobe gate` with
// its field named, under a memory cap; given to a running daemon by reload,
// it leaves the old configuration running.
func TestAbsurdConfigsAreRefused(t *testing.T) {
	srv, _ := simServer(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "llmprobe.yml")
	writeConfig(t, live, "steady", srv.URL)
	d := startBinary(t, binPath, "--config.file="+live)

	for _, name := range absurdConfigs {
		t.Run(name, func(t *testing.T) {
			path, want := absurd(t, name)
			out, err := capped("--config.file="+path, "--config.check").CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
				t.Errorf("--config.check: exit %d\n%s\nwant exit 2 and\n%s", code, out, want)
			}
			out, err = capped("gate", "--config.file="+path, "--burst=b", "--storage.path=", "--no-collector.gpu").CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
				t.Errorf("gate: exit %d\n%s\nwant exit 2 and\n%s", code, out, want)
			}

			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The daemon's file is rewritten whole, as config management does.
			if err := os.WriteFile(live+".tmp", data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(live+".tmp", live); err != nil {
				t.Fatal(err)
			}
			code, body := d.post("/-/reload")
			field := want[strings.Index(want, ": ")+2:]
			field, _, _ = strings.Cut(field, ":")
			if code != http.StatusInternalServerError || !strings.Contains(body, field) {
				t.Errorf("reload: %d %s; want 500 naming %s", code, body, field)
			}
			if _, shown := d.get("/config"); !strings.Contains(shown, "name: steady") {
				t.Errorf("after a refused reload /config shows\n%s", shown)
			}
			if v, ok := sampleValue(d.metrics(t), "llmprobe_config_last_reload_successful", nil); !ok || v != 0 {
				t.Errorf("llmprobe_config_last_reload_successful = %v after a refused reload", v)
			}
			writeConfig(t, live, "steady", srv.URL)
			if code, body := d.post("/-/reload"); code != http.StatusOK {
				t.Fatalf("restoring the good file: %d %s", code, body)
			}
		})
	}
	// Nothing else went wrong meanwhile.
	sc := bufio.NewScanner(strings.NewReader(d.logs()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "level=error") && !strings.Contains(sc.Text(), "configuration reload failed") {
			t.Errorf("unexpected error line: %s", sc.Text())
		}
	}
}
