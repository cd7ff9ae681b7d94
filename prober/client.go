package prober

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/redact"
)

// Client probes one target. It is safe for concurrent use.
type Client struct {
	target config.Target
	http   *http.Client
	base   string           // server root without a trailing /v1
	redact *redact.Redactor // the target's secrets to <secret>
	// secretFiles: the target names files whose contents are secrets, read
	// again before each scrub, as the transport reads them for each request.
	secretFiles bool

	mu   sync.Mutex
	info TargetInfo
}

// NewClient builds the HTTP client from the target's http_client_config.
// Requests to the target's own host carry its credentials and headers; a
// redirect elsewhere (when follow_redirects allows one) carries neither, only
// the headers' plain values.
func NewClient(t config.Target) (*Client, error) {
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
	// No client-wide timeout: streams must not be cut by one; each request carries its own deadline.
	hc := &http.Client{Transport: &hostGuard{host: u.Host, own: own, other: other}}
	if !t.HTTPClientConfig.FollowRedirects {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	base := strings.TrimSuffix(strings.TrimSuffix(t.URL, "/"), "/v1")
	c := &Client{target: t, http: hc, base: base, redact: redact.New(), secretFiles: len(redact.CredentialFiles(t)) > 0}
	c.redact.Add(redact.TargetSecrets(t))
	return c, nil
}

// redactText replaces the target's secrets in s with <secret>: text a target
// sends back (an error body echoing the request headers) must not carry them
// into logs, pages or reports.
func (c *Client) redactText(s string) string { return c.redact.String(s) }

// scrub redacts every text of a result that came from the target.
func (c *Client) scrub(res *Result) {
	if c.secretFiles && (res.Error != "" || res.Body != "" || res.Answer != "") {
		c.redact.Add(redact.TargetSecrets(c.target))
	}
	res.Error, res.Body, res.Answer = c.redactText(res.Error), c.redactText(res.Body), c.redactText(res.Answer)
	if res.answerLimit > 0 {
		res.Answer = truncate(res.Answer, res.answerLimit)
	}
	for i, l := range res.Log {
		res.Log[i] = c.redactText(l)
	}
}

// HTTPClient is the target's HTTP client: its TLS and proxy settings, and
// its credentials on the target's own host and port only. llmprobe reads
// the engine's metrics page with it.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Redact masks the target's secrets in s, for text read from the target.
func (c *Client) Redact(s string) string {
	if c.secretFiles {
		c.redact.Add(redact.TargetSecrets(c.target))
	}
	return c.redactText(s)
}

// Target returns the target's configuration.
func (c *Client) Target() config.Target { return c.target }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) endpoint() string {
	if c.target.API == config.APICompletions {
		return c.base + "/v1/completions"
	}
	return c.base + "/v1/chat/completions"
}

// Model returns the configured model, or the one discovered from /v1/models.
func (c *Client) Model() string {
	if c.target.Model != "" {
		return c.target.Model
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.info.Models) > 0 {
		return c.info.Models[0]
	}
	return ""
}

// errNoModel is /v1/models answering with an empty list.
var errNoModel = errors.New("/v1/models lists no model")

// resolveModel discovers the model on first use when none is configured.
func (c *Client) resolveModel(ctx context.Context) (string, error) {
	if m := c.Model(); m != "" {
		return m, nil
	}
	models, _, _, err := c.listModels(ctx)
	if err != nil {
		return "", fmt.Errorf("model discovery: %w", err)
	}
	if len(models) == 0 {
		return "", fmt.Errorf("model discovery: %w", errNoModel)
	}
	c.RefreshInfo(ctx) // remember the model and the engine for the next request
	return models[0], nil
}

func (c *Client) setHeaders(req *http.Request) {
	req.Header.Set("User-Agent", userAgent)
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
