package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
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

// JSONProtocolErrors wraps a listener so the answers net/http writes by
// itself, before any handler runs (431 for headers over the limit, 400 for
// a request it cannot parse), carry the JSON error body every other answer
// has (decisions.md) instead of plain text. net/http writes them in one
// Write with fixed plain-text headers, which is what is recognised here.
func JSONProtocolErrors(ln net.Listener) net.Listener {
	return jsonErrorListener{ln}
}

type jsonErrorListener struct{ net.Listener }

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c}, nil
}

type jsonErrorConn struct{ net.Conn }

// netHTTPErrorHeaders follows the status line of net/http's own error
// answers (net/http/server.go, errorHeaders).
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 4")) {
		return c.Conn.Write(p)
	}
	line, _, ok := bytes.Cut(p, []byte(netHTTPErrorHeaders))
	if !ok || bytes.IndexByte(line, '\n') >= 0 || len(line) < 12 {
		return c.Conn.Write(p)
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return c.Conn.Write(p)
	}
	body, _ := json.Marshal(errorBody{Message: http.StatusText(code) + "."})
	resp := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
	if _, err := c.Conn.Write([]byte(resp)); err != nil {
		return 0, err
	}
	return len(p), nil
}
