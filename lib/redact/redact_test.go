package redact

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

const secret = `sk-a+b/c=d"e&f<g>`

// A secret is masked in every form text carries it: raw, and escaped for
// JSON, a URL and HTML (html/template turns '+' into &#43;).
func TestFormsAreMasked(t *testing.T) {
	r := New()
	r.Add([]string{secret, "sk-a+b"}) // one secret inside another: the longer wins
	var page strings.Builder
	if err := template.Must(template.New("").Parse(`<p>{{.}}</p>`)).Execute(&page, secret); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{secret, `sk-a+b/c=d\"e\u0026f\u003cg\u003e`, url.QueryEscape(secret), page.String()} {
		if got := r.String("x " + form + " y"); strings.Contains(got, "sk-a") {
			t.Errorf("%q masked to %q", form, got)
		}
	}
	if got := r.String("key " + secret + " end"); got != "key "+Mask+" end" {
		t.Errorf("masked to %q, want the whole secret masked once", got)
	}
	var nilR *Redactor
	if nilR.String(secret) != secret || New().String(secret) != secret {
		t.Error("a redactor that knows nothing changed text")
	}
}

func TestLoggerWriterHandler(t *testing.T) {
	r := New()
	r.Add([]string{secret})
	var buf bytes.Buffer
	logger := r.Logger(log.NewLogfmtLogger(&buf))
	_ = logger.Log("msg", "token "+secret, "err", errors.New("echo "+secret), "v", fmt.Stringer(stringer(secret)), "n", 3)
	_, _ = fmt.Fprintf(r.Writer(&buf), "gate %s\n", secret)
	h := r.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "999")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprint(w, "page "+secret)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	out := buf.String() + rec.Body.String()
	if strings.Contains(out, "sk-a") || strings.Count(out, Mask) != 5 || !strings.Contains(out, "n=3") {
		t.Errorf("output:\n%s", out)
	}
	if rec.Code != http.StatusTeapot || rec.Header().Get("Content-Length") != "" {
		t.Errorf("status %d, Content-Length %q", rec.Code, rec.Header().Get("Content-Length"))
	}
}

// Beneath the redactor a level filter still knows a debug line for one.
func TestLoggerKeepsLevels(t *testing.T) {
	r := New()
	r.Add([]string{secret})
	var buf bytes.Buffer
	logger := r.Logger(level.NewFilter(log.NewLogfmtLogger(&buf), level.AllowInfo()))
	level.Debug(logger).Log("msg", "hidden "+secret)
	level.Info(logger).Log("msg", "shown "+secret)
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown "+Mask) {
		t.Errorf("output:\n%s", out)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
