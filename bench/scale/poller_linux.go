package main

import (
	"bytes"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// pollerBurst is the spike: one OS thread reads every connection
// through one epoll set, level-triggered, one read(2) per readiness; no
// goroutine per stream and no runtime network poller, which reads each
// event twice (the data, then EAGAIN before parking). It sends the floor
// reader's requests on the same Poisson schedule, on keep-alive
// connections, and stamps each event as the floor does. HTTP/1.1 with a
// chunked body only: a finding about the floor, not a client.
func pollerBurst(base string, rate float64, d time.Duration, tokens int) (cpuPerRequest float64, complete, requests int, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, 0, 0, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, 0, 0, fmt.Errorf("poller: %s has no port", base)
	}
	body := fmt.Sprintf(`{"model":"sim-model","prompt":%q,"max_tokens":%d,"stream":true}`, floorPrompt, tokens)
	p := &poller{
		addr:    &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}},
		request: []byte(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body)),
		want:    tokens + 1, // its tokens and its [DONE]
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.open(); err != nil {
		return 0, 0, 0, err
	}
	defer p.close()
	// A warm connection, as the floor and llmprobe's rows have.
	if err := p.run([]time.Time{time.Now()}); err != nil {
		return 0, 0, 0, err
	}
	p.complete = 0
	var arrivals []time.Time
	poisson(rate, d, func(t time.Time) { arrivals = append(arrivals, t) })
	m := startMeter()
	if err := p.run(arrivals); err != nil {
		return 0, 0, 0, err
	}
	row := m.stop("poller", rate, len(arrivals))
	return *row.CPUPerRequestMs, p.complete, len(arrivals), nil
}

// pollConn is one connection and where its response's parse stands.
type pollConn struct {
	fd      int
	pending []byte // read, not yet parsed
	state   int
	left    int // bytes left in the current chunk
	matched int // of "data:" at the start of the current line; past it, not a data line
	events  int
	stamps  [128]time.Time
}

const (
	inHeaders = iota
	inChunkSize
	inChunkData
	inChunkEnd
	inLastChunk
)

type poller struct {
	addr     *unix.SockaddrInet4
	request  []byte
	want     int
	epfd     int
	timer    int
	conns    []*pollConn // by descriptor
	idle     []*pollConn
	inFlight int
	complete int
	scratch  [4096]byte
}

func (p *poller) open() error {
	var err error
	if p.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return err
	}
	if p.timer, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return err
	}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, p.timer, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p.timer)})
}

func (p *poller) close() {
	for _, c := range p.conns {
		if c != nil {
			_ = unix.Close(c.fd)
		}
	}
	_ = unix.Close(p.timer)
	_ = unix.Close(p.epfd)
}

// run sends each arrival at its time and reads until every answer ended.
func (p *poller) run(arrivals []time.Time) error {
	events := make([]unix.EpollEvent, 256)
	next, armed := 0, -1
	for next < len(arrivals) || p.inFlight > 0 {
		now := time.Now()
		for ; next < len(arrivals) && !arrivals[next].After(now); next++ {
			if err := p.send(); err != nil {
				return err
			}
		}
		if next < len(arrivals) && armed != next {
			armed = next
			t := unix.NsecToTimespec(int64(max(arrivals[next].Sub(now), time.Microsecond)))
			if err := unix.TimerfdSettime(p.timer, 0, &unix.ItimerSpec{Value: t}, nil); err != nil {
				return err
			}
		}
		n, err := unix.EpollWait(p.epfd, events, -1)
		if err == unix.EINTR {
			continue
		} else if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == p.timer {
				_, _ = unix.Read(p.timer, p.scratch[:8])
				continue
			}
			if err := p.read(p.conns[ev.Fd]); err != nil {
				return err
			}
		}
	}
	return nil
}

// send writes the request on an idle connection, or a new one.
func (p *poller) send() error {
	var c *pollConn
	if n := len(p.idle); n > 0 {
		c, p.idle = p.idle[n-1], p.idle[:n-1]
	} else {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.Connect(fd, p.addr); err != nil { // at once on loopback
			return err
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := unix.SetNonblock(fd, true); err != nil {
			return err
		}
		if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return err
		}
		c = &pollConn{fd: fd}
		for len(p.conns) <= fd {
			p.conns = append(p.conns, nil)
		}
		p.conns[fd] = c
	}
	*c = pollConn{fd: c.fd, pending: c.pending[:0]}
	if n, err := unix.Write(c.fd, p.request); err != nil || n < len(p.request) {
		return fmt.Errorf("poller: wrote %d of %d bytes: %v", n, len(p.request), err)
	}
	p.inFlight++
	return nil
}

// read takes what one read(2) gives and parses it.
func (p *poller) read(c *pollConn) error {
	n, err := unix.Read(c.fd, p.scratch[:])
	if err == unix.EAGAIN {
		return nil
	}
	if err != nil || n == 0 {
		return fmt.Errorf("poller: read: %d bytes, %v", n, err)
	}
	c.pending = append(c.pending, p.scratch[:n]...)
	done, err := c.parse(time.Now())
	if err != nil {
		return err
	}
	if done {
		p.inFlight--
		if c.events >= p.want {
			p.complete++
		}
		p.idle = append(p.idle, c)
	}
	return nil
}

var crlf = []byte("\r\n")

// parse takes what it can of pending: the headers, then the chunks' sizes
// and data, counting the data: lines; done at the last chunk.
func (c *pollConn) parse(now time.Time) (done bool, err error) {
	b := c.pending
	defer func() { c.pending = append(c.pending[:0], b...) }()
	for len(b) > 0 {
		switch c.state {
		case inHeaders:
			i := bytes.Index(b, []byte("\r\n\r\n"))
			if i < 0 {
				return false, nil
			}
			if !bytes.HasPrefix(b, []byte("HTTP/1.1 200")) || !bytes.Contains(bytes.ToLower(b[:i]), []byte("transfer-encoding: chunked")) {
				return false, fmt.Errorf("poller: not a 200 with a chunked body: %q", b[:i])
			}
			b, c.state = b[i+4:], inChunkSize
		case inChunkSize:
			i := bytes.Index(b, crlf)
			if i < 0 {
				return false, nil
			}
			size, err := strconv.ParseUint(string(bytes.TrimSpace(b[:i])), 16, 31)
			if err != nil {
				return false, fmt.Errorf("poller: chunk size %q: %w", b[:i], err)
			}
			b, c.left, c.state = b[i+2:], int(size), inChunkData
			if size == 0 {
				c.state = inLastChunk
			}
		case inChunkData:
			k := min(c.left, len(b))
			c.count(b[:k], now)
			b, c.left = b[k:], c.left-k
			if c.left == 0 {
				c.state = inChunkEnd
			}
		case inChunkEnd, inLastChunk:
			if len(b) < 2 {
				return false, nil
			}
			if !bytes.HasPrefix(b, crlf) {
				return false, fmt.Errorf("poller: no CRLF after a chunk")
			}
			b = b[2:]
			if c.state == inLastChunk {
				return true, nil
			}
			c.state = inChunkSize
		}
	}
	return false, nil
}

// count counts the lines of data that begin "data:", stamping each.
func (c *pollConn) count(data []byte, now time.Time) {
	const prefix = "data:"
	for _, ch := range data {
		switch {
		case ch == '\n':
			c.matched = 0
		case c.matched < len(prefix) && ch == prefix[c.matched]:
			c.matched++
			if c.matched == len(prefix) {
				c.stamps[c.events%len(c.stamps)] = now
				c.events++
				c.matched = len(prefix) + 1
			}
		default:
			c.matched = len(prefix) + 1
		}
	}
}
