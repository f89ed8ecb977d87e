package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	vcontent "github.com/pb33f/libopenapi-validator/content"
	"github.com/pb33f/libopenapi-validator/requests"
	"github.com/pb33f/libopenapi-validator/responses"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"go.yaml.in/yaml/v3"
)

// apiRecorder keeps answers the handler tests got through testEnv.serve,
// a few per route and status, and the bodies of requests that succeeded, a
// few distinct ones per route, so that TestMain can validate them against
// the OpenAPI document once every test has run.
type apiRecorder struct {
	mu       sync.Mutex
	byKey    map[string][]apiExchange
	statuses map[string]bool // "GET /projects/{id} 200"
	requests map[string][]apiRequest
}

// apiRequest is a request body a test sent that got a 2xx answer. Only
// those are checked: a test that sends a malformed body on purpose gets a
// 4xx, and its body is not meant to match the description.
type apiRequest struct {
	method, url, pattern, contentType string
	body                              []byte
}

// apiKeepRequests is how many distinct bodies are kept per route.
const apiKeepRequests = 16

func newAPIRecorder() *apiRecorder {
	return &apiRecorder{byKey: map[string][]apiExchange{}, statuses: map[string]bool{}, requests: map[string][]apiRequest{}}
}

// requestBody reads a request's body so that it can be recorded, and puts
// an equal one back for the handler. Bodies of unknown length (streams a
// test feeds while the handler reads) and large ones are left alone.
func requestBody(req *http.Request) []byte {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 || req.ContentLength > 1<<20 {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
	if err != nil || string(bytes.TrimSpace(b)) == "null" {
		// A JSON null reads as no body (decodeJSON leaves the fields
		// unset); tests send it where a route reads none.
		return nil
	}
	return b
}

// errReader gives the handler the read error the test's body had, if any.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
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

var apiResponses = newAPIRecorder()

// record is called by testEnv.serve with the request's body (requestBody);
// pattern is the matched route's ("unmatched" for none: those answers
// describe no route).
func (a *apiRecorder) record(req *http.Request, reqBody []byte, pattern string, r *testResponse) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return
	}
	key := apiKey(method, path) + " " + fmt.Sprint(r.Status)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses[key] = true
	if pk := apiKey(method, path); r.Status >= 200 && r.Status < 300 && len(reqBody) > 0 && len(a.requests[pk]) < apiKeepRequests &&
		!slices.ContainsFunc(a.requests[pk], func(x apiRequest) bool { return bytes.Equal(x.body, reqBody) }) {
		a.requests[pk] = append(a.requests[pk], apiRequest{method: req.Method, url: req.URL.String(), pattern: pk,
			contentType: req.Header.Get("Content-Type"), body: reqBody})
	}
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
// schema; and every kept request body (of a request answered 2xx) must
// match the route's request body, which must be described. It returns one
// line per failure.
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
	fails = append(fails, a.checkRequests(&model.Model)...)
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

// checkRequests validates the kept request bodies (a.mu held) against the
// routes' described bodies. A body sent to a route that describes none is
// not checked: handlers that read no body ignore one, and tests send junk
// bodies to every route of an area to show it (TestOpenAPINamedBodies and
// review keep a route that reads a body from describing none).
func (a *apiRecorder) checkRequests(model *v3.Document) []string {
	bv := requests.NewRequestBodyValidator(model, config.WithBodyDecoder("application/x-www-form-urlencoded", vcontent.DecoderFunc(decodeForm)))
	var fails []string
	keys := make([]string, 0, len(a.requests))
	for k := range a.requests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, x := range a.requests[k] {
			_, path, _ := strings.Cut(x.pattern, " ")
			item := model.Paths.PathItems.GetOrZero(path)
			req := httptest.NewRequest(x.method, x.url, bytes.NewReader(x.body))
			if mt, _, _ := mime.ParseMediaType(x.contentType); strings.HasSuffix(mt, "+json") {
				// decodeJSON reads any +json type as JSON; the description
				// says application/json.
				req.Header.Set("Content-Type", "application/json")
			} else if x.contentType != "" {
				req.Header.Set("Content-Type", x.contentType)
			}
			if ok, errs := bv.ValidateRequestBodyWithPathItem(req, item, path); !ok {
				for _, e := range errs {
					msg := e.Message
					for _, se := range e.SchemaValidationErrors {
						msg += "; " + se.FieldPath + ": " + se.Reason
					}
					body := string(x.body)
					if len(body) > 300 {
						body = body[:300] + "..."
					}
					fails = append(fails, fmt.Sprintf("%s request (answered 2xx): %s\n    body: %s", x.pattern, msg, body))
				}
				break // one failure per route is enough to read
			}
		}
	}
	return fails
}

// decodeForm reads a form body as the handlers do (url.Values.Get: the
// first value of each name) for the schema check. The library's own form
// decoder applies OpenAPI's reserved-character rule, which refuses an
// e-mail address's percent-encoded @.
func decodeForm(in *vcontent.DecodeInput) (any, error) {
	b, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k := range v {
		out[k] = v.Get(k)
	}
	return out, nil
}

// TestOpenAPIDocument: every route is described, every description is a
// route, and the document is valid OpenAPI 3.1.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	rec := newAPIRecorder()
	req := httptest.NewRequest("GET", "/healthz", nil)
	h := http.Header{"Content-Type": {"application/json"}}
	rec.record(req, nil, "GET /healthz", &testResponse{Status: 200, Header: h, Body: []byte(`{"status":"ok"}`)})
	if f := rec.checkRecorded(); len(f) != 0 {
		t.Fatalf("a described answer failed: %v", f)
	}
	rec.record(req, nil, "GET /healthz", &testResponse{Status: 418, Header: h, Body: []byte(`{"code":418,"message":"tea"}`)})
	rec.record(httptest.NewRequest("GET", "/users/@me", nil), nil, "GET /users/@me", &testResponse{Status: 401, Header: h, Body: []byte(`{"message":"no code"}`)})
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

// TestOpenAPIChecksRequests: a request body that got a 2xx answer must
// match the route's described body; a refused request (4xx) is not
// checked, so tests may send malformed bodies on purpose.
func TestOpenAPIChecksRequests(t *testing.T) {
	t.Parallel()
	h := http.Header{"Content-Type": {"application/json"}}
	created := &testResponse{Status: 201, Header: h, Body: []byte(`{"id":"1","name":"Acme","description":"","member_count":1,"created_at":"2026-11-25T00:00:00.000Z","owned_by":{"id":"2"},"is_deleted":false}`)}
	post := func(body string) *http.Request {
		r := httptest.NewRequest("POST", "/organisations", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	rec := newAPIRecorder()
	rec.record(post(`{"name":"Acme"}`), []byte(`{"name":"Acme"}`), "POST /organisations", created)
	rec.record(post(`{"name":5}`), []byte(`{"name":5}`), "POST /organisations",
		&testResponse{Status: 400, Header: h, Body: []byte(`{"code":400,"message":"bad","errors":{"name":"must be a string"}}`)})
	if f := rec.checkRecorded(); len(f) != 0 {
		t.Fatalf("a valid body and a refused one failed: %v", f)
	}
	rec.record(post(`{"name":5}`), []byte(`{"name":5}`), "POST /organisations", created)
	f := rec.checkRecorded()
	if len(f) != 1 || !strings.Contains(f[0], "POST /organisations request") || !strings.Contains(f[0], "name") {
		t.Fatalf("want the wrong type refused, naming the field, got %q", f)
	}
}

// TestOpenAPINamedBodies: every JSON or form body of openapi.yaml, request
// or answer, names a schema of the schemas block (Name or [Name]), so that
// a route's description says what its handler reads and answers; a bare
// object, array or inline schema is refused (docs/handlers.md, step 6).
// Other media types (files, CSV, HTML, event streams) may be described
// inline.
func TestOpenAPINamedBodies(t *testing.T) {
	t.Parallel()
	var src apiSource
	if err := yaml.Unmarshal(openAPISource, &src); err != nil {
		t.Fatal(err)
	}
	n := 0
	for key, op := range src.Operations {
		check := func(what string, v any) {
			if v == nil {
				return
			}
			if m, ok := v.(map[string]any); ok && isMediaTypes(m) {
				for mt, s := range m {
					if mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-www-form-urlencoded" {
						if !namesSchema(src, s) {
							n++
							t.Errorf("%s: %s (%s) is %v, want a schema name of the schemas block", key, what, mt, s)
						}
					}
				}
				return
			}
			if !namesSchema(src, v) {
				n++
				t.Errorf("%s: %s is %v, want a schema name of the schemas block", key, what, v)
			}
		}
		check("body", op.Body)
		for status, b := range op.OK {
			check(fmt.Sprint(status), b)
		}
	}
	if n > 0 {
		t.Logf("%d bodies without a named schema", n)
	}
}

func isMediaTypes(m map[string]any) bool {
	for k := range m {
		if !strings.Contains(k, "/") {
			return false
		}
	}
	return len(m) > 0
}

// namesSchema: v is "Name", "[Name]" or [Name] with Name in the schemas
// block.
func namesSchema(src apiSource, v any) bool {
	if l, ok := v.([]any); ok && len(l) == 1 {
		v = l[0]
	}
	s, ok := v.(string)
	if !ok {
		return false
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	_, ok = src.Schemas[s]
	return ok
}
