package dbtest

import (
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MemPeak samples the Go heap (live objects) every 5 ms until ended and
// resets the process's peak RSS first (Linux clear_refs), so both peaks are
// the measured phase's: the sync benchmarks' memory figures (README).
type MemPeak struct {
	stop chan struct{}
	done chan struct{}
	heap atomic.Uint64
}

// StartMemPeak starts sampling.
func StartMemPeak() *MemPeak {
	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	m := &MemPeak{stop: make(chan struct{}), done: make(chan struct{})}
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(m.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			rtmetrics.Read(s)
			if v := s[0].Value.Uint64(); v > m.heap.Load() {
				m.heap.Store(v)
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// End stops sampling and returns the peaks in MB: the heap, and the
// process's resident set (-1 where /proc cannot say).
func (m *MemPeak) End() (heapMB, rssMB float64) {
	close(m.stop)
	<-m.done
	return float64(m.heap.Load()) / (1 << 20), procStatusMB("VmHWM:")
}

// RSSNow is the process's resident set in MB (-1 where /proc cannot say).
func RSSNow() float64 { return procStatusMB("VmRSS:") }

// procStatusMB reads a kB line of /proc/self/status, in MB.
func procStatusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			if kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64); err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}
