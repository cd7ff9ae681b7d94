// Package transport is one target's HTTP transport: its credentials only on
// its own host, each request's network phases timed, and a request that got
// no answer sorted into the phase and the reason it failed; and the ids
// each request carries.
package transport

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
)

// NewClient builds the target's HTTP client from its http_client_config.
// Requests to the target's own host carry its credentials and headers; a
// redirect elsewhere (when follow_redirects allows one) carries neither, only
// the headers' plain values. It has no timeout: streams must not be cut by
// one, each request carries its own deadline.
func NewClient(t config.Target) (*http.Client, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", t.Name, err)
	}
	g := &hostGuard{host: u.Host}
	noKeepAlive := []promconfig.HTTPClientOption{promconfig.WithKeepAlivesDisabled()}
	for _, rt := range []struct {
		to   *http.RoundTripper
		cfg  promconfig.HTTPClientConfig
		opts []promconfig.HTTPClientOption
	}{
		{&g.own, t.HTTPClientConfig, nil},
		{&g.other, withoutCredentials(t.HTTPClientConfig), nil},
		{&g.freshOwn, t.HTTPClientConfig, noKeepAlive},
		{&g.freshOther, withoutCredentials(t.HTTPClientConfig), noKeepAlive},
	} {
		if *rt.to, err = roundTripper(rt.cfg, t.Name, rt.opts...); err != nil {
			return nil, fmt.Errorf("target %q: %w", t.Name, err)
		}
	}
	hc := &http.Client{Transport: g}
	if !t.HTTPClientConfig.FollowRedirects {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return hc, nil
}

// connBuffer is each connection's read and write buffer: a chunk of a
// stream is 200-400 bytes, and net/http's 4 KiB each were a third of the
// heap an open stream holds.
const connBuffer = 1 << 10

// roundTripper is prometheus/common's transport for cfg, http_headers
// included. Where that transport is a plain *http.Transport it is tuned
// before first use: smaller buffers, and llmprobe's own dialer in place
// of go-conntrack's, whose per-connection trace log was another fifth of
// that heap. Credentials from text or files are wrapped around it with
// prometheus/common's own round trippers, in its order, so the transport
// stays reachable; OAuth2, secret references and TLS files that reload
// keep prometheus/common's transport as it builds it.
func roundTripper(cfg promconfig.HTTPClientConfig, name string, opts ...promconfig.HTTPClientOption) (http.RoundTripper, error) {
	headers := cfg.HTTPHeaders
	cfg.HTTPHeaders = nil // added last, so no other layer sees them first
	base, auth := cfg, []func(http.RoundTripper) http.RoundTripper(nil)
	if !usesSecretRefs(cfg) {
		base.Authorization, base.BearerToken, base.BearerTokenFile, base.BasicAuth = nil, "", "", nil
		auth = credentials(cfg)
	}
	opts = append(opts, promconfig.WithDialContextFunc(dial))
	rt, err := promconfig.NewRoundTripperFromConfig(base, "llmprobe_"+name, opts...)
	if err != nil {
		return nil, err
	}
	if t, ok := rt.(*http.Transport); ok {
		t.ReadBufferSize, t.WriteBufferSize, t.DialContext = connBuffer, connBuffer, dial
	}
	for _, wrap := range auth {
		rt = wrap(rt)
	}
	if headers != nil {
		rt = promconfig.NewHeadersRoundTripper(headers, rt)
	}
	return rt, nil
}

// usesSecretRefs reports whether cfg names a secret by reference, which
// prometheus/common resolves itself.
func usesSecretRefs(cfg promconfig.HTTPClientConfig) bool {
	return (cfg.Authorization != nil && cfg.Authorization.CredentialsRef != "") ||
		(cfg.BasicAuth != nil && (cfg.BasicAuth.UsernameRef != "" || cfg.BasicAuth.PasswordRef != ""))
}

// credentials are cfg's authorization, bearer token and basic auth as
// prometheus/common wraps them around its transport, innermost first.
func credentials(cfg promconfig.HTTPClientConfig) []func(http.RoundTripper) http.RoundTripper {
	var wraps []func(http.RoundTripper) http.RoundTripper
	if a := cfg.Authorization; a != nil {
		secret := secretOf(a.Credentials, a.CredentialsFile)
		wraps = append(wraps, func(rt http.RoundTripper) http.RoundTripper {
			return promconfig.NewAuthorizationCredentialsRoundTripper(a.Type, secret, rt)
		})
	}
	if cfg.BearerToken != "" || cfg.BearerTokenFile != "" {
		secret := secretOf(cfg.BearerToken, cfg.BearerTokenFile)
		wraps = append(wraps, func(rt http.RoundTripper) http.RoundTripper {
			return promconfig.NewAuthorizationCredentialsRoundTripper("Bearer", secret, rt)
		})
	}
	if b := cfg.BasicAuth; b != nil {
		user, password := secretOf(promconfig.Secret(b.Username), b.UsernameFile), secretOf(b.Password, b.PasswordFile)
		wraps = append(wraps, func(rt http.RoundTripper) http.RoundTripper {
			return promconfig.NewBasicAuthRoundTripper(user, password, rt)
		})
	}
	return wraps
}

// secretOf is text, else the file read at each request, as
// prometheus/common reads a secret; nil for neither.
func secretOf(text promconfig.Secret, file string) promconfig.SecretReader {
	switch {
	case text != "":
		return promconfig.NewInlineSecret(string(text))
	case file != "":
		return promconfig.NewFileSecret(file)
	}
	return nil
}

// withoutCredentials is cfg for hosts other than the target's: no
// authentication of any kind, and of http_headers only the plain values.
func withoutCredentials(cfg promconfig.HTTPClientConfig) promconfig.HTTPClientConfig {
	cfg.BasicAuth, cfg.Authorization, cfg.OAuth2 = nil, nil, nil
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	cfg.ProxyConnectHeader = nil
	if cfg.HTTPHeaders != nil {
		values := promconfig.Headers{Headers: map[string]promconfig.Header{}}
		for name, h := range cfg.HTTPHeaders.Headers {
			if len(h.Values) > 0 {
				values.Headers[name] = promconfig.Header{Values: h.Values}
			}
		}
		cfg.HTTPHeaders = &values
	}
	return cfg
}

// hostGuard sends a request through own while every hop of its redirect
// chain stayed on the target's host (host and port), and through other once
// any hop left it; a request sent again (Send) through their fresh twins,
// which keep no connection, so it cannot meet another closing one.
type hostGuard struct {
	host                 string
	own, other           http.RoundTripper
	freshOwn, freshOther http.RoundTripper
}

// freshConn marks the context of a request that must go out on a new
// connection.
type freshConn struct{}

func (g *hostGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	own, other := g.own, g.other
	if req.Context().Value(freshConn{}) != nil {
		own, other = g.freshOwn, g.freshOther
	}
	for r := req; r != nil; {
		if !strings.EqualFold(r.URL.Host, g.host) {
			return other.RoundTrip(req)
		}
		if r.Response == nil {
			break
		}
		r = r.Response.Request
	}
	return own.RoundTrip(req)
}

// CloseIdleConnections closes the transports' idle connections.
func (g *hostGuard) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{g.own, g.other, g.freshOwn, g.freshOther} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}
