package server

import (
	"strings"
	"testing"
)

func TestInductions(t *testing.T) {
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member without MANAGE_INDUCTIONS cannot create", f.bob, "POST", acme + "/inductions", map[string]any{"name": "Site"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/inductions", map[string]any{"name": "Site"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/inductions", map[string]any{"name": "Site"}, 400, nil},
		{"name required", f.alice, "POST", acme + "/inductions", map[string]any{}, 400, wantField("name")},
		{"name over 200", f.alice, "POST", acme + "/inductions", map[string]any{"name": strings.Repeat("n", 201)}, 400, wantField("name")},
		{"revision over 20", f.alice, "POST", acme + "/inductions", map[string]any{"name": "Site", "revision": strings.Repeat("r", 21)}, 400, wantField("revision")},
		{"negative valid_for", f.alice, "POST", acme + "/inductions", map[string]any{"name": "Site", "valid_for": -1}, 400, wantField("valid_for")},
	})
	created := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site", "revision": "A", "valid_for": 86400}).obj(t)
	if !isSHA256Hex(created["revision_hash"].(string)) || created["name"] != "Site" || created["valid_for"] != float64(86400) {
		t.Fatalf("created %v", created)
	}
	path := "/inductions/" + created["id"].(string)
	first := created["revision_hash"].(string)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/inductions", nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", acme + "/inductions", nil, 403, nil},
		{"member reads without questions", f.bob, "GET", path, nil, 200, func(t *testing.T, r *testResponse) {
			if _, ok := r.obj(t)["questions"]; ok {
				t.Errorf("a member without MANAGE_INDUCTIONS sees the questions: %s", r.Body)
			}
		}},
		{"manager reads with questions", f.alice, "GET", path, nil, 200, func(t *testing.T, r *testResponse) {
			if qs, ok := r.obj(t)["questions"].([]any); !ok || len(qs) != 0 {
				t.Errorf("questions %v", r.obj(t)["questions"])
			}
		}},
		{"other organisation cannot read", f.mallory, "GET", path, nil, 403, nil},
		{"absent induction", f.alice, "GET", "/inductions/123456789", nil, 404, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"name": "X"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"name": "X"}, 403, nil},
		{"only string, boolean or enum", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Age?", "type": "number"}}}, 400, wantField("questions[0].type")},
		{"enum needs values", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Role?", "type": "enum"}}}, 400, wantField("questions[0].values")},
		{"unknown question id", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"id": "123456789", "question": "Q", "type": "string"}}}, 400, wantField("questions[0].id")},
		{"enum answer by an unknown nonce", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Role?", "type": "enum",
			"values": []any{map[string]any{"value": "Visitor", "nonce": "v"}}, "answer": "w"}}}, 400, wantField("questions[0].answer")},
		{"boolean answer not a boolean", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Fit?", "type": "boolean", "answer": "maybe"}}}, 400, wantField("questions[0].answer")},
		{"read-only revision_hash", f.alice, "PATCH", path, map[string]any{"revision_hash": strings.Repeat("0", 64)}, 400, wantField("revision_hash")},
	})
	// Questions: a string, a boolean and an enum whose default names a new
	// value by its nonce.
	r := e.must(200, f.alice, "PATCH", path, map[string]any{"questions": []any{
		map[string]any{"question": "Name of your supervisor?", "explanation": "As on your card", "type": "string"},
		map[string]any{"question": "Fit for work?", "type": "boolean", "answer": "true"},
		map[string]any{"question": "Role?", "type": "enum", "answer": "vis", "values": []any{
			map[string]any{"value": "Worker", "nonce": "wrk"}, map[string]any{"value": "Visitor", "nonce": "vis"}}},
	}}).obj(t)
	second := r["revision_hash"].(string)
	if second == first || r["revision_id"] == created["revision_id"] {
		t.Fatalf("a change kept the revision: %v", r)
	}
	qs := r["questions"].([]any)
	role := qs[2].(map[string]any)
	values := role["enum_values"].([]any)
	visitor := values[1].(map[string]any)
	if role["default_answer"] != visitor["id"] || visitor["induction_question_id"] != role["id"] {
		t.Fatalf("enum default %v, values %v", role["default_answer"], values)
	}
	worker := values[0].(map[string]any)
	// Rename one value (a new id), keep the other (the same id); a value id
	// of another question is refused.
	sameQuestions := func(workerID any, workerText string) []any {
		return []any{
			map[string]any{"id": qs[0].(map[string]any)["id"], "question": "Name of your supervisor?", "explanation": "As on your card", "type": "string"},
			map[string]any{"id": qs[1].(map[string]any)["id"], "question": "Fit for work?", "type": "boolean", "answer": "true"},
			map[string]any{"id": role["id"], "question": "Role?", "type": "enum", "answer": visitor["id"], "values": []any{
				map[string]any{"id": workerID, "value": workerText}, map[string]any{"id": visitor["id"], "value": "Visitor"}}},
		}
	}
	r3 := e.must(200, f.alice, "PATCH", path, map[string]any{"questions": sameQuestions(worker["id"], "Contractor")}).obj(t)
	v3 := r3["questions"].([]any)[2].(map[string]any)["enum_values"].([]any)
	if v3[0].(map[string]any)["id"] == worker["id"] || v3[1].(map[string]any)["id"] != visitor["id"] {
		t.Fatalf("renamed value kept its id or the unchanged one lost it: %v", v3)
	}
	bad := sameQuestions(v3[0].(map[string]any)["id"], "Worker")
	bad[0] = map[string]any{"id": qs[0].(map[string]any)["id"], "question": "Q", "type": "enum", "values": []any{map[string]any{"id": visitor["id"], "value": "Visitor"}}}
	wantField("questions[0].values[0].id")(t, e.must(400, f.alice, "PATCH", path, map[string]any{"questions": bad}))
	// The same content gives the same hash: back to "Worker" (a new value
	// id again, but ids are not content).
	r4 := e.must(200, f.alice, "PATCH", path, map[string]any{"questions": sameQuestions(v3[0].(map[string]any)["id"], "Worker")}).obj(t)
	if r4["revision_hash"] != second {
		t.Fatalf("same content, hash %v, want %v", r4["revision_hash"], second)
	}
	e.run(t, []scenario{
		{"revisions oldest first", f.bob, "GET", path + "/revisions", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 4 || list[0]["hash"] != first || list[3]["hash"] != second {
				t.Errorf("got %d revisions: %v", len(list), list)
			}
		}},
		{"other organisation cannot list revisions", f.mallory, "GET", path + "/revisions", nil, 403, nil},
		{"a revision by hash, member: no questions", f.bob, "GET", path + "/revisions/" + first, nil, 200, func(t *testing.T, r *testResponse) {
			if _, ok := r.obj(t)["questions"]; ok || r.obj(t)["hash"] != first {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"a revision by hash, manager: questions", f.alice, "GET", path + "/revisions/" + second, nil, 200, func(t *testing.T, r *testResponse) {
			if qs, _ := r.obj(t)["questions"].([]any); len(qs) != 3 {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"unknown hash", f.alice, "GET", path + "/revisions/" + strings.Repeat("0", 64), nil, 404, nil},
		{"not a hash", f.alice, "GET", path + "/revisions/abc", nil, 404, nil},
		{"other organisation cannot read a revision", f.mallory, "GET", path + "/revisions/" + first, nil, 403, nil},
	})
}
