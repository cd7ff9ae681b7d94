package sim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve answers on ln until ctx ends, then shuts the server down, giving
// streams in flight two seconds. It does not close the engine. Truth
// records of requests it serves say when their connection was accepted.
func (e *Engine) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: e.Handler(), ReadHeaderTimeout: 10 * time.Second, ConnContext: StampAccept}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
