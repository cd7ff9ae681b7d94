package prober

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
)

// Client probes one target. It is safe for concurrent use.
type Client struct {
	target config.Target
	http   *http.Client
	base   string // server root without a trailing /v1

	mu   sync.Mutex
	info TargetInfo
}

// NewClient builds the HTTP client from the target's http_client_config.
func NewClient(t config.Target) (*Client, error) {
	hc, err := promconfig.NewClientFromConfig(t.HTTPClientConfig, "llmprobe_"+t.Name)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", t.Name, err)
	}
	// Streams must not be cut by a client-wide timeout; each request carries its own deadline.
	hc.Timeout = 0
	base := strings.TrimSuffix(strings.TrimSuffix(t.URL, "/"), "/v1")
	return &Client{target: t, http: hc, base: base}, nil
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

// resolveModel discovers the model on first use when none is configured.
func (c *Client) resolveModel(ctx context.Context) (string, error) {
	if m := c.Model(); m != "" {
		return m, nil
	}
	info := c.RefreshInfo(ctx)
	if len(info.Models) == 0 {
		if info.ModelsError != "" {
			return "", fmt.Errorf("model discovery: %s", info.ModelsError)
		}
		return "", fmt.Errorf("model discovery: /v1/models lists no model")
	}
	return info.Models[0], nil
}

func (c *Client) setHeaders(req *http.Request) {
	for k, v := range c.target.Headers {
		req.Header.Set(k, string(v))
	}
	req.Header.Set("User-Agent", userAgent)
}
