package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct{ name, data, id string }

func readAll(r *Reader) ([]ev, error) {
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data), e.ID})
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []ev
		partial bool
	}{
		{"LF", "data: a\n\ndata: b\n\n", []ev{{"", "a", ""}, {"", "b", ""}}, false},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a", ""}, {"", "b", ""}}, false},
		{"lone CR", "data: a\r\rdata: b\r\r", []ev{{"", "a", ""}, {"", "b", ""}}, false},
		{"comments", ": keep-alive\ndata: a\n: more\n\n", []ev{{"", "a", ""}}, false},
		{"multi-line data", "data: a\ndata: b\n\n", []ev{{"", "a\nb", ""}}, false},
		{"no space", "data:a\n\n", []ev{{"", "a", ""}}, false},
		{"two spaces keep one", "data:  a\n\n", []ev{{"", " a", ""}}, false},
		{"field without colon", "data\n\n", []ev{{"", "", ""}}, false},
		{"event name", "event: error\ndata: {}\n\n", []ev{{"error", "{}", ""}}, false},
		{"event name resets", "event: x\ndata: 1\n\ndata: 2\n\n", []ev{{"x", "1", ""}, {"", "2", ""}}, false},
		{"id", "id: 7\ndata: a\n\n", []ev{{"", "a", "7"}}, false},
		{"id with NUL ignored", "id: 1\x002\ndata: a\n\n", []ev{{"", "a", ""}}, false},
		{"retry and unknown ignored", "retry: 10\nfoo: bar\ndata: a\n\n", []ev{{"", "a", ""}}, false},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a", ""}}, false},
		{"empty data not dispatched", "event: x\n\ndata: a\n\n", []ev{{"", "a", ""}}, false},
		{"unterminated event discarded", "data: a\n\ndata: b\n", []ev{{"", "a", ""}}, true},
		{"unterminated line", "data: a\n\ndata: b", []ev{{"", "a", ""}}, true},
		{"DONE is data", "data: [DONE]\n\n", []ev{{"", "[DONE]", ""}}, false},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				r := NewReader(wrap(strings.NewReader(tc.in)), 64)
				got, err := readAll(r)
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("events = %q, want %q", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
					}
				}
				if r.Partial() != tc.partial {
					t.Errorf("Partial() = %v, want %v", r.Partial(), tc.partial)
				}
			})
		}
	}
}

func TestSSELineLimit(t *testing.T) {
	const limit = 32
	exact := "data: " + strings.Repeat("x", limit-6) + "\n\n"
	if got, err := readAll(NewReader(iotest.OneByteReader(strings.NewReader(exact)), limit)); err != io.EOF || len(got) != 1 {
		t.Errorf("a line at the limit: %q, %v", got, err)
	}
	over := "data: " + strings.Repeat("x", limit-5) + "\n\n"
	for _, r := range []io.Reader{strings.NewReader(over), iotest.OneByteReader(strings.NewReader(over))} {
		if _, err := readAll(NewReader(r, limit)); !errors.Is(err, ErrLineTooLong) {
			t.Errorf("a line one byte over: err = %v", err)
		}
	}
	// An endless line stops at the limit instead of buffering forever.
	endless := io.MultiReader(strings.NewReader("data: "), infiniteX{})
	if _, err := readAll(NewReader(endless, 1<<16)); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("endless line: err = %v", err)
	}
	// Many short lines of one event are bounded too.
	many := strings.Repeat("data: "+strings.Repeat("y", 20)+"\n", 20) + "\n"
	if _, err := readAll(NewReader(strings.NewReader(many), limit)); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("event data over 4x the limit: err = %v", err)
	}
}

type infiniteX struct{}

func (infiniteX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestSSEReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	got, err := readAll(r)
	if !errors.Is(err, boom) || len(got) != 1 || !r.Partial() {
		t.Errorf("events %q, err %v, partial %v", got, err, r.Partial())
	}
	r = NewReader(iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n\n")), 0)
	if _, err := readAll(r); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("timeout reader: err = %v", err)
	}
}

// Event.Data is reused: it is valid until the next call.
func TestSSEDataReuse(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), 0)
	a, _ := r.Next()
	saved := string(a.Data)
	_, _ = r.Next()
	if saved != "first" {
		t.Errorf("copy taken before the next call = %q", saved)
	}
}

func transcriptBodies(tb testing.TB) map[string][]byte {
	// Real engines' streams, kept beside the prober's tests.
	files, err := filepath.Glob(filepath.Join("..", "..", "prober", "testdata", "*.sse"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no transcripts in prober/testdata/ (%v)", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
			out[filepath.Base(f)] = raw[i+4:]
		}
	}
	return out
}

func TestSSETranscripts(t *testing.T) {
	for name, body := range transcriptBodies(t) {
		got, err := readAll(NewReader(bytes.NewReader(body), 0))
		// Chat and completions streams end with [DONE]; a Responses API
		// stream with its response.completed event, a Messages API stream
		// with message_stop, OpenAI's transcription with transcript.text.done.
		last := "[DONE]"
		switch {
		case strings.Contains(name, "responses"):
			last = `{"type":"response.completed"`
		case strings.Contains(name, "messages"):
			last = `{"type":"message_stop"`
		case strings.HasPrefix(name, "openai-transcription"):
			last = `{"type":"transcript.text.done"`
		}
		// The type ends the event's JSON object, or opens it (Ollama's
		// Responses events put it last; the event: line names it too).
		end := got[len(got)-1]
		typed := strings.HasPrefix(end.data, last) || strings.HasPrefix(last, `{"type":`) && strings.Contains(end.data, `"type":`+strings.TrimPrefix(last, `{"type":`)+`}`)
		if err != io.EOF || len(got) < 3 || !typed {
			t.Errorf("%s: %d events, last %q, err %v", name, len(got), got[len(got)-1].data, err)
		}
	}
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\n\r\n", "data:a\r\rdata:b\r\r", ":c\nevent: e\nid: 1\ndata: x\ndata: y\n\n", "\xEF\xBB\xBFdata: [DONE]\n\n", "data: a\r"} {
		f.Add([]byte(s))
	}
	for _, body := range transcriptBodies(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 256
		whole, errWhole := readAll(NewReader(bytes.NewReader(in), limit))
		bytewise, errBytes := readAll(NewReader(iotest.OneByteReader(bytes.NewReader(in)), limit))
		for _, e := range whole {
			if len(e.data) > 4*limit {
				t.Fatalf("event data of %d bytes passed the bound", len(e.data))
			}
		}
		if errors.Is(errWhole, ErrLineTooLong) != errors.Is(errBytes, ErrLineTooLong) {
			return // the limit trips at different points with different read sizes
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("whole read gave %d events, byte-wise %d", len(whole), len(bytewise))
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("event %d differs: %q vs %q", i, whole[i], bytewise[i])
			}
		}
	})
}

// BenchmarkSSEReader parses a vLLM-like stream; chunks/s is per core.
func BenchmarkSSEReader(b *testing.B) {
	const chunk = `data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hello"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	const n = 10000
	stream := []byte(strings.Repeat(chunk, n))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			chunks++
		}
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}
