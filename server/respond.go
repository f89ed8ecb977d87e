package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/mail"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"workspace/db"
)

// Error is the one error type handlers return for a client-facing failure;
// writeError turns it into the JSON error body. Anything else is a 500.
type Error struct {
	Status  int
	Code    int
	Message string
	Fields  map[string]string
	// Extra keys of the body beside code and message (the 409 of a
	// document change carries its conflicts).
	Extra map[string]any
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("%d: %s", e.Status, e.Message)
	}
	fields := make([]string, 0, len(e.Fields))
	for f, p := range e.Fields {
		fields = append(fields, f+" "+p)
	}
	slices.Sort(fields)
	return fmt.Sprintf("%d: %s (%s)", e.Status, e.Message, strings.Join(fields, "; "))
}

func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error {
	return errorf(http.StatusBadRequest, format, args...)
}
func forbidden(format string, args ...any) *Error {
	return errorf(http.StatusForbidden, format, args...)
}
func notFound(format string, args ...any) *Error { return errorf(http.StatusNotFound, format, args...) }

// fieldError is a 400 naming one field.
func fieldError(field, problem string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: "The request has invalid fields.", Fields: map[string]string{field: problem}}
}

type errorBody struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Errors  map[string]string `json:"errors,omitempty"`
}

// writeError is the one place that picks a status for an error. Internal
// text never reaches the client: unknown errors are logged with the request
// id and answered with a generic 500.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	// Driver errors are classified here, so a handler that forgot
	// db.Classify still answers a missing row with 404 and a duplicate key
	// with 409, never 500.
	err = db.Classify(err)
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, db.ErrNotFound):
		e = notFound("The resource was not found.")
	case errors.Is(err, db.ErrConflict):
		e = errorf(http.StatusConflict, "The resource already exists.")
	case errors.Is(err, errBodyTooLarge):
		e = errorf(http.StatusRequestEntityTooLarge, "The request body is too large.")
	case db.IsDiskFull(err):
		noteDiskFull(r, err)
		w.Header().Set("Retry-After", strconv.Itoa(diskFullRetrySeconds))
		e = errorf(http.StatusInsufficientStorage, "The server's disk is full, so nothing can be saved right now. Your change was not saved; please try again later.")
	default:
		if r.Context().Err() != nil {
			// The client went away; nobody reads this answer.
			e = errorf(http.StatusServiceUnavailable, "The request was cancelled.")
		} else {
			logger(r.Context()).ErrorContext(r.Context(), "internal error", "err", err, "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path)
			e = errorf(http.StatusInternalServerError, "Internal error (request %s).", requestID(r.Context()))
		}
	}
	if e.Status == http.StatusUnauthorized {
		// RFC 6750: a presented token that failed says invalid_token.
		if r.Header.Get("Authorization") != "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="workspace", error="invalid_token"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="workspace"`)
		}
	}
	if e.Extra != nil {
		body := map[string]any{"code": e.Code, "message": e.Message}
		if len(e.Fields) > 0 {
			body["errors"] = e.Fields
		}
		for k, v := range e.Extra {
			body[k] = v
		}
		writeJSON(w, e.Status, body)
		return
	}
	writeJSON(w, e.Status, errorBody{Code: e.Code, Message: e.Message, Errors: e.Fields})
}

// diskFullRetrySeconds is the Retry-After of a 507: space comes back when
// an operator frees it, so clients should not retry at once.
const diskFullRetrySeconds = 60

// diskFullLog keeps a full disk to one log line a minute, however many
// writes it refuses (each would otherwise log its own).
var diskFullLog struct {
	sync.Mutex
	last    time.Time
	refused int
}

func noteDiskFull(r *http.Request, err error) {
	diskFullLog.Lock()
	diskFullLog.refused++
	if !diskFullLog.last.IsZero() && time.Since(diskFullLog.last) < time.Minute {
		diskFullLog.Unlock()
		return
	}
	refused := diskFullLog.refused
	diskFullLog.last, diskFullLog.refused = time.Now(), 0
	diskFullLog.Unlock()
	logger(r.Context()).ErrorContext(r.Context(), "the database's disk is full: writes are answered 507 until space is freed (reads go on)",
		"err", err, "refused_since_last_line", refused, "request_id", requestID(r.Context()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"code":0,"message":"Internal error."}`)
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	// The body is complete: say its length rather than stream it chunked.
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeJSONArray answers a JSON array of items already encoded (each a
// complete JSON value), as writeJSON would encode them.
func writeJSONArray(w http.ResponseWriter, status int, items [][]byte) {
	n := 3
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']', '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

var errBodyTooLarge = errors.New("request body too large")

// decodeJSON reads a JSON object body into dst. Unknown fields are ignored;
// malformed JSON or a wrong type is a 400 naming the field; a non-JSON
// Content-Type, or none with a body, is a 415; an empty body decodes to
// nothing.
func decodeJSON(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json.")
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errorf(http.StatusRequestTimeout, "The request body arrived too slowly.")
		}
		return badRequest("The request body could not be read.")
	}
	if len(bytes.TrimSpace(body)) == 0 { // no copy of a body that may be 32 MiB
		return nil
	}
	if r.Header.Get("Content-Type") == "" {
		// decisions.md: an unsupported Content-Type is 415, and no type is
		// not JSON; guessing would let a form post from another site in.
		return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json.")
	}
	keys, object, err := checkJSONText(body)
	if err != nil {
		return err
	}
	if raw, ok := dst.(*json.RawMessage); ok && json.Valid(body) {
		// The body is read into a buffer of its own: no copy to keep it.
		*raw = bytes.TrimSpace(body)
	} else if err := json.Unmarshal(body, dst); err != nil {
		return jsonProblem(err)
	}
	if object {
		noteAuditFields(r.Context(), keys)
	}
	return nil
}

func jsonProblem(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return badRequest("The request body must be a JSON object.")
		}
		// te.Value is the JSON kind found. A wrong value inside a map names
		// only the map, so say both what was found and what was wanted.
		return fieldError(field, "must be of type "+jsonTypeName(te.Type)+" (got "+te.Value+")")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badRequest("The request body is not valid JSON (at byte %d).", se.Offset)
	}
	// Errors from custom unmarshalers (ids, optional values) carry no field
	// name through encoding/json; keep their text, which is ours.
	return badRequest("The request body is invalid: %s.", strings.TrimSuffix(err.Error(), "."))
}

// jsonTypeName names the JSON type a Go type is decoded from.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(db.ID(0)) {
		return "snowflake string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return t.String()
}

// Opt is a request field that distinguishes absent, null and a value, for
// PATCH bodies where null clears a nullable field.
type Opt[T any] struct {
	Set   bool // the key was present
	Null  bool // its value was null
	Value T
}

func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// problems collects field -> problem for one 400 answer.
type problems map[string]string

func (p problems) add(field, problem string) {
	if _, ok := p[field]; !ok {
		p[field] = problem
	}
}

// length checks a text's length in characters.
func (p problems) length(field, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case min > 0 && n < min && max > 0:
		p.add(field, fmt.Sprintf("must be %d-%d characters", min, max))
	case min > 0 && n < min:
		p.add(field, fmt.Sprintf("must be at least %d characters", min))
	case max > 0 && n > max && min > 0:
		p.add(field, fmt.Sprintf("must be %d-%d characters", min, max))
	case max > 0 && n > max:
		p.add(field, fmt.Sprintf("must be at most %d characters", max))
	}
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Message: "The request has invalid fields.", Fields: p}
}

// Helpers every handler shares: PATCH decoding and field validators.

// readOnlySet is the read-only keys a PATCH body sets, with their values,
// checked once the current object is loaded (check).
type readOnlySet map[string]json.RawMessage

// decodePatch decodes a PATCH body into dst and returns the read-only keys
// it sets. decisions.md: a request that tries to change a read-only field is
// 400 naming it, so sending the object back as it was (read-only fields at
// their current values) is fine; the handler calls check with the current
// object once it has loaded it. Keys match exactly as the spec spells them.
func (rq *request) decodePatch(dst any, readOnly ...string) (readOnlySet, error) {
	keys, err := rq.decodeKeys(dst)
	if err != nil {
		return nil, err
	}
	ro := readOnlySet{}
	for _, k := range readOnly {
		if v, ok := keys[k]; ok {
			ro[k] = v
		}
	}
	return ro, nil
}

// decodeCreate decodes a creating body into dst; a read-only key is 400
// naming it (there is no current value to send back).
func (rq *request) decodeCreate(dst any, readOnly ...string) error {
	ro, err := rq.decodePatch(dst, readOnly...)
	if err != nil {
		return err
	}
	return ro.check(nil)
}

// decodeKeys decodes the body into dst and returns its top-level keys.
func (rq *request) decodeKeys(dst any) (map[string]json.RawMessage, error) {
	var raw json.RawMessage
	if err := rq.decode(&raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, jsonProblem(err)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return nil, jsonProblem(err)
	}
	return keys, nil
}

// check refuses a read-only key whose value differs from current's (the
// object as GET shows it; nil: every key differs).
func (ro readOnlySet) check(current any) error {
	return checkReadOnly(current, ro)
}

// checkLoaded is check with a current object built only when a read-only
// key was sent (building it may read more rows).
func (ro readOnlySet) checkLoaded(current func() (any, error)) error {
	if len(ro) == 0 {
		return nil
	}
	cur, err := current()
	if err != nil {
		return err
	}
	return ro.check(cur)
}

// checkReadOnly refuses a body that sets a read-only field to a value other
// than its current one (sending the object back unchanged is fine). The
// field at fault is named; with several, the first in name order.
func checkReadOnly(current any, fields map[string]json.RawMessage) error {
	if len(fields) == 0 {
		return nil
	}
	cur := map[string]any{}
	if current != nil {
		b, err := json.Marshal(current)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &cur); err != nil {
			return err
		}
	}
	names := slices.Sorted(maps.Keys(fields))
	for _, name := range names {
		var v any
		if err := json.Unmarshal(fields[name], &v); err != nil || !reflect.DeepEqual(v, cur[name]) {
			return fieldError(name, "is read-only")
		}
	}
	return nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// checkName validates an optional name: when given, 1-max characters after
// trimming.
func checkName(p problems, field string, s *string, max int) {
	if s == nil {
		return
	}
	*s = strings.TrimSpace(*s)
	p.length(field, *s, 1, max)
}

func optText(p problems, field string, s *string, max int) {
	if s != nil {
		p.length(field, *s, 0, max)
	}
}

// validTimezone: a real IANA zone; "" and "Local" load but name no zone.
func validTimezone(tz string) bool {
	if tz == "" || tz == "Local" || len(tz) > 64 {
		return false
	}
	_, err := time.LoadLocation(tz)
	return err == nil
}

func validDate(s string) bool {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// validEmail accepts a bare address (no display name) with a dotted domain.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".")
}
