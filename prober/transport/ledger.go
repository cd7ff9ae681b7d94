package transport

import (
	"context"
	"net"
	"sync"
	"time"
)

// A connection is reused when it already carried a response. The pool
// alone does not say so: a connection whose dial outlived the request that
// asked for it (a request that timed out) waits in the pool as "reused"
// before it ever carried one. The ledger counts, per connection llmprobe
// dialled, the responses it carried; it is keyed by the connection's two
// addresses, unique on the machine while the connection is open.
type ledger struct {
	mu    sync.Mutex
	conns map[string]*entry
}

// entry is one connection: the responses it carried, and the request whose
// dial made it (nil when none was traced).
type entry struct {
	served int
	by     *Tracer
}

var dialled = ledger{conns: map[string]*entry{}}

// tracerKey holds the request's Tracer in its context, for the dial to
// note whose it is.
type tracerKey struct{}

// dialer is prometheus/common's default, which the ledger's dial wraps.
var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// dial dials as the transport would and enters the connection in the
// ledger until it closes.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	key := connKey(c)
	if key == "" {
		return c, nil
	}
	by, _ := ctx.Value(tracerKey{}).(*Tracer)
	dialled.mu.Lock()
	dialled.conns[key] = &entry{by: by}
	dialled.mu.Unlock()
	return &ledgerConn{Conn: c, key: key}, nil
}

// ledgerConn leaves the ledger when it closes.
type ledgerConn struct {
	net.Conn
	key  string
	once sync.Once
}

func (c *ledgerConn) Close() error {
	c.once.Do(func() {
		dialled.mu.Lock()
		delete(dialled.conns, c.key)
		dialled.mu.Unlock()
	})
	return c.Conn.Close()
}

// connKey is c's two addresses; "" when it has no local address to tell
// it apart by.
func connKey(c net.Conn) string {
	local, remote := c.LocalAddr(), c.RemoteAddr()
	if local == nil || remote == nil || local.String() == "" {
		return ""
	}
	return local.Network() + " " + local.String() + " " + remote.String()
}

// lookup is what the ledger holds of the connection of key; known is false
// for one it does not hold.
func (l *ledger) lookup(key string) (e entry, known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.conns[key]; ok {
		return *p, true
	}
	return entry{}, false
}

// responded counts a response on the connection of key.
func (l *ledger) responded(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.conns[key]; ok {
		e.served++
	}
}
