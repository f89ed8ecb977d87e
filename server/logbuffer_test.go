package server

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while the flusher writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogBuffer: info lines wait for the interval (or Close), warnings and
// errors are written at once.
func TestLogBuffer(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	b := NewLogBuffer(&out, time.Hour)
	log := slog.New(b.Handler(nil)).With("svc", "workspace")
	log.Info("request", "path", "/x")
	if out.String() != "" {
		t.Fatalf("an info line was written before the interval: %q", out.String())
	}
	log.Error("internal error", "err", "boom")
	got := out.String()
	if !strings.Contains(got, `"path":"/x"`) || !strings.Contains(got, `"err":"boom"`) || !strings.Contains(got, `"svc":"workspace"`) {
		t.Fatalf("an error did not flush what came before it: %q", got)
	}
	log.Info("last")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"msg":"last"`) {
		t.Fatalf("Close lost a line: %q", out.String())
	}
}

// TestLogBufferFlushesOnItsOwn: the interval writes lines out without any
// further logging.
func TestLogBufferFlushesOnItsOwn(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	b := NewLogBuffer(&out, 10*time.Millisecond)
	defer b.Close()
	slog.New(b.Handler(nil)).Info("request")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "request") {
		if time.Now().After(deadline) {
			t.Fatal("the line never reached the writer")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
