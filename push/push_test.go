package push

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report"
)

// Flags are checked before anything runs; no error repeats a credential.
func TestNewChecksFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "http.yml")
	if err := os.WriteFile(good, []byte("basic_auth: {username: ci, password: hunter2-secret}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("basic_auth: {username: ci, pasword: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url, httpConfig, release string
		want                     string // "" for no error
	}{
		{"", "", "", ""},
		{"http://pushgateway:9091", "", "", ""},
		{"https://pushgateway.example/prefix", good, "v1.2.3+abc_1-rc.2", ""},
		{"http://ci:hunter2-secret@pushgateway:9091", "", "", "--push.url holds credentials"},
		{"http://ci@pushgateway:9091", "", "", "--push.url holds credentials"},
		{"pushgateway:9091", "", "", "http or https"},
		{"http:///metrics", "", "", "needs a host"},
		{"http://pushgateway:9091/?x=1", "", "", "no query"},
		{"http://pushgateway:9091", filepath.Join(dir, "missing.yml"), "", "--push.http-config.file="},
		{"http://pushgateway:9091", bad, "", "pasword"},
		{"http://pushgateway:9091", "", "v1 2", "letters, digits"},
		{"http://pushgateway:9091", "", "-v1", "starting with a letter or digit"},
		{"http://pushgateway:9091", "", strings.Repeat("a", MaxRelease+1), "more than 64"},
		{"http://pushgateway:9091", "", strings.Repeat("a", MaxRelease), ""},
		{"", good, "", "need --push.url"},
		{"", "", "v1", "need --push.url"},
	} {
		_, err := New(c.url, c.httpConfig, c.release)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("New(%q, %q, %q): %v", c.url, c.httpConfig, c.release, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("New(%q, %q, %q) = %v, want an error with %q", c.url, c.httpConfig, c.release, err, c.want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("New(%q): the error repeats the password: %v", c.url, err)
		}
	}
}

// Every form a request carries a credential in is known to the caller's
// redactor, from the file itself or from the files it names.
func TestSecretsFromTheConfigAndItsFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("password", "from-a-file\n")
	basic := write("basic.yml", "basic_auth: {username: ci, password_file: password}\n")
	bearer := write("bearer.yml", "authorization: {credentials: inline-token}\n")
	for file, want := range map[string][]string{
		basic:  {"from-a-file", "Y2k6ZnJvbS1hLWZpbGU="}, // base64("ci:from-a-file"), the header's form
		bearer: {"inline-token"},
	} {
		p, err := New("http://pushgateway:9091", file, "")
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(p.Secrets(), " ")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: secrets %q lack %q", filepath.Base(file), got, w)
			}
		}
	}
	var none *Pusher
	if none.Secrets() != nil {
		t.Error("no pusher, yet secrets")
	}
}

// A refused push is a warning that names no credential, whoever writes it:
// report merge's stderr has no redactor of its own.
func TestPublishMasksWhatTheAnswerEchoes(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden: "+r.Header.Get("Authorization"), http.StatusForbidden)
	}))
	defer gw.Close()
	file := filepath.Join(t.TempDir(), "http.yml")
	if err := os.WriteFile(file, []byte("basic_auth: {username: ci, password: hunter2-secret}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(gw.URL, file, "v1")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	Publish(context.Background(), p, "report merge", JobGate, &report.Report{Burst: "split", Target: "sim"}, &stderr)
	out := stderr.String()
	if !strings.Contains(out, "llmprobe report merge: WARNING: the run was not pushed") || !strings.Contains(out, "<secret>") {
		t.Errorf("stderr %q: want the warning with the echoed credential masked", out)
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "Y2k6aHVudGVyMi1zZWNyZXQ=") { // base64("ci:hunter2-secret")
		t.Errorf("stderr repeats the credential: %q", out)
	}
}
