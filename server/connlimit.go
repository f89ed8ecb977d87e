package server

import (
	"net"
	"sync"
)

// LimitConnsPerAddress wraps a listener so one client address holds at most
// n open connections; a connection beyond that is closed at once. Without
// it, one address can open connections until the process runs out of file
// descriptors (each also holds a goroutine and buffers).
func LimitConnsPerAddress(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &connLimiter{Listener: ln, max: n, open: map[string]int{}}
}

type connLimiter struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int // address -> open connections; entries at 0 are removed
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			host = c.RemoteAddr().String()
		}
		l.mu.Lock()
		full := l.open[host] >= l.max
		if !full {
			l.open[host]++
		}
		l.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *connLimiter) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

// limitedConn gives its place back once, however often it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
