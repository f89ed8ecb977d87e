package server

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// docFixture is the organisation fixture with a document type, an enum
// field, a project and one document of acme, and one document of evil.
type docFixture struct {
	*orgFixture
	typeID, enumID, textID, valueA, project string
	doc, evilDoc                            string
}

func newDocFixture(t *testing.T) *docFixture {
	f := &docFixture{orgFixture: newOrgFixture(t)}
	e := f.e
	f.typeID = e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-types",
		map[string]any{"name": "Spec", "number_format": "SP-{number}"}).obj(t)["id"].(string)
	fld := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields",
		map[string]any{"name": "Status", "type": 4, "values": []map[string]any{{"value": "Draft"}, {"value": "Final"}}}).obj(t)
	f.enumID = fld["id"].(string)
	f.valueA = fld["values"].([]any)[0].(map[string]any)["id"].(string)
	f.textID = e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields",
		map[string]any{"name": "Note", "type": 0, "max_length": 5}).obj(t)["id"].(string)
	f.project = e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	f.doc = e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Main spec"}).obj(t)["id"].(string)
	f.evilDoc = e.must(201, f.mallory, "POST", "/documents", map[string]any{"organisation_id": f.evil, "title": "Evil spec"}).obj(t)["id"].(string)
	return f
}

func TestDocumentTypesAndFields(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	types, fields := "/organisations/"+f.acme+"/document-types", "/organisations/"+f.acme+"/document-fields"
	typ, fld := "/document-types/"+f.typeID, "/document-fields/"+f.enumID
	var renamedValue string
	e.run(t, []scenario{
		{"type: member without MANAGE_ORGANISATION", f.bob, "POST", types, map[string]any{"name": "Memo"}, 403, nil},
		{"type: foreign organisation", f.mallory, "POST", types, map[string]any{"name": "Memo"}, 403, nil},
		{"type: name required", f.alice, "POST", types, map[string]any{}, 400, wantField("name")},
		{"type: name too short", f.alice, "POST", types, map[string]any{"name": "M"}, 400, wantField("name")},
		{"type: name over 20", f.alice, "POST", types, map[string]any{"name": strings.Repeat("n", 21)}, 400, wantField("name")},
		{"type: number_format without {number}", f.alice, "POST", types, map[string]any{"name": "Memo", "number_format": "M-"}, 400, wantField("number_format")},
		{"type: revision_format out of range", f.alice, "POST", types, map[string]any{"name": "Memo", "revision_format": 7}, 400, wantField("revision_format")},
		{"type: wrong type", f.alice, "POST", types, map[string]any{"name": 5}, 400, wantField("name")},
		{"type: malformed", f.alice, "POST", types, `{"name":`, 400, nil},
		{"type: read-only last_number", f.alice, "POST", types, map[string]any{"name": "Memo", "last_number": 3}, 400, wantField("last_number")},
		{"type: created with default revision format", f.alice, "POST", types, map[string]any{"name": "Memo"}, 201, wantKey("revision_format", 5)},
		{"type: members list", f.bob, "GET", types, nil, 200, wantLen(2)},
		{"type: foreign list", f.mallory, "GET", types, nil, 403, nil},
		{"type: get", f.bob, "GET", typ, nil, 200, wantKey("number_format", "SP-{number}")},
		{"type: foreign get", f.mallory, "GET", typ, nil, 403, nil},
		{"type: absent", f.alice, "GET", "/document-types/12345", nil, 404, nil},
		{"type: patch", f.alice, "PATCH", typ, map[string]any{"description": "Specifications", "revision_format": 3}, 200, wantKey("revision_format", 3)},
		{"type: patch by member", f.bob, "PATCH", typ, map[string]any{"name": "Other"}, 403, nil},
		{"type: patch by foreign", f.mallory, "PATCH", typ, map[string]any{"name": "Other"}, 403, nil},
		{"type: patch read-only", f.alice, "PATCH", typ, map[string]any{"last_number": 9}, 400, wantField("last_number")},

		{"field: member cannot create", f.bob, "POST", fields, map[string]any{"name": "Owner"}, 403, nil},
		{"field: foreign cannot create", f.mallory, "POST", fields, map[string]any{"name": "Owner"}, 403, nil},
		{"field: bad type", f.alice, "POST", fields, map[string]any{"name": "Owner", "type": 9}, 400, wantField("type")},
		{"field: bad max_length", f.alice, "POST", fields, map[string]any{"name": "Owner", "max_length": 0}, 400, wantField("max_length")},
		{"field: empty value", f.alice, "POST", fields, map[string]any{"name": "Owner", "values": []map[string]any{{"value": " "}}}, 400, wantField("values[0].value")},
		{"field: list", f.bob, "GET", fields, nil, 200, wantLen(2)},
		{"field: foreign list", f.mallory, "GET", fields, nil, 403, nil},
		{"field: get with values", f.bob, "GET", fld, nil, 200, func(t *testing.T, r *testResponse) {
			if vs := r.obj(t)["values"].([]any); len(vs) != 2 {
				t.Fatalf("values %v", vs)
			}
		}},
		{"field: foreign get", f.mallory, "GET", fld, nil, 403, nil},
		{"field: renamed value gets a new id, unchanged keeps its id", f.alice, "PATCH", fld,
			map[string]any{"values": []map[string]any{{"id": f.valueA, "value": "Draft"}, {"value": "Issued"}}}, 200,
			func(t *testing.T, r *testResponse) {
				vs := r.obj(t)["values"].([]any)
				if len(vs) != 2 || vs[0].(map[string]any)["id"] != f.valueA || vs[1].(map[string]any)["value"] != "Issued" {
					t.Fatalf("values %v", vs)
				}
				renamedValue = vs[1].(map[string]any)["id"].(string)
			}},
		{"field: changed text of a kept id is a new value", f.alice, "PATCH", fld,
			map[string]any{"values": []map[string]any{{"id": f.valueA, "value": "Drafted"}}}, 200,
			func(t *testing.T, r *testResponse) {
				vs := r.obj(t)["values"].([]any)
				if len(vs) != 1 || vs[0].(map[string]any)["id"] == f.valueA || vs[0].(map[string]any)["id"] == renamedValue {
					t.Fatalf("values %v", vs)
				}
			}},
		{"field: repeated value", f.alice, "PATCH", fld, map[string]any{"values": []map[string]any{{"value": "A"}, {"value": "A"}}}, 400, wantField("values[1].value")},
		{"field: patch by member", f.bob, "PATCH", fld, map[string]any{"name": "X1"}, 403, nil},
		{"field: patch by foreign", f.mallory, "PATCH", fld, map[string]any{"name": "X1"}, 403, nil},
	})
}

func TestDocumentCreateGetPatchDelete(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	create := func(body map[string]any) map[string]any {
		return e.must(201, f.alice, "POST", "/documents", body).obj(t)
	}
	typed := create(map[string]any{"organisation_id": f.acme, "title": "Typed", "type_id": f.typeID, "project_id": f.project})
	if typed["number"] != float64(2) || typed["formatted_number"] != "SP-2" || typed["default_branch"].(map[string]any)["name"] != "main" {
		t.Fatalf("typed document: %v", typed)
	}
	if typed["type"].(map[string]any)["last_number"] != float64(2) {
		t.Fatalf("type last_number not kept: %v", typed["type"])
	}
	proj := "/projects/" + f.project
	doc := "/documents/" + f.doc
	tdoc := "/documents/" + typed["id"].(string)
	evilProject := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/projects", map[string]any{"name": "X"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"project counts its document", f.alice, "GET", proj, nil, 200, wantKey("document_count", 1)},
		{"organisation required", f.alice, "POST", "/documents", map[string]any{"title": "No org"}, 400, wantField("organisation_id")},
		{"title required", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme}, 400, wantField("title")},
		{"title too short", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "x"}, 400, wantField("title")},
		{"title too long", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": strings.Repeat("t", 201)}, 400, wantField("title")},
		{"read-only number", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc", "number": 4}, 400, wantField("number")},
		{"member without EDIT_DOCUMENTS", f.bob, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc"}, 403, nil},
		{"foreign organisation", f.mallory, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc"}, 403, nil},
		{"project of another organisation", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc", "project_id": evilProject}, 400, wantField("project_id")},
		{"type of another organisation", f.mallory, "POST", "/documents", map[string]any{"organisation_id": f.evil, "title": "Doc", "type_id": f.typeID}, 400, wantField("type_id")},
		{"package without project", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc", "package_id": "123"}, 400, wantField("package_id")},
		{"asset group that does not exist", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc", "asset_group_id": "5"}, 400, wantField("asset_group_id")},
		{"absent organisation", f.alice, "POST", "/documents", map[string]any{"organisation_id": "999", "title": "Doc"}, 400, nil},
		{"malformed", f.alice, "POST", "/documents", `{"title":`, 400, nil},
		{"wrong type", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": 7}, 400, wantField("title")},

		{"member reads", f.bob, "GET", doc, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			p := o["permissions"].(map[string]any)
			if o["title"] != "Main spec" || o["number"] != float64(1) || o["formatted_number"] != "1" || p["VIEW_DOCUMENTS"] != true || p["EDIT_DOCUMENTS"] != false {
				t.Fatalf("document %v", o)
			}
		}},
		{"foreign member cannot read", f.mallory, "GET", doc, nil, 403, nil},
		{"pending member cannot read", f.pen, "GET", doc, nil, 403, nil},
		{"no organisation", f.nobody, "GET", doc, nil, 403, nil},
		{"no token", nil, "GET", doc, nil, 401, nil},
		{"absent", f.alice, "GET", "/documents/4242", nil, 404, nil},
		{"bad id", f.alice, "GET", "/documents/abc", nil, 400, nil},

		{"patch title and enum field", f.alice, "PATCH", doc, map[string]any{"title": "Renamed", "fields": map[string]any{f.enumID: f.valueA}}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			fv := o["fields"].(map[string]any)[f.enumID].(map[string]any)
			if o["title"] != "Renamed" || fv["value"] != f.valueA || fv["name"] != "Status" {
				t.Fatalf("patched %v", o)
			}
		}},
		{"enum value that does not exist", f.alice, "PATCH", doc, map[string]any{"fields": map[string]any{f.enumID: "77"}}, 400, wantField("fields." + f.enumID)},
		{"text over max_length", f.alice, "PATCH", doc, map[string]any{"fields": map[string]any{f.textID: "toolong"}}, 400, wantField("fields." + f.textID)},
		{"text of wrong type", f.alice, "PATCH", doc, map[string]any{"fields": map[string]any{f.textID: 5}}, 400, wantField("fields." + f.textID)},
		{"field of no organisation", f.alice, "PATCH", doc, map[string]any{"fields": map[string]any{"99": "x"}}, 400, wantField("fields.99")},
		{"null removes a value", f.alice, "PATCH", doc, map[string]any{"fields": map[string]any{f.enumID: nil}}, 200, func(t *testing.T, r *testResponse) {
			if len(r.obj(t)["fields"].(map[string]any)) != 0 {
				t.Fatal("value kept")
			}
		}},
		{"read-only number", f.alice, "PATCH", doc, map[string]any{"number": 9}, 400, wantField("number")},
		{"read-only organisation_id", f.alice, "PATCH", doc, map[string]any{"organisation_id": f.evil}, 400, wantField("organisation_id")},
		{"member cannot patch", f.bob, "PATCH", doc, map[string]any{"title": "Bob's"}, 403, nil},
		{"foreign cannot patch", f.mallory, "PATCH", doc, map[string]any{"title": "Mine"}, 403, nil},
		{"move into the project", f.alice, "PATCH", doc, map[string]any{"project_id": f.project}, 200, nil},
		{"project counts both", f.alice, "GET", proj, nil, 200, wantKey("document_count", 2)},

		{"foreign cannot delete", f.mallory, "DELETE", doc, nil, 403, nil},
		{"member cannot delete", f.bob, "DELETE", doc, nil, 403, nil},
		{"soft delete", f.alice, "DELETE", doc, nil, 200, wantKey("is_deleted", true)},
		{"project count drops", f.alice, "GET", proj, nil, 200, wantKey("document_count", 1)},
		{"deleted still readable", f.alice, "GET", doc, nil, 200, wantKey("is_deleted", true)},
		{"list hides deleted", f.alice, "GET", "/organisations/" + f.acme + "/documents", nil, 200, wantLen(1)},
		{"list of deleted", f.alice, "GET", "/organisations/" + f.acme + "/documents?$filter=" + url.QueryEscape("is_deleted eq true"), nil, 200, wantLen(1)},
		{"restore", f.alice, "POST", doc + "/restore", nil, 200, wantKey("is_deleted", false)},
		{"project count back", f.alice, "GET", proj, nil, 200, wantKey("document_count", 2)},
		{"list", f.bob, "GET", "/organisations/" + f.acme + "/documents", nil, 200, wantLen(2)},
		{"list filter by title", f.bob, "GET", "/organisations/" + f.acme + "/documents?$filter=" + url.QueryEscape("title eq 'typed'"), nil, 200, wantLen(1)},
		{"list filter by type", f.bob, "GET", "/organisations/" + f.acme + "/documents?$filter=" + url.QueryEscape("type_id eq "+f.typeID), nil, 200, wantLen(1)},
		{"list page", f.bob, "GET", "/organisations/" + f.acme + "/documents?$top=1&$skip=1", nil, 200, func(t *testing.T, r *testResponse) {
			if len(r.arr(t)) != 1 || r.Header.Get("X-Total-Count") != "2" {
				t.Fatalf("page %s %v", r.Body, r.Header)
			}
		}},
		{"list bad filter field", f.bob, "GET", "/organisations/" + f.acme + "/documents?$filter=" + url.QueryEscape("colour eq 'x'"), nil, 400, wantField("colour")},
		{"foreign list", f.mallory, "GET", "/organisations/" + f.acme + "/documents", nil, 403, nil},
		{"typed document readable", f.bob, "GET", tdoc, nil, 200, nil},
	})
}

// TestDocumentListHonoursProjectDenial: a project grant denying
// VIEW_DOCUMENTS hides that project's documents from the list and GET.
func TestDocumentListHonoursProjectDenial(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	inProject := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Hidden", "project_id": f.project}).obj(t)["id"].(string)
	e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]any{"VIEW_DOCUMENTS": "deny"}})
	e.run(t, []scenario{
		{"denied in the project", f.bob, "GET", "/documents/" + inProject, nil, 403, nil},
		{"list leaves it out", f.bob, "GET", "/organisations/" + f.acme + "/documents", nil, 200, wantLen(1)},
		{"owner sees both", f.alice, "GET", "/organisations/" + f.acme + "/documents", nil, 200, wantLen(2)},
	})
}

// TestDocumentNumbersConcurrent: parallel creations get distinct,
// gap-free numbers.
func TestDocumentNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	const n = 20
	var wg sync.WaitGroup
	numbers := make([]int, n)
	statuses := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.do(f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": fmt.Sprint("Doc ", i)})
			statuses[i] = r.Status
			if r.Status == 201 {
				numbers[i] = int(r.obj(t)["number"].(float64))
			}
		}(i)
	}
	wg.Wait()
	sort.Ints(numbers)
	for i := range numbers {
		if statuses[i] != 201 {
			t.Fatalf("status %d", statuses[i])
		}
		if numbers[i] != i+1 {
			t.Fatalf("numbers %v, want 1..%d", numbers, n)
		}
	}
}
