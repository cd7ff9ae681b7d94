// Package redact replaces the secrets it is given (config.Secrets finds a
// configuration's) with <secret> in every string that leaves llmprobe: log
// lines, pages, HTTP answers, reports and the gate's output.
package redact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-kit/log"
)

// Mask stands where a secret was.
const Mask = "<secret>"

// maxSecrets bounds how many values a process remembers; configurations,
// not the network, add them.
const maxSecrets = 4096

// Redactor knows every secret the configurations it was given held, for
// the life of the process: a rotated token must not show either. It is safe
// for concurrent use.
type Redactor struct {
	mu       sync.Mutex
	known    map[string]bool
	replacer atomic.Pointer[strings.Replacer]
}

// New returns a redactor that knows no secret yet.
func New() *Redactor { return &Redactor{known: map[string]bool{}} }

// Add learns secrets, in every form text may carry them: as they are,
// escaped for JSON, for a URL and for HTML.
func (r *Redactor) Add(secrets []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	grew := false
	for _, s := range secrets {
		if r.known[s] {
			continue // its forms are known with it
		}
		for _, form := range forms(s) {
			if !r.known[form] && len(r.known) < maxSecrets {
				r.known[form], grew = true, true
			}
		}
	}
	if !grew {
		return
	}
	all := make([]string, 0, len(r.known))
	for s := range r.known {
		all = append(all, s)
	}
	// Longest first, so a secret that contains another is masked whole.
	slices.SortFunc(all, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Mask)
	}
	r.replacer.Store(strings.NewReplacer(pairs...))
}

func forms(s string) []string {
	out := []string{s}
	if b, err := json.Marshal(s); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	out = append(out, url.QueryEscape(s), url.PathEscape(s), template.HTMLEscapeString(s))
	var buf strings.Builder
	if err := htmlText.Execute(&buf, s); err == nil {
		out = append(out, buf.String())
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// htmlText escapes as html/template does in text, where '+' becomes &#43;.
var htmlText = template.Must(template.New("").Parse("{{.}}"))

// String masks every known secret in s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	if rp := r.replacer.Load(); rp != nil {
		return rp.Replace(s)
	}
	return s
}

// Bytes masks every known secret in b.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.replacer.Load() == nil {
		return b
	}
	return []byte(r.String(string(b)))
}

// Logger masks secrets in every key and value of every line before next
// writes it: strings, errors and anything with a String method. A value
// with nothing to mask passes as it is, so loggers below still see its type
// (the level filter knows levels by theirs).
func (r *Redactor) Logger(next log.Logger) log.Logger {
	return log.LoggerFunc(func(keyvals ...any) error {
		out := make([]any, len(keyvals))
		for i, kv := range keyvals {
			out[i] = kv
			switch v := kv.(type) {
			case string:
				out[i] = r.String(v)
			case error:
				if m := r.String(v.Error()); m != v.Error() {
					out[i] = errors.New(m)
				}
			case fmt.Stringer:
				if s := v.String(); r.String(s) != s {
					out[i] = r.String(s)
				}
			}
		}
		return next.Log(out...)
	})
}

// Writer masks secrets in each Write; callers write whole lines.
func (r *Redactor) Writer(w io.Writer) io.Writer { return writer{r, w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Handler masks secrets in every response h writes. Responses are held
// whole, so it is for pages of bounded size, not for streams.
func (r *Redactor) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(rec, req)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.status)
		_, _ = w.Write(r.Bytes(rec.body.Bytes()))
	})
}

type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
