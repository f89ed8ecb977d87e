package server

import (
	"context"
	"database/sql"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"workspace/db"
)

// Prometheus metrics (docs/operations.md, Metrics). They are served by
// Metrics() on a listener of their own (serve --metrics-addr), never on the
// API's unless asked. Requests are labelled by route pattern, never by the
// path, so ids cannot blow up the series.

type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	batchMembers prometheus.Histogram
	batchSeconds prometheus.Histogram
}

// routeKey carries the matched route pattern from the router back to the
// request's metrics.
type routeKey struct{}

type routeSlot struct{ pattern string }

func newMetrics(store *db.Store) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workspace_http_requests_total", Help: "HTTP requests answered, by route pattern and status code.",
	}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "workspace_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route pattern.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route"})
	m.batchMembers = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "workspace_db_write_batch_transactions", Help: "Write transactions committed together in one group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
	})
	m.batchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "workspace_db_write_batch_duration_seconds", Help: "Time a group commit took, fsync included.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	})
	m.reg.MustRegister(m.requests, m.latency, m.batchMembers, m.batchSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, p := range []struct {
		name string
		pool *sql.DB
	}{{"reader", store.Reader}, {"writer", store.Writer}} {
		pool := p.pool
		labels := prometheus.Labels{"pool": p.name}
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "workspace_db_pool_waits_total",
				Help: "Times a query waited for a free SQLite connection.", ConstLabels: labels},
				func() float64 { return float64(pool.Stats().WaitCount) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "workspace_db_pool_wait_seconds_total",
				Help: "Time spent waiting for a free SQLite connection.", ConstLabels: labels},
				func() float64 { return pool.Stats().WaitDuration.Seconds() }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "workspace_db_pool_in_use",
				Help: "SQLite connections in use.", ConstLabels: labels},
				func() float64 { return float64(pool.Stats().InUse) }),
		)
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "workspace_webhook_queue_depth",
			Help: "Integration deliveries waiting to be sent."},
			func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				n, err := store.R.IntegrationDeliveriesPending(ctx)
				if err != nil {
					return math.NaN()
				}
				return float64(n)
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "workspace_last_backup_age_seconds",
			Help: "Seconds since the newest scheduled backup finished; NaN before the first."},
			func() float64 {
				t := db.LastBackup()
				if t.IsZero() {
					return math.NaN()
				}
				return time.Since(t).Seconds()
			}),
	)
	store.ObserveBatches(func(members int, took time.Duration) {
		m.batchMembers.Observe(float64(members))
		m.batchSeconds.Observe(took.Seconds())
	})
	return m
}

// observe records one answered request.
func (m *metrics) observe(route string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(took.Seconds())
}

// Metrics serves the metrics in the Prometheus text format.
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

// readyz: 200 when the database takes a write and every migration is
// applied; 503 naming what is wrong otherwise (load balancers and
// orchestrators hold traffic back until it is 200).
func (s *Server) readyz(rq *request) error {
	pending, err := db.PendingMigrations(rq.ctx, s.store.Reader)
	if err != nil {
		return errorf(http.StatusServiceUnavailable, "The database cannot be read.")
	}
	if pending > 0 {
		return errorf(http.StatusServiceUnavailable, "%d migrations are not applied.", pending)
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		return q.MetaPut(rq.ctx, db.MetaPutParams{Key: "ready_checked_at", Value: s.nowText()})
	})
	if err != nil {
		s.log.ErrorContext(rq.ctx, "readiness write failed", "err", err)
		return errorf(http.StatusServiceUnavailable, "The database does not take writes.")
	}
	return rq.json(http.StatusOK, map[string]string{"status": "ready"})
}
