package prober

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// flushWriter is a compressor that can push out what it holds.
type flushWriter interface {
	io.WriteCloser
	Flush() error
}

// compressing is a proxy's compression in front of h: the body compressed
// with encoding, flushed through whenever h flushes, as a proxy that keeps
// streams streaming does. lastWrite is when h wrote its last bytes.
type compressing struct {
	h        http.Handler
	encoding string
	newZ     func(io.Writer) flushWriter

	mu        sync.Mutex
	lastWrite time.Time
}

func (c *compressing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Encoding", c.encoding)
	cw := &compressedWriter{ResponseWriter: w, c: c, z: c.newZ(w)}
	c.h.ServeHTTP(cw, r)
	_ = cw.z.Close()
}

type compressedWriter struct {
	http.ResponseWriter
	c *compressing
	z flushWriter
}

func (w *compressedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	w.c.lastWrite = time.Now()
	w.c.mu.Unlock()
	return w.z.Write(p)
}

func (w *compressedWriter) Flush() {
	_ = w.z.Flush()
	w.ResponseWriter.(http.Flusher).Flush()
}

// A stream a proxy compressed, though llmprobe asked for no encoding, is
// decoded as it arrives: the request succeeds with every token, and its
// first token was read before the server wrote its last bytes, not once the
// whole body was in. An encoding llmprobe cannot decode fails, naming it.
// (On main each failed as "stream ended inside an event" or a malformed chunk.)
func TestCompressedStreams(t *testing.T) {
	engine := fastSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 20*time.Millisecond, 30*time.Millisecond })
	for _, c := range []struct {
		name, encoding string
		newZ           func(io.Writer) flushWriter
	}{
		{"gzip", "gzip", func(w io.Writer) flushWriter { return gzip.NewWriter(w) }},
		{"deflate", "deflate", func(w io.Writer) flushWriter { return zlib.NewWriter(w) }},
		// Some servers send deflate without zlib's wrapping.
		{"raw deflate", "deflate", func(w io.Writer) flushWriter { z, _ := flate.NewWriter(w, flate.DefaultCompression); return z }},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy := &compressing{h: engine.Handler(), encoding: c.encoding, newZ: c.newZ}
			srv := httptest.NewServer(proxy)
			t.Cleanup(srv.Close)
			res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), testkit.Scenario())
			if res.Outcome != OutcomeSuccess || res.OutputTokens != 6 {
				t.Fatalf("%s, %d tokens, want success with 6\n%s", res.FailureText(), res.OutputTokens, logOf(res))
			}
			proxy.mu.Lock()
			last := proxy.lastWrite
			proxy.mu.Unlock()
			if first := res.Sched.Add(res.TTFT); !first.Before(last) {
				t.Errorf("first token read %s after the server's last write: the body was read whole before decoding", first.Sub(last))
			}
			if !strings.Contains(logOf(res), "Content-Encoding "+c.encoding) {
				t.Errorf("the log does not say the body was compressed:\n%s", logOf(res))
			}
		})
	}
	t.Run("br", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte{0x1b, 0x2f, 0x00, 0xf8})
		}))
		t.Cleanup(srv.Close)
		res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), testkit.Scenario())
		want := "headers: response compressed with Content-Encoding: br, which llmprobe does not decode [content_encoding]"
		if res.Outcome != OutcomeStreamError || res.FailureText() != want {
			t.Errorf("%s: %s, want stream_error: %s", res.Outcome, res.FailureText(), want)
		}
	})
}
