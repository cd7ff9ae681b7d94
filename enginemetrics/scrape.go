// Package enginemetrics reads an inference engine's own /metrics page and
// turns the difference between two reads into server-side latency figures.
package enginemetrics

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
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
	// The classic text format first: every engine serves it; OpenMetrics
	// is read too, for a server that insists.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
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

// parse reads the text format, or OpenMetrics 1.0 made into it.
func parse(body []byte, contentType string) (map[string]*dto.MetricFamily, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/openmetrics-text" {
		body = fromOpenMetrics(body)
	}
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

// fromOpenMetrics rewrites OpenMetrics 1.0 as the classic text format: no
// # EOF, no exemplars, counters typed under their _total name, and types the
// classic format lacks as untyped.
func fromOpenMetrics(body []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), MaxPageBytes)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "# EOF", strings.HasPrefix(line, "# HELP "), strings.HasPrefix(line, "# UNIT "):
			continue
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) == 4 {
				switch f[3] {
				case "counter":
					if !strings.HasSuffix(f[2], "_total") {
						f[2] += "_total"
					}
				case "info", "stateset", "unknown":
					f[3] = "untyped"
				}
				line = strings.Join(f, " ")
			}
		default:
			if i := strings.Index(line, " # {"); i >= 0 {
				line = line[:i]
			}
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
