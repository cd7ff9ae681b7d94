package prober

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// An answer is complete at its API's final event (or, unstreamed, at the
// end of its JSON value), whether or not the server ends the body there.
// What follows is read only to pool the connection, and only briefly.
const (
	// drainGrace bounds the read past the final event: by then the body has
	// ended and the connection is pooled, or it is closed.
	drainGrace = 250 * time.Millisecond
	// errorGrace bounds the read of an error status's body, whose message
	// comes with its headers from every server seen.
	errorGrace = 100 * time.Millisecond
	// releaseWait is how long the answer waits for the body's end, which
	// most servers send a moment after the final event: ended by then, the
	// connection is back in the pool for the next request.
	releaseWait = 5 * time.Millisecond
)

// release hands back the body of a complete answer, waiting for it at
// most releaseWait: what the server sends after the final event is read in
// the background, at most maxDrain bytes for drainGrace, so a body that
// ends leaves its connection to the pool; past either bound the body is
// closed, and with it the connection. The request's context ends after
// that: ended earlier, it would take the connection down with it.
func release(body io.ReadCloser, cancel context.CancelFunc) {
	closeLate := time.AfterFunc(drainGrace, func() { _ = body.Close() })
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
		closeLate.Stop()
		_ = body.Close()
		cancel()
		close(drained)
	}()
	wait := time.NewTimer(releaseWait)
	defer wait.Stop()
	select {
	case <-drained:
	case <-wait.C:
	}
}

// readBounded reads at most limit bytes of r within grace; closing c (the
// response's body under r) is what stops a read the server never ends.
func readBounded(r io.Reader, c io.Closer, limit int64, grace time.Duration) []byte {
	stop := time.AfterFunc(grace, func() { _ = c.Close() })
	defer stop.Stop()
	b, _ := io.ReadAll(io.LimitReader(r, limit))
	return b
}

// readValue reads an unstreamed answer from r: up to the end of its JSON
// value, which is where the answer ends however long the server keeps the
// body open, or, for a body that is no JSON value, up to the body's end as
// it came; at most limit+1 bytes either way, so a caller sees an answer
// over limit. An error reading r is returned as it is.
func readValue(r io.Reader, limit int64) ([]byte, error) {
	var seen bytes.Buffer
	body := io.LimitReader(r, limit+1)
	var v json.RawMessage
	err := json.NewDecoder(io.TeeReader(body, &seen)).Decode(&v)
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if _, err := io.Copy(&seen, body); err != nil {
			return nil, err
		}
		return seen.Bytes(), nil
	}
	return nil, err
}
