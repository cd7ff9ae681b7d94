package transport

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Credentials wrap the tuned transport as prometheus/common wraps its own:
// each kind, from text or a file read at each request, reaches the target.
func TestCredentialsAroundTheTunedTransport(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	basic := func(user, password string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	}
	for _, tc := range []struct {
		name string
		set  func(*promconfig.HTTPClientConfig)
		want string
	}{
		{"none", func(*promconfig.HTTPClientConfig) {}, ""},
		{"authorization", func(c *promconfig.HTTPClientConfig) {
			c.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "sk-inline"}
		}, "Bearer sk-inline"},
		{"authorization file", func(c *promconfig.HTTPClientConfig) {
			c.Authorization = &promconfig.Authorization{Type: "Token", CredentialsFile: file("cred", "sk-file")}
		}, "Token sk-file"},
		{"bearer token", func(c *promconfig.HTTPClientConfig) { c.BearerToken = "sk-bearer" }, "Bearer sk-bearer"},
		{"bearer token file", func(c *promconfig.HTTPClientConfig) { c.BearerTokenFile = file("bearer", "sk-bearer-file") }, "Bearer sk-bearer-file"},
		{"basic auth", func(c *promconfig.HTTPClientConfig) {
			c.BasicAuth = &promconfig.BasicAuth{Username: "u", PasswordFile: file("password", "p4ss")}
		}, basic("u", "p4ss")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 1)
			// A header longer than a connection's buffer still reads.
			long := strings.Repeat("x", 3*connBuffer)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Get("Authorization")
				w.Header().Set("X-Long", long)
				_, _ = io.WriteString(w, "ok")
			}))
			defer srv.Close()
			target := testkit.Target(srv.URL, config.APIChat)
			tc.set(&target.HTTPClientConfig)
			hc, err := NewClient(target)
			if err != nil {
				t.Fatal(err)
			}
			defer hc.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if a := <-got; a != tc.want || string(body) != "ok" || resp.Header.Get("X-Long") != long {
				t.Errorf("Authorization %q, body %q, long header %d bytes; want %q, ok and %d", a, body, len(resp.Header.Get("X-Long")), tc.want, len(long))
			}
		})
	}
}

// A transport without credentials of prometheus/common's own is tuned:
// small buffers, llmprobe's dialer.
func TestTransportIsTuned(t *testing.T) {
	rt, err := roundTripper(promconfig.DefaultHTTPClientConfig, "t")
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		t.Fatalf("round tripper %T, want an *http.Transport", rt)
	}
	if tr.ReadBufferSize != connBuffer || tr.WriteBufferSize != connBuffer || tr.DialContext == nil {
		t.Fatalf("buffers %d/%d: want %d bytes each and llmprobe's dialer", tr.ReadBufferSize, tr.WriteBufferSize, connBuffer)
	}
}
