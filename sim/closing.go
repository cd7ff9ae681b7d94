package sim

import (
	"net/http"
	"strings"
)

// closeAfterStream ends a streamed answer as llama.cpp's server does: the
// last chunk of the body, then the connection closed, though the response
// said nothing of closing it (HTTP/1.1 keeps it alive by default).
func closeAfterStream(w http.ResponseWriter, r *http.Request) {
	if !r.ProtoAtLeast(1, 1) || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		return
	}
	w.(http.Flusher).Flush()
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	// The hijacked response is chunked and not yet ended: end it, so the
	// client reads a whole body and keeps the connection for its next request.
	_, _ = buf.WriteString("0\r\n\r\n")
	_ = buf.Flush()
}
