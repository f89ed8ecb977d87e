package server

import (
	"strings"
	"testing"
)

// TestEveryRouteHostileIDs: every route of the table, its path parameters
// replaced by values that name nothing or are no id at all (zero, negative,
// past int64, words, escapes, hundreds of digits), asked by an owner, by
// another organisation's owner and by nobody, with an empty object as the
// body of a write: no answer is a 5xx (issue 35: nothing from outside
// breaks the server).
func TestEveryRouteHostileIDs(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	values := []string{"0", "-1", "1", "9223372036854775808", "abc", "%2e%2e", "%00", strings.Repeat("9", 300)}
	for _, r := range (&Server{}).routes() {
		for _, v := range values {
			path := routeParam.ReplaceAllString(r.path, v)
			var body any
			if isWrite(r.method) {
				body = map[string]any{}
			}
			for _, u := range []*testUser{f.alice, f.mallory, nil} {
				resp := f.e.do(u, r.method, path, body)
				if resp.Status == 501 && r.path == "/users/@me/qr/scan" {
					continue // the spec's answer: scanning is not implemented (interface.md, Status codes)
				}
				if resp.Status >= 500 {
					t.Errorf("%s %s: %d %.200s", r.method, path, resp.Status, resp.Body)
				}
			}
		}
	}
}
