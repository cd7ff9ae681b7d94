package transport

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Decoded is resp's body decoded from the Content-Encoding a proxy or the
// server applied though llmprobe asked for none: gzip and deflate are
// decoded as they arrive, so a flushed event is read when it comes and TTFT
// stays at the first token; identity is the body as is. Any other encoding
// is an error naming it. The body is not read here: a server that sends no
// byte fails in the stream, by the stream's rules (its deadline).
func Decoded(resp *http.Response) (io.Reader, string, error) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	var body io.Reader = resp.Body
	// Codings are listed in the order they were applied: undo the last first.
	for _, c := range slices.Backward(codings) {
		switch c {
		case "gzip", "x-gzip":
			body = &lazyReader{src: body, open: func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }}
		case "deflate":
			body = &lazyReader{src: body, open: openDeflate}
		default:
			return nil, "", fmt.Errorf("response compressed with Content-Encoding: %s, which llmprobe does not decode", c)
		}
	}
	return body, strings.Join(codings, ", "), nil
}

// openDeflate reads HTTP's deflate: zlib-wrapped as RFC 9110 says, or raw,
// as some servers send it.
func openDeflate(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// lazyReader opens its decoder at the first Read, so opening waits for
// bytes inside the stream, where a deadline or a cut is classified as such.
type lazyReader struct {
	src  io.Reader
	open func(io.Reader) (io.Reader, error)
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open(l.src)
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}
