// Package enginemetrics reads an inference engine's own /metrics page and
// turns the difference between two reads into server-side latency figures.
package enginemetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/version"
)

// MaxPageBytes bounds one page: vLLM's with many engines is about 1 MiB.
const MaxPageBytes = 8 << 20

// Page is one read of an engine's metrics page: when, how long it took, and
// the series llmprobe knows, or why there are none.
type Page struct {
	Time     time.Time `json:"time"`
	Duration float64   `json:"duration_seconds"`
	// Error says why the page could not be read; empty when it was.
	Error string `json:"error,omitempty"`

	families map[string]*dto.MetricFamily // only the names some family maps
}

// OK reports whether the page was read.
func (p *Page) OK() bool { return p != nil && p.Error == "" }

// Scraper reads one engine's page.
type Scraper struct {
	// Client carries the target's TLS, proxy and, on the target's own
	// host and port only, its credentials.
	Client  *http.Client
	URL     string
	Timeout time.Duration
	// Redact masks secrets in error text; nil masks nothing.
	Redact func(string) string
}

// Scrape reads the page, within s.Timeout and MaxPageBytes. It never fails:
// a page that cannot be read carries its reason.
func (s Scraper) Scrape(ctx context.Context) *Page {
	start := time.Now()
	p := &Page{Time: start.UTC()}
	rctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	fams, err := s.read(rctx)
	p.Duration = time.Since(start).Seconds()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("cancelled: %w", context.Cause(ctx))
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("timeout: %s gave no complete page within %s", s.URL, s.Timeout)
		}
		p.Error = err.Error()
		if s.Redact != nil {
			p.Error = s.Redact(p.Error)
		}
		return p
	}
	p.families = fams
	return p
}

func (s Scraper) read(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, err
	}
	// Only the text format: prometheus/common parses it, and every engine
	// serves it.
	req.Header.Set("Accept", textFormat)
	req.Header.Set("User-Agent", "llmprobe/"+version.Version)
	resp, err := s.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("engine down: GET %s: %w", s.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, statusError(resp.StatusCode)
	}
	if err := refuseFormat(resp.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	if resp.ContentLength > MaxPageBytes {
		return nil, fmt.Errorf("page larger than %d MiB (%d bytes announced), not read", MaxPageBytes>>20, resp.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	if len(body) > MaxPageBytes {
		return nil, fmt.Errorf("page larger than %d MiB, not read", MaxPageBytes>>20)
	}
	return parse(body, resp.Header.Get("Content-Type"))
}

// textFormat is the Prometheus text format, the one format llmprobe asks for.
const textFormat = "text/plain;version=0.0.4"

func statusError(code int) error {
	msg := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	switch code {
	case http.StatusNotFound:
		msg += ": no metrics page at this URL (check engine_metrics.url)"
	case http.StatusNotImplemented:
		msg += ": the engine serves no metrics (llama.cpp answers so unless started with --metrics)"
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += ": the engine refused the request (credentials go only to the target's own host and port)"
	}
	return errors.New(msg)
}

// refuseFormat refuses an OpenMetrics page, which an engine may send
// whatever llmprobe asked for: prometheus/common, which reads the pages,
// has no OpenMetrics parser. Any other Content-Type is read as text, and a
// page that is not says what it seems to be.
func refuseFormat(contentType string) error {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/openmetrics-text" {
		return fmt.Errorf("the engine answered in OpenMetrics (Content-Type %q) although llmprobe asked for %q: llmprobe reads engines' pages in the Prometheus text format only (prometheus/common has no OpenMetrics parser); let the engine serve the text format", contentType, textFormat)
	}
	return nil
}

// parse reads the text format, keeping the families llmprobe knows.
func parse(body []byte, contentType string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	all, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("unparseable page (Content-Type %q): %v%s", contentType, err, looksLike(body))
	}
	keep := make(map[string]*dto.MetricFamily)
	for name, mf := range all {
		if knownNames[name] {
			keep[name] = mf
		}
	}
	return keep, nil
}

// looksLike names what a page that is not Prometheus text seems to be.
func looksLike(body []byte) string {
	b := bytes.TrimSpace(body)
	switch {
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return "; it is JSON (trtllm-serve's /metrics is; its Prometheus page is /prometheus/metrics)"
	case bytes.HasPrefix(bytes.ToLower(b), []byte("<!doctype html")) || bytes.HasPrefix(bytes.ToLower(b), []byte("<html")):
		return "; it is an HTML page"
	}
	return ""
}
