package config

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	promconfig "github.com/prometheus/common/config"
)

// Every place a target keeps a secret is found: inline values, the
// contents of files, the basic-auth header, and parameters named like keys.
func TestTargetSecrets(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	proxy, _ := url.Parse("http://proxy-user:proxy-pass-1@proxy:3128/?token=proxy-token-2&region=eu")
	var tgt Target
	tgt.HTTPClientConfig = promconfig.HTTPClientConfig{
		BasicAuth: &promconfig.BasicAuth{Username: "user", PasswordFile: file("pass", "pass-from-file")},
		HTTPHeaders: &promconfig.Headers{Headers: map[string]promconfig.Header{
			"X-Key":  {Secrets: []promconfig.Secret{"header-secret"}, Values: []string{"plain-value"}},
			"X-File": {Files: []string{file("hdr", "header-from-file")}},
		}},
		ProxyConfig: promconfig.ProxyConfig{ProxyURL: promconfig.URL{URL: proxy}},
	}
	got := TargetSecrets(tgt)
	for _, want := range []string{"pass-from-file", base64.StdEncoding.EncodeToString([]byte("user:pass-from-file")), "header-secret", "header-from-file", "proxy-pass-1", "proxy-token-2"} {
		if !slices.Contains(got, want) {
			t.Errorf("secrets %q lack %q", got, want)
		}
	}
	for _, not := range []string{"plain-value", "eu", "user"} {
		if slices.Contains(got, not) {
			t.Errorf("secrets %q hold %q, which is not one", got, not)
		}
	}
	tgt.HTTPClientConfig.OAuth2 = &promconfig.OAuth2{ClientSecret: "oauth-secret", EndpointParams: map[string]string{"api_key": "param-key-3", "audience": "public"}}
	got = Secrets(&Config{Targets: []Target{tgt}})
	if !slices.Contains(got, "oauth-secret") || !slices.Contains(got, "param-key-3") || slices.Contains(got, "public") {
		t.Errorf("oauth2 secrets: %q", got)
	}
}
