package server

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// webOpenAPI is the copy of the served description the web app's types are
// generated from (web/package.json "gen:api" writes web/src/lib/api.gen.ts
// from it; .ci/run checks that file is fresh). The web build has no Go, so
// the document is committed beside it.
const webOpenAPI = "../web/openapi.json"

// TestOpenAPIWebCopy fails when web/openapi.json is not the document the
// server serves: after a change to openapi.yaml or the routes, run
// `go test -run TestOpenAPIWebCopy ./server/ -update`, then `npm run gen:api`
// in web/, and commit both files.
func TestOpenAPIWebCopy(t *testing.T) {
	t.Parallel()
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, d.json, "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	if *update {
		if err := os.WriteFile(webOpenAPI, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(webOpenAPI)
	if err != nil {
		t.Fatalf("%v (write it: go test -run TestOpenAPIWebCopy ./server/ -update)", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s differs from the served description: run `go test -run TestOpenAPIWebCopy ./server/ -update`, then `npm run gen:api` in web/, and commit both", webOpenAPI)
	}
}
