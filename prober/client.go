package prober

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/prober/transport"
)

// Client probes one target. It is safe for concurrent use.
type Client struct {
	target config.Target
	api    api // how the target's API is spoken
	http   *http.Client
	base   string           // server root without a trailing /v1
	redact *redact.Redactor // the target's secrets to <secret>
	// secretFiles: the target names files whose contents are secrets, read
	// again before each scrub, as the transport reads them for each request.
	secretFiles bool
	// sampler decides which requests' spans are exported; nil: none is,
	// and every request goes out as sampled (transport.NewRequestID).
	sampler Sampler

	mu        sync.Mutex
	info      Info
	infoTried time.Time // a rerank target's last read of its info (learnEngine)
}

// Sampler decides, before a request is sent, whether its span is exported.
type Sampler interface {
	Sampled(traceID string) bool
}

// Option sets what a client needs beyond its target's configuration.
type Option func(*Client)

// WithSampler has the client's requests say in their traceparent whether
// s exports their span.
func WithSampler(s Sampler) Option { return func(c *Client) { c.sampler = s } }

// NewClient builds the client of target t (see transport.NewClient).
func NewClient(t config.Target, opts ...Option) (*Client, error) {
	hc, err := transport.NewClient(t)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(strings.TrimSuffix(t.URL, "/"), "/v1")
	c := &Client{target: t, api: apiOf(t.API), http: hc, base: base, redact: redact.New(), secretFiles: len(config.CredentialFiles(t)) > 0}
	c.redact.Add(config.TargetSecrets(t))
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// configuresHeader reports whether the target's http_headers set name:
// the transport adds those to every request, so an API's own would go twice.
func (c *Client) configuresHeader(name string) bool {
	if h := c.target.HTTPClientConfig.HTTPHeaders; h != nil {
		for k := range h.Headers {
			if strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

// redactText replaces the target's secrets in s with <secret>: text a target
// sends back (an error body echoing the request headers) must not carry them
// into logs, pages or reports.
func (c *Client) redactText(s string) string { return c.redact.String(s) }

// scrub redacts every text of a result that came from the target.
func (c *Client) scrub(res *Result) {
	if c.secretFiles && (res.Error != "" || res.Body != "" || res.Answer != "" || len(res.ToolCalls) > 0) {
		c.redact.Add(config.TargetSecrets(c.target))
	}
	res.Error, res.Body, res.Answer = c.redactText(res.Error), c.redactText(res.Body), c.redactText(res.Answer)
	if res.answerLimit > 0 {
		res.Answer = truncate(res.Answer, res.answerLimit)
	}
	res.Log.redact = c.redactText
	for i := range res.ToolCalls {
		tc := &res.ToolCalls[i]
		tc.Name, tc.Arguments = c.redactText(tc.Name), truncate(c.redactText(tc.Arguments), maxAnswerBytes)
	}
	if q := res.Quality; q != nil {
		q.Reason = c.redactText(q.Reason)
	}
}

// HTTPClient is the target's HTTP client: its TLS and proxy settings, and
// its credentials on the target's own host and port only. llmprobe reads
// the engine's metrics page with it.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Redact masks the target's secrets in s, for text read from the target.
func (c *Client) Redact(s string) string {
	if c.secretFiles {
		c.redact.Add(config.TargetSecrets(c.target))
	}
	return c.redactText(s)
}

// Target returns the target's configuration.
func (c *Client) Target() config.Target { return c.target }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) endpoint() string { return c.base + c.api.path(c.dialect()) }

// dialect is what the target's server is, where its API is spoken
// differently by one kind: TEI, once its /info said so.
func (c *Client) dialect() dialect {
	return dialect{tei: c.Info().Engine == engineTEI}
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
// Where the server's kind changes how its API is spoken (TEI's rerank),
// what it is is read before the first request, and again while unknown.
func (c *Client) resolveModel(ctx context.Context) (string, error) {
	if c.api.traits().dialects && c.target.Model != "" {
		c.learnEngine(ctx)
	}
	if m := c.Model(); m != "" {
		return m, nil
	}
	models, err := c.server().Models(ctx)
	if err != nil {
		return "", fmt.Errorf("model discovery: %w", err)
	}
	if len(models) == 0 {
		return "", fmt.Errorf("model discovery: %w", errNoModel)
	}
	c.RefreshInfo(ctx) // remember the model and the engine for the next request
	return models[0], nil
}

var userAgent = "llmprobe/" + version.Version

func (c *Client) setHeaders(req *http.Request) {
	req.Header.Set("User-Agent", userAgent)
}

// Info returns the last targetinfo.Info read.
func (c *Client) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// RefreshInfo reads /v1/models and the engine's version endpoint. When
// /v1/models fails, the last known facts stay, with the reason beside them.
func (c *Client) RefreshInfo(ctx context.Context) Info {
	ctx, cancel := context.WithTimeout(ctx, min(c.target.Timeout.Std(), 10*time.Second))
	defer cancel()
	info := c.server().Read(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if info.ModelsError != "" {
		c.info.ModelsError, c.info.ModelsStatus = info.ModelsError, info.ModelsStatus
	} else {
		c.info = info
	}
	return c.info
}

// learnEngine reads the target's info when nothing confirmed it yet, at
// most every infoRetry.
func (c *Client) learnEngine(ctx context.Context) {
	c.mu.Lock()
	due := c.info.Confirmed.IsZero() && time.Since(c.infoTried) >= infoRetry
	if due {
		c.infoTried = time.Now()
	}
	c.mu.Unlock()
	if due {
		c.RefreshInfo(ctx)
	}
}

// infoRetry spaces a rerank target's reads of its info while it does not answer.
const infoRetry = 10 * time.Second

// server is the target as targetinfo asks it.
func (c *Client) server() infoServer {
	return infoServer{HTTP: c.http, Base: c.base, Redact: c.redact}
}
