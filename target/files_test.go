package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Each bad file's first line is the error it must get.
func TestBadConfigs(t *testing.T) {
	testkit.BadConfigs(t, "testdata/bad_*.yml", func(path string) error {
		_, err := config.LoadFile(path, CheckFiles)
		return err
	})
}

// A file the configuration names is read relative to the configuration's
// directory.
func TestRelativeFilesResolvedAgainstConfigDir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yml")
	data := "targets:\n  - name: a\n    url: http://x:1\n    http_client_config:\n      authorization:\n        credentials_file: token.txt\nscenarios:\n  - name: s\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadFile(path, CheckFiles); err == nil || !strings.Contains(err.Error(), "c.yml:6: targets[0].http_client_config.authorization.credentials_file: cannot be read: "+filepath.Join(dir, "token.txt")+": no such file or directory") {
		t.Fatalf("a missing credentials file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token.txt"), []byte("sk-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(path, CheckFiles)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Targets[0].HTTPClientConfig.Authorization.CredentialsFile; got != filepath.Join(dir, "token.txt") {
		t.Errorf("credentials_file = %q", got)
	}
}
