package server

import (
	"strings"
	"testing"
)

// TestDocumentTypeDelete: deleting a document type (issue 17, the web app's
// document settings) needs MANAGE_ORGANISATION in the type's organisation
// and is refused with 400 while a document, a soft-deleted one too, has it.
func TestDocumentTypeDelete(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	types := "/organisations/" + f.acme + "/document-types"
	spare := e.must(201, f.alice, "POST", types, map[string]any{"name": "Memo"}).obj(t)["id"].(string)
	evilType := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/document-types", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	typed := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Typed", "type_id": f.typeID}).obj(t)["id"].(string)
	used := "/document-types/" + f.typeID
	wantMessage := func(part string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			if m, _ := r.obj(t)["message"].(string); !strings.Contains(m, part) {
				t.Fatalf("message %q, want it to name %q", m, part)
			}
		}
	}
	e.run(t, []scenario{
		{"member without MANAGE_ORGANISATION", f.bob, "DELETE", "/document-types/" + spare, nil, 403, nil},
		{"foreign organisation's owner", f.mallory, "DELETE", "/document-types/" + spare, nil, 403, nil},
		{"owner of acme cannot delete evil's type", f.alice, "DELETE", "/document-types/" + evilType, nil, 403, nil},
		{"evil's type still there", f.mallory, "GET", "/document-types/" + evilType, nil, 200, wantKey("name", "Evil")},
		{"absent", f.alice, "DELETE", "/document-types/12345", nil, 404, nil},
		{"malformed id", f.alice, "DELETE", "/document-types/abc", nil, 400, nil},
		{"a type a document has", f.alice, "DELETE", used, nil, 400, wantMessage("Spec")},
		{"the document is soft-deleted", f.alice, "DELETE", "/documents/" + typed, nil, 200, wantKey("is_deleted", true)},
		{"a type a deleted document has (it can be restored)", f.alice, "DELETE", used, nil, 400, nil},
		{"restored", f.alice, "POST", "/documents/" + typed + "/restore", nil, 200, nil},
		{"the document's type cleared", f.alice, "PATCH", "/documents/" + typed, map[string]any{"type_id": nil}, 200, nil},
		{"no document has it now", f.alice, "DELETE", used, nil, 204, nil},
		{"gone", f.alice, "GET", used, nil, 404, nil},
		{"deleted twice", f.alice, "DELETE", used, nil, 404, nil},
		{"the list keeps the others", f.bob, "GET", types, nil, 200, wantLen(1)},
		{"an unused type", f.alice, "DELETE", "/document-types/" + spare, nil, 204, nil},
		{"the list is empty", f.bob, "GET", types, nil, 200, wantLen(0)},
	})
}
