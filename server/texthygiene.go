package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The text rule, applied to every request body in one place (decodeJSON and
// the multipart text parts) so that areas added later inherit it: text is
// UTF-8 with no NUL or C0 control character other than tab and newline, and
// a JSON object names each key once. Control characters break reports, CSV
// and terminals that later show the text; a repeated key is ambiguous (which
// one a validator saw and which one was stored may differ).

// textProblem says what is wrong with one text value, or "" when it is fine.
func textProblem(s string) string {
	if !utf8.ValidString(s) {
		return "must be UTF-8 text"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' {
			return "must not contain control characters (only tab and newline are allowed)"
		}
	}
	return ""
}

// checkJSONText walks a JSON body's tokens and refuses invalid UTF-8, control
// characters in any key or string value, and repeated keys, naming the
// field (dotted path, [i] for array elements). Syntax errors are left to the
// decoder that follows, which reports them with their offset. When the body
// is an object it returns its keys in body order (the audit entry's changed
// fields), so nothing parses the body again for them.
func checkJSONText(body []byte) (keys []string, object bool, err error) {
	if !utf8.Valid(body) {
		// encoding/json would silently turn these bytes into U+FFFD.
		return nil, false, badRequest("The request body must be UTF-8 text.")
	}
	w := jsonWalker{dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	var e *Error
	if err := w.value(); errors.As(err, &e) {
		return nil, false, e
	}
	// A syntax error (or io.EOF) is the decoder's to report.
	return w.top, w.object, nil
}

// maxJSONDepth is encoding/json's own nesting limit; the walk stops there
// too rather than recurse as deep as a hostile body asks.
const maxJSONDepth = 10000

// jsonWalker keeps the path as segments and joins them only for an error,
// so a deeply nested body costs no quadratic string building.
type jsonWalker struct {
	dec  *json.Decoder
	path []string
	// top holds the keys of the body when it is an object (object true).
	top    []string
	object bool
}

func (w *jsonWalker) field() string {
	var b strings.Builder
	for _, seg := range w.path {
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// value checks the next value of the body.
func (w *jsonWalker) value() error {
	if len(w.path) > maxJSONDepth {
		return badRequest("The request body is nested too deeply.")
	}
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case string:
		if p := textProblem(t); p != "" {
			return fieldError(w.field(), p)
		}
	case json.Delim:
		switch t {
		case '{':
			outermost := len(w.path) == 0 && !w.object
			w.object = w.object || outermost
			seen := map[string]bool{}
			for w.dec.More() {
				kt, err := w.dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if p := textProblem(key); p != "" {
					return fieldError(w.field(), "has a key that "+p)
				}
				w.path = append(w.path, key)
				if seen[key] {
					return fieldError(w.field(), "is given more than once")
				}
				seen[key] = true
				if outermost {
					w.top = append(w.top, key)
				}
				if err := w.value(); err != nil {
					return err
				}
				w.path = w.path[:len(w.path)-1]
			}
			_, err = w.dec.Token() // '}'
			return err
		case '[':
			for i := 0; w.dec.More(); i++ {
				w.path = append(w.path, "["+strconv.Itoa(i)+"]")
				if err := w.value(); err != nil {
					return err
				}
				w.path = w.path[:len(w.path)-1]
			}
			_, err = w.dec.Token() // ']'
			return err
		}
	}
	return nil
}
