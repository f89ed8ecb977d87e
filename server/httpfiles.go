package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// Files over HTTP: naming downloads, reading uploads, checking blob hashes.

// contentDisposition names a download (RFC 6266): an ASCII fallback in
// filename (quoted, with anything unsafe replaced) and the UTF-8 name in
// filename* (RFC 5987 percent-encoding).
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' {
			return '_'
		}
		return r
	}, name)
	v := mime.FormatMediaType("attachment", map[string]string{"filename": ascii})
	if v == "" {
		v = `attachment; filename="download"`
	}
	return fmt.Sprintf("%s; filename*=UTF-8''%s", v, rfc5987(name))
}

// rfc5987 percent-encodes every byte but RFC 5987's attr-char.
func rfc5987(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// multipartError answers a multipart body that could not be read: too
// large (413) or malformed (400).
func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errBodyTooLarge
	}
	return badRequest("The multipart body is malformed.")
}

// isSHA256Hex: blobs are named by their content's SHA-256 in lower-case
// hex, so a name from a caller is checked before it reaches storage.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
