package prober

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
)

// transcript is a raw HTTP response captured from a real engine.
type transcript struct {
	status int
	header textproto.MIMEHeader
	events []string // body split into SSE events, each with its terminating blank line
}

func loadTranscript(t *testing.T, name string) transcript {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	statusLine, err := tp.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	var tr transcript
	var proto string
	if _, err := fmt.Sscanf(statusLine, "%s %d", &proto, &tr.status); err != nil {
		t.Fatalf("status line %q: %v", statusLine, err)
	}
	tr.header, err = tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	// The body was captured decoded; whatever textproto did not consume is the body.
	idx := bytes.Index(raw, []byte("\r\n\r\n"))
	body := string(raw[idx+4:])
	for _, ev := range strings.SplitAfter(body, "\n\n") {
		if strings.TrimSpace(ev) != "" {
			tr.events = append(tr.events, ev)
		}
	}
	return tr
}

// replay serves a transcript, pausing gap before each event, so TTFT shows
// which event the prober took as the first token.
func replay(t *testing.T, tr transcript, gap time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range tr.header {
			if k == "Transfer-Encoding" || k == "Content-Length" {
				continue
			}
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(tr.status)
		for _, ev := range tr.events {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
			_, _ = w.Write([]byte(ev))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newClient builds a client that closes when the test ends.
func newClient(t *testing.T, target config.Target) *Client {
	t.Helper()
	c, err := NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// probeOnce sends one request now and returns its result.
func probeOnce(t *testing.T, target config.Target, s config.Scenario) *Result {
	t.Helper()
	c := newClient(t, target)
	prompt, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
	return c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: prompt, MaxTokens: maxTokens, Sched: time.Now()})
}

func logOf(r *Result) string { return strings.Join(r.Log.Lines(), "\n") }

// drainAndWait reads the request body, so the server notices when the client
// hangs up, then waits for that.
func drainAndWait(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}
