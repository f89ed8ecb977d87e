package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func scrape(t *testing.T, e *testEnv) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.srv.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 {
		t.Fatalf("metrics: status %d", rec.Code)
	}
	return string(b)
}

// TestMetrics: requests are counted by route pattern (never by path),
// group commits and pools are measured, and the gauges answer.
func TestMetrics(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	e.must(200, f.alice, "GET", "/users/@me", nil)
	e.must(200, f.bob, "GET", "/organisations/"+f.acme, nil)
	e.must(403, f.mallory, "GET", "/organisations/"+f.acme, nil)
	e.must(404, f.alice, "GET", "/no/such/path/123", nil)
	e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/locations", map[string]any{"name": "Yard"})
	out := scrape(t, e)
	for _, want := range []string{
		`workspace_http_requests_total{code="200",route="GET /users/@me"} 1`,
		`workspace_http_requests_total{code="200",route="GET /organisations/:id"} 1`,
		`workspace_http_requests_total{code="403",route="GET /organisations/:id"} 1`,
		`workspace_http_requests_total{code="404",route="unmatched"} 1`,
		`workspace_http_request_duration_seconds_count{route="POST /organisations/:id/locations"} 1`,
		`workspace_db_write_batch_transactions_count`,
		`workspace_db_write_batch_duration_seconds_bucket`,
		`workspace_db_pool_waits_total{pool="reader"}`,
		`workspace_db_pool_in_use{pool="writer"}`,
		`workspace_webhook_queue_depth 0`,
		`workspace_last_backup_age_seconds`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(out, f.acme) {
		t.Error("a path with an id became a label")
	}
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(t, []scenario{
		{"ready", nil, "GET", "/readyz", nil, 200, wantKey("status", "ready")},
		{"alive", nil, "GET", "/healthz", nil, 200, nil},
	})
	if _, err := e.write(`DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	e.run(t, []scenario{
		{"a migration not applied", nil, "GET", "/readyz", nil, 503, nil},
	})
}
