// Package transport is one target's HTTP transport: its credentials only on
// its own host, each request's network phases timed, and a request that got
// no answer sorted into the phase and the reason it failed.
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
	own, err := roundTripper(t.HTTPClientConfig, t.Name)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", t.Name, err)
	}
	other, err := roundTripper(withoutCredentials(t.HTTPClientConfig), t.Name)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", t.Name, err)
	}
	hc := &http.Client{Transport: &hostGuard{host: u.Host, own: own, other: other}}
	if !t.HTTPClientConfig.FollowRedirects {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return hc, nil
}

// roundTripper is prometheus/common's transport for cfg, http_headers included.
func roundTripper(cfg promconfig.HTTPClientConfig, name string) (http.RoundTripper, error) {
	headers := cfg.HTTPHeaders
	cfg.HTTPHeaders = nil // added last, so no other layer sees them first
	rt, err := promconfig.NewRoundTripperFromConfig(cfg, "llmprobe_"+name)
	if err != nil || headers == nil {
		return rt, err
	}
	return promconfig.NewHeadersRoundTripper(headers, rt), nil
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
// any hop left it.
type hostGuard struct {
	host       string
	own, other http.RoundTripper
}

func (g *hostGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	for r := req; r != nil; {
		if !strings.EqualFold(r.URL.Host, g.host) {
			return g.other.RoundTrip(req)
		}
		if r.Response == nil {
			break
		}
		r = r.Response.Request
	}
	return g.own.RoundTrip(req)
}

// CloseIdleConnections closes both transports' idle connections.
func (g *hostGuard) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{g.own, g.other} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}
