package server

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// openapi.yaml holds what cannot be derived from the route table: per
// operation a summary, the query parameters, the request body, the success
// answers and the error statuses, and the schemas of the bodies. Paths,
// path parameters, security and the errors every route can give are
// generated from the table (docs/operations.md, "API description").
//
//go:embed openapi.yaml
var openAPISource []byte

// apiSource is the shape of openapi.yaml.
type apiSource struct {
	Info       map[string]any          `yaml:"info"`
	Operations map[string]apiOperation `yaml:"operations"`
	Parameters map[string]any          `yaml:"parameters"`
	Schemas    map[string]any          `yaml:"schemas"`
}

// apiOperation is one operation of openapi.yaml.
type apiOperation struct {
	Summary string `yaml:"summary"`
	// Description says what the body's schema cannot: rules that depend
	// on stored objects (a type's ephemerality) or on other fields.
	Description string `yaml:"description"`
	// Query names query parameters: a name of the parameters block, or
	// any other name as an optional string.
	Query []string `yaml:"query"`
	// Body is the JSON request body's schema (a schema name, [Name] for an
	// array, or an inline schema); or a map of media type to schema.
	Body any `yaml:"body"`
	// OK maps each success status to its body: a schema name, [Name], an
	// inline schema, a map of media type to schema, or null for no body.
	// Empty only for a route that always refuses (501).
	OK map[int]any `yaml:"ok"`
	// Errors lists the error statuses beyond the generated ones; absent,
	// an authenticated route gives 400, 403 and 404.
	Errors *[]int `yaml:"errors"`
	// OAuthErrors are error statuses answered with RFC 6749's error body
	// ({error, error_description}) instead of ours: the OAuth endpoints'.
	OAuthErrors []int `yaml:"oauth_errors"`
	// HTMLErrors are error statuses answered with an HTML page: the
	// browser-facing sign-in form's.
	HTMLErrors []int `yaml:"html_errors"`
}

// publicPath is the path a client uses for a route: two routes are held
// under internal paths because httprouter cannot put a wildcard beside
// static segments (routes.go, orgidentity.go).
func publicPath(p string) string {
	switch {
	case strings.HasPrefix(p, userByIDPath):
		p = "/users/" + strings.TrimPrefix(p, userByIDPath)
	case strings.HasPrefix(p, orgImagesPath):
		p = "/organisations/images/" + strings.TrimPrefix(p, orgImagesPath)
	}
	return routeParam.ReplaceAllString(p, "{$1}")
}

var (
	routeParam = regexp.MustCompile(`[:*]([A-Za-z_]+)`)
	schemaRef  = regexp.MustCompile(`"#/components/schemas/([^"]+)"`)
)

// apiKey is how openapi.yaml names a route: "GET /projects/{id}".
func apiKey(method, path string) string { return method + " " + publicPath(path) }

// apiDocument is the document of the route table, built once (it depends
// only on the binary). Its problems are routes without a description and
// descriptions of no route; the document leaves those out and
// TestOpenAPIDocument fails on them.
func apiDocument() (apiDoc, error) {
	apiDocOnce.Do(func() {
		doc, problems, err := buildOpenAPI((&Server{}).routes())
		apiDocOnce.doc, apiDocOnce.err = apiDoc{doc, etagOf(doc), problems}, err
	})
	return apiDocOnce.doc, apiDocOnce.err
}

var apiDocOnce struct {
	sync.Once
	doc apiDoc
	err error
}

type apiDoc struct {
	json     []byte
	etag     string
	problems []string
}

// buildOpenAPI makes the OpenAPI 3.1 document of the routes from the
// embedded description. Every route should be described and every
// description should name a route: problems lists where not.
func buildOpenAPI(routes []route) (doc []byte, problems []string, err error) {
	var src apiSource
	if err := yaml.Unmarshal(openAPISource, &src); err != nil {
		return nil, nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	paths := map[string]map[string]any{}
	seen := map[string]bool{}
	for _, r := range routes {
		key := apiKey(r.method, r.path)
		op, ok := src.Operations[key]
		if !ok || len(op.OK) == 0 && (op.Errors == nil || len(*op.Errors) == 0) {
			problems = append(problems, "no answer described for "+key)
			continue
		}
		seen[key] = true
		p := publicPath(r.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		o, err := op.render(r, p, src.Parameters)
		if err != nil {
			return nil, nil, fmt.Errorf("openapi.yaml %s: %w", key, err)
		}
		paths[p][strings.ToLower(r.method)] = o
	}
	for key := range src.Operations {
		if !seen[key] {
			problems = append(problems, "described but no route: "+key)
		}
	}
	schemas := map[string]any{"Error": errorSchema, "OAuthError": oauthErrorSchema}
	for k, v := range src.Schemas {
		schemas[k] = v
	}
	out := map[string]any{
		"openapi": "3.1.0",
		"info":    src.Info,
		"paths":   paths,
		"components": map[string]any{
			"schemas":    schemas,
			"parameters": src.Parameters,
			"responses":  errorResponses(),
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
					"description": "An access token from /oauth/token (or an accepted external issuer's)."},
			},
		},
	}
	doc, err = json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, nil, err
	}
	// A short form naming no schema would make the document unusable.
	for _, m := range schemaRef.FindAllSubmatch(doc, -1) {
		if _, ok := schemas[string(m[1])]; !ok {
			problems = append(problems, "no schema named "+string(m[1]))
		}
	}
	slices.Sort(problems)
	return doc, slices.Compact(problems), nil
}

// errorSchema is the one error body (design/decisions.md): code, message
// and, for invalid input, the problem of each named field. Some errors
// carry more keys (a document change's conflicts).
var errorSchema = map[string]any{
	"type":     "object",
	"required": []string{"code", "message"},
	"properties": map[string]any{
		"code":    map[string]any{"type": "integer"},
		"message": map[string]any{"type": "string", "minLength": 1},
		"errors":  map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"reason": map[string]any{"type": "string", "description": "Why an invite cannot be used (POST and GET /invites/{code}), for the app to word: " +
			"invite_not_found, invite_revoked, invite_expired, invite_used, organisation_gone, banned, " +
			"wrong_email (the invite is for an address the caller does not have), email_unconfirmed (the caller has it but has not confirmed it), " +
			"domain_required, domain_restricted, no_seats."},
	},
}

// oauthErrorSchema is RFC 6749's error body, which the OAuth endpoints
// answer (section 5.2): clients of those expect it.
var oauthErrorSchema = map[string]any{
	"type":     "object",
	"required": []string{"error"},
	"properties": map[string]any{
		"error":             map[string]any{"type": "string"},
		"error_description": map[string]any{"type": "string"},
	},
}

// errorStatuses are the error statuses described, each with the error body.
var errorStatuses = map[int]string{
	400: "Invalid input, or a referenced entity is missing or invalid; `errors` names the fields.",
	401: "The bearer token is missing, invalid or expired (WWW-Authenticate says which).",
	403: "The caller lacks the membership or permission this needs, or the state forbids it.",
	404: "The addressed resource does not exist (or is not visible to the caller).",
	405: "The method is not allowed here.",
	409: "The change conflicts with the current state (a duplicate, or a document change that cannot be merged).",
	410: "The resource is gone.",
	412: "A precondition failed.",
	413: "The request body is too large.",
	415: "The body's media type is not accepted.",
	422: "The input is well-formed but cannot be processed.",
	429: "A quota is exhausted, or too many requests.",
	500: "Internal error; the message names the request id.",
	501: "Not implemented.",
	503: "The server is busy receiving bodies (Retry-After), or the request was cancelled.",
	507: "The server's disk is full: nothing was saved; try again after Retry-After (reads go on).",
}

func errorResponses() map[string]any {
	out := map[string]any{}
	for code, desc := range errorStatuses {
		out[strconv.Itoa(code)] = map[string]any{
			"description": desc,
			"content":     map[string]any{"application/json": map[string]any{"schema": ref("Error")}},
		}
	}
	return out
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// schemaOf reads the short forms of openapi.yaml: "Name" is a schema of
// the schemas block, "[Name]" an array of it, "object", "array", "string",
// "binary" (a file) and "any" what they say; a map is an inline schema.
func schemaOf(v any) any {
	switch v {
	case "object", "array", "string":
		return map[string]any{"type": v}
	case "binary":
		return map[string]any{"type": "string", "format": "binary"}
	case "any":
		return map[string]any{}
	}
	if l, ok := v.([]any); ok && len(l) == 1 {
		// [Name] unquoted is a YAML list of one: an array of Name.
		return map[string]any{"type": "array", "items": schemaOf(l[0])}
	}
	if s, ok := v.(string); ok {
		if inner, ok := strings.CutPrefix(s, "["); ok {
			return map[string]any{"type": "array", "items": schemaOf(strings.TrimSuffix(inner, "]"))}
		}
		return ref(s)
	}
	return v
}

// contentOf is a body: JSON with a schema, or a map of media types.
func contentOf(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		isTypes := len(m) > 0
		for k := range m {
			isTypes = isTypes && strings.Contains(k, "/")
		}
		if isTypes {
			out := map[string]any{}
			for mt, s := range m {
				if s == nil {
					out[mt] = map[string]any{}
				} else {
					out[mt] = map[string]any{"schema": schemaOf(s)}
				}
			}
			return out
		}
	}
	return map[string]any{"application/json": map[string]any{"schema": schemaOf(v)}}
}

func (op apiOperation) render(r route, path string, known map[string]any) (map[string]any, error) {
	o := map[string]any{
		"operationId": operationID(r.method, path),
		"tags":        []string{tagOf(path)},
	}
	if op.Summary != "" {
		o["summary"] = op.Summary
	}
	if op.Description != "" {
		o["description"] = op.Description
	}
	var params []any
	for _, m := range routeParam.FindAllStringSubmatch(r.path, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	for _, q := range op.Query {
		if _, ok := known[queryParamName(q)]; ok {
			params = append(params, map[string]any{"$ref": "#/components/parameters/" + queryParamName(q)})
		} else {
			params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": "string"}})
		}
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if op.Body != nil {
		o["requestBody"] = map[string]any{"content": contentOf(op.Body)}
	}
	responses := map[string]any{}
	for code, body := range op.OK {
		if code < 100 || code >= 400 {
			return nil, fmt.Errorf("ok status %d is not a success", code)
		}
		resp := map[string]any{"description": http.StatusText(code)}
		if body != nil {
			resp["content"] = contentOf(body)
		}
		responses[strconv.Itoa(code)] = resp
	}
	errs := []int{}
	if op.Errors != nil {
		errs = append(errs, *op.Errors...)
	} else if r.access.auth {
		errs = append(errs, 400, 403, 404)
	}
	// What any route can answer: an internal error; a route with a token,
	// 401; a route taking a body, 413 above the limit, 415 for a media type
	// it does not read and 503 when the server holds too many bodies at
	// once; and 507 when the disk is full (any route may write: a GET
	// records a sign-in or a delivery too).
	errs = append(errs, 500, 507)
	if r.access.auth {
		errs = append(errs, 401)
	}
	if r.method == "POST" || r.method == "PUT" || r.method == "PATCH" {
		errs = append(errs, 413, 415, 503)
	}
	slices.Sort(errs)
	for _, code := range slices.Compact(errs) {
		desc, ok := errorStatuses[code]
		if !ok {
			return nil, fmt.Errorf("error status %d has no description in errorStatuses", code)
		}
		if slices.Contains(op.HTMLErrors, code) {
			responses[strconv.Itoa(code)] = map[string]any{"description": desc,
				"content": map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}}
			continue
		}
		if slices.Contains(op.OAuthErrors, code) {
			responses[strconv.Itoa(code)] = map[string]any{"description": desc,
				"content": map[string]any{"application/json": map[string]any{"schema": ref("OAuthError")}}}
			continue
		}
		responses[strconv.Itoa(code)] = map[string]any{"$ref": "#/components/responses/" + strconv.Itoa(code)}
	}
	o["responses"] = responses
	if r.access.auth {
		o["security"] = []any{map[string]any{"bearer": []string{}}}
	} else {
		o["security"] = []any{}
	}
	return o, nil
}

// queryParamName maps $filter, $skip and $top to parameter names a
// component key may hold.
func queryParamName(q string) string {
	if n, ok := strings.CutPrefix(q, "$"); ok {
		return "odata_" + n
	}
	return q
}

// tagOf groups operations by their first path segment (users, projects...).
func tagOf(path string) string {
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	t := seg[0]
	if (t == "api" || t == ".well-known") && len(seg) > 1 {
		t = seg[1]
	}
	if t == "" {
		t = "app"
	}
	return t
}

// operationID is the method and the path's words: getProjectsId.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, w := range regexp.MustCompile(`[A-Za-z0-9]+`).FindAllString(path, -1) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	if path == "/" {
		b.WriteString("Root")
	}
	return b.String()
}

// openAPI answers the document; it changes only with the binary, so
// caches may keep it and revalidate with its ETag.
func (s *Server) openAPI(rq *request) error {
	h := rq.w.Header()
	h.Set("Cache-Control", "public, max-age=3600")
	d, err := apiDocument()
	if err != nil {
		return err
	}
	h.Set("ETag", d.etag)
	if match := rq.r.Header.Get("If-None-Match"); match != "" && (match == d.etag || match == "*") {
		rq.w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json")
	rq.w.WriteHeader(http.StatusOK)
	_, err = rq.w.Write(d.json)
	return err
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
