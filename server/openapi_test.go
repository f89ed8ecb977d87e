package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/responses"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// apiRecorder keeps answers the handler tests got through testEnv.serve,
// a few per route and status, so that TestMain can validate them against
// the OpenAPI document once every test has run.
type apiRecorder struct {
	mu       sync.Mutex
	byKey    map[string][]apiExchange
	statuses map[string]bool // "GET /projects/{id} 200"
}

type apiExchange struct {
	method, url, pattern string
	status               int
	header               http.Header
	body                 []byte
}

// apiKeep is how many answers are kept per route and status: enough to see
// different shapes (empty lists, filled ones), few enough to stay cheap.
const apiKeep = 8

var apiResponses = &apiRecorder{byKey: map[string][]apiExchange{}, statuses: map[string]bool{}}

// record is called by testEnv.serve; pattern is the matched route's
// ("unmatched" for none: those answers describe no route).
func (a *apiRecorder) record(req *http.Request, pattern string, r *testResponse) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return
	}
	key := apiKey(method, path) + " " + fmt.Sprint(r.Status)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses[key] = true
	if len(a.byKey[key]) >= apiKeep || len(r.Body) > 1<<20 {
		return
	}
	a.byKey[key] = append(a.byKey[key], apiExchange{
		method: req.Method, url: req.URL.String(), pattern: apiKey(method, path), status: r.Status,
		header: r.Header.Clone(), body: bytes.Clone(r.Body),
	})
}

// checkRecorded validates every kept answer against the document: its
// status must be described for the route and its body must match the
// schema. It returns one line per failure.
func (a *apiRecorder) checkRecorded() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := apiDocument()
	if err != nil {
		return []string{err.Error()}
	}
	doc, err := libopenapi.NewDocument(d.json)
	if err != nil {
		return []string{err.Error()}
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return []string{err.Error()}
	}
	rv := responses.NewResponseBodyValidator(&model.Model)
	var fails []string
	keys := make([]string, 0, len(a.byKey))
	for k := range a.byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, x := range a.byKey[k] {
			_, path, _ := strings.Cut(x.pattern, " ")
			item := model.Model.Paths.PathItems.GetOrZero(path)
			req := httptest.NewRequest(x.method, x.url, nil)
			resp := &http.Response{StatusCode: x.status, Header: x.header, Body: io.NopCloser(bytes.NewReader(x.body)), Request: req}
			if ok, errs := rv.ValidateResponseBodyWithPathItem(req, resp, item, path); !ok {
				for _, e := range errs {
					msg := e.Message
					for _, se := range e.SchemaValidationErrors {
						msg += "; " + se.FieldPath + ": " + se.Reason
					}
					body := string(x.body)
					if len(body) > 300 {
						body = body[:300] + "..."
					}
					fails = append(fails, fmt.Sprintf("%s %d: %s\n    body: %s", x.pattern, x.status, msg, body))
				}
				break // one failure per route and status is enough to read
			}
		}
	}
	return fails
}

// TestOpenAPIDocument: every route is described, every description is a
// route, and the document is valid OpenAPI 3.1.
func TestOpenAPIDocument(t *testing.T) {
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.problems {
		t.Errorf("server/openapi.yaml: %s", p)
	}
	doc, err := libopenapi.NewDocument(d.json)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document invalid: %s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s: %s", se.FieldPath, se.Reason)
			}
		}
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	// Every route of the table is in the document under its public path,
	// with each path parameter declared.
	ids := map[string]string{}
	for _, r := range (&Server{}).routes() {
		p := publicPath(r.path)
		item := model.Model.Paths.PathItems.GetOrZero(p)
		if item == nil {
			t.Errorf("%s %s: path %s missing", r.method, r.path, p)
			continue
		}
		op := item.GetOperations().GetOrZero(strings.ToLower(r.method))
		if op == nil {
			t.Errorf("%s %s: operation missing", r.method, p)
			continue
		}
		if prev, dup := ids[op.OperationId]; dup {
			t.Errorf("operationId %s of %s %s is also %s's", op.OperationId, r.method, p, prev)
		}
		ids[op.OperationId] = r.method + " " + p
		for _, m := range routeParam.FindAllStringSubmatch(r.path, -1) {
			if !slices.ContainsFunc(op.Parameters, func(pa *v3.Parameter) bool { return pa.Name == m[1] && pa.In == "path" }) {
				t.Errorf("%s %s: no parameters, want %s", r.method, p, m[1])
			}
		}
		// Every error answer carries the error body.
		for code, resp := range op.Responses.Codes.FromOldest() {
			if code >= "400" {
				if resp.Content.GetOrZero("text/html") != nil {
					continue // the sign-in page's errors are pages (html_errors)
				}
				mt := resp.Content.GetOrZero("application/json")
				if mt == nil || mt.Schema == nil || !strings.HasSuffix(mt.Schema.GetReference(), "/Error") && !strings.HasSuffix(mt.Schema.GetReference(), "/OAuthError") {
					t.Errorf("%s %s: %s does not carry the error body", r.method, p, code)
				}
			}
		}
	}
}

// TestOpenAPIServed: GET /openapi.json is public and cacheable.
func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t)
	r := e.must(http.StatusOK, nil, "GET", "/openapi.json", nil)
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("not an OpenAPI 3.1 document: %v %.100s", err, r.Body)
	}
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "public") {
		t.Errorf("Cache-Control %q, want public", cc)
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req := httptest.NewRequest("GET", "/openapi.json", nil)
	req.Header.Set("If-None-Match", etag)
	if r := e.serve(req); r.Status != http.StatusNotModified || len(r.Body) != 0 {
		t.Fatalf("revalidation: %d %.100s", r.Status, r.Body)
	}
	// The users' path is published as clients use it, not as routed.
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/users/{id}", "/organisations/images/{hash}", "/projects/{id}", "/openapi.json"} {
		if paths[p] == nil {
			t.Errorf("path %s missing", p)
		}
	}
	for p := range paths {
		if strings.HasPrefix(p, "/internal/") || strings.Contains(p, ":") {
			t.Errorf("path %s is the router's, not the client's", p)
		}
	}
}

// TestOpenAPIChecksAnswers: the recorded-answer check fails an
// undescribed status and a body that does not match its schema (the check
// every handler test's answers go through in TestMain).
func TestOpenAPIChecksAnswers(t *testing.T) {
	rec := &apiRecorder{byKey: map[string][]apiExchange{}, statuses: map[string]bool{}}
	req := httptest.NewRequest("GET", "/healthz", nil)
	h := http.Header{"Content-Type": {"application/json"}}
	rec.record(req, "GET /healthz", &testResponse{Status: 200, Header: h, Body: []byte(`{"status":"ok"}`)})
	if f := rec.checkRecorded(); len(f) != 0 {
		t.Fatalf("a described answer failed: %v", f)
	}
	rec.record(req, "GET /healthz", &testResponse{Status: 418, Header: h, Body: []byte(`{"code":418,"message":"tea"}`)})
	rec.record(httptest.NewRequest("GET", "/users/@me", nil), "GET /users/@me", &testResponse{Status: 401, Header: h, Body: []byte(`{"message":"no code"}`)})
	f := rec.checkRecorded()
	if len(f) != 2 || !strings.Contains(f[0], "418") || !strings.Contains(f[1], "401") {
		t.Fatalf("want the 418 and the 401 without code refused, got %q", f)
	}
}

// checkAPIAnswers runs after the package's tests (TestMain): every answer a
// handler test got must be described. Skipped when tests failed (their
// answers may be anything) or when told to (WORKSPACE_SKIP_OPENAPI_CHECK=1).
func checkAPIAnswers(code int) int {
	if f := os.Getenv("WORKSPACE_OPENAPI_OBSERVED"); f != "" {
		// Every route and status the tests saw, for whoever edits openapi.yaml.
		keys := make([]string, 0, len(apiResponses.statuses))
		for k := range apiResponses.statuses {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		_ = os.WriteFile(f, []byte(strings.Join(keys, "\n")+"\n"), 0o644)
	}
	if code != 0 || os.Getenv("WORKSPACE_SKIP_OPENAPI_CHECK") != "" {
		return code
	}
	fails := apiResponses.checkRecorded()
	if len(fails) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "FAIL: %d answers of handler tests do not match server/openapi.yaml (docs/operations.md, API description):\n", len(fails))
	for _, f := range fails {
		fmt.Fprintln(os.Stderr, "  "+f)
	}
	return 1
}
