package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSlowBodyIsCutOff: a client that sends headers and then trickles its
// body is answered 408 (or cut off) once the body deadline passes, instead of
// holding the connection for as long as it likes.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.BodyTimeout = 300 * time.Millisecond })
	ts := httptest.NewServer(e.srv)
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 100 bytes promised, 10 sent, then nothing: as a byte-a-second client
	// looks to the server between its bytes.
	fmt.Fprintf(conn, "POST /auth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\":")
	// The bound here only keeps a broken server from hanging the test.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the server still waits for the slow body after 30 s")
		}
		return // the server closed the connection: cut off, as wanted
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
}

func TestBodyDeadlineGrowsWithSize(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{MaxBody: 32 << 20}}
	for _, tc := range []struct {
		n    int64
		want time.Duration
	}{
		{100, time.Minute},
		{64 << 10, time.Minute + time.Second},
		{10 << 20, time.Minute + 160*time.Second},
		{-1, time.Minute + 512*time.Second}, // unknown length: the largest allowed body
	} {
		if got := s.bodyDeadline(tc.n); got != tc.want {
			t.Errorf("bodyDeadline(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestConnsPerAddress: one address holds at most n connections; the next is
// closed at once, and a closed one gives its place back.
func TestConnsPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Listener = LimitConnsPerAddress(ts.Listener, 2)
	ts.Start()
	defer ts.Close()
	addr := ts.Listener.Addr().String()
	get := func(c net.Conn) error {
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	var held []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := get(c); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if err := get(third); err == nil {
		t.Fatalf("a third connection from one address was served, want it closed")
	} else if strings.Contains(err.Error(), "status") {
		t.Fatalf("third connection: %v, want closed", err)
	}
	held[0].Close()
	// The server notices the close asynchronously: poll with a deadline.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		err = get(c)
		c.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a place freed by a closed connection was never given back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProtocolErrorsAreJSON: the answers net/http writes before any handler
// (headers over the limit: 431; an unparsable request: 400) carry the JSON
// error body too.
func TestProtocolErrorsAreJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Listener = JSONProtocolErrors(ts.Listener)
	ts.Config.MaxHeaderBytes = 4 << 10
	ts.Start()
	defer ts.Close()
	for _, tc := range []struct {
		name, request string
		status        int
	}{
		{"headers over the limit", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 431},
		{"unparsable request", "GET /healthz HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprint(conn, tc.request)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			r := &testResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, b)
			}
			assertErrorBody(t, r)
		})
	}
	// Ordinary answers pass through untouched.
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
}
