package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// LogBuffer batches log lines into few writes: one write(2) per request
// line cost the loopback benchmark about as much as the request itself.
// Lines reach the underlying writer at least every interval; lines at Warn
// and above (and Close) flush at once, so errors are never held back and
// a crash loses at most one interval of request lines.
type LogBuffer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// NewLogBuffer buffers w and flushes it every interval until Close.
func NewLogBuffer(w io.Writer, interval time.Duration) *LogBuffer {
	b := &LogBuffer{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = b.Flush()
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *LogBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close stops the flusher and writes out the rest.
func (b *LogBuffer) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}

// Handler is a JSON slog handler over the buffer that flushes after every
// record at Warn or above.
func (b *LogBuffer) Handler(opts *slog.HandlerOptions) slog.Handler {
	return flushingHandler{Handler: slog.NewJSONHandler(b, opts), buf: b}
}

type flushingHandler struct {
	slog.Handler
	buf *LogBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.buf.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithAttrs(attrs), buf: h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{Handler: h.Handler.WithGroup(name), buf: h.buf}
}
