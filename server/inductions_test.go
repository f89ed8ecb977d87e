package server

import (
	"bytes"
	"context"
	"encoding/csv"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"workspace/db"
	"workspace/server/render"
)

func TestInductions(t *testing.T) {
	t.Parallel()
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
		{"string answer over 2000", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Name?", "type": "string", "answer": strings.Repeat("a", 2001)}}}, 400, wantField("questions[0].answer")},
		{"nonce over 100", f.alice, "PATCH", path, map[string]any{"questions": []any{map[string]any{"question": "Role?", "type": "enum",
			"values": []any{map[string]any{"value": "Visitor", "nonce": strings.Repeat("v", 101)}}}}}, 400, wantField("questions[0].values[0].nonce")},
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

func minimalPDF(body string) []byte {
	return []byte("%PDF-1.4\n" + body + "\ntrailer\n%%EOF\n")
}

// TestInductionAttachments: the multipart PATCH takes only a real PDF,
// keeps it across later revisions and serves it with its file name.
func TestInductionAttachments(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	path := "/inductions/" + e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site"}).obj(t)["id"].(string)
	patch := func(u *testUser, fields map[string]string, files map[string][]byte) *testResponse {
		return e.serve(multipartReq(t, u, "PATCH", path, fields, files))
	}
	if r := patch(f.alice, nil, map[string][]byte{"attachment": []byte("<html>not a pdf</html>")}); r.Status != 400 {
		t.Fatalf("HTML as attachment: %d", r.Status)
	}
	if r := patch(f.alice, nil, map[string][]byte{"attachment": []byte("%PDF-1.4 truncated")}); r.Status != 400 {
		t.Fatalf("PDF without end: %d", r.Status)
	}
	if r := patch(f.bob, map[string]string{"name": "X"}, nil); r.Status != 403 {
		t.Fatalf("member: %d", r.Status)
	}
	if r := patch(f.alice, map[string]string{"valid_for": "soon"}, nil); r.Status != 400 {
		t.Fatalf("valid_for not a number: %d", r.Status)
	}
	pdf := minimalPDF("1 0 obj << >> endobj")
	r := patch(f.alice, map[string]string{"name": "Site rules", "valid_for": "3600", "questions": `[{"question": "Read the rules?", "type": "boolean"}]`},
		map[string][]byte{"attachment": pdf})
	if r.Status != 200 {
		t.Fatalf("multipart patch: %d %s", r.Status, r.Body)
	}
	o := r.obj(t)
	hash, _ := o["file_hash"].(string)
	if !isSHA256Hex(hash) || o["name"] != "Site rules" || o["valid_for"] != float64(3600) || len(o["questions"].([]any)) != 1 {
		t.Fatalf("got %v", o)
	}
	// A later JSON patch keeps the PDF.
	if o := e.must(200, f.alice, "PATCH", path, map[string]any{"description": "new"}).obj(t); o["file_hash"] != hash {
		t.Fatalf("the PDF was lost: %v", o["file_hash"])
	}
	got := e.must(200, f.bob, "GET", path+"/attachments/"+hash, nil)
	if !bytes.Equal(got.Body, pdf) || got.Header.Get("Content-Type") != "application/pdf" ||
		!strings.Contains(got.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %d bytes, headers %v", len(got.Body), got.Header)
	}
	e.run(t, []scenario{
		{"unknown attachment", f.bob, "GET", path + "/attachments/" + strings.Repeat("0", 64), nil, 404, nil},
		{"other organisation cannot download", f.mallory, "GET", path + "/attachments/" + hash, nil, 403, nil},
	})
	// The organisation's storage counts the PDF once.
	if usage := e.must(200, f.alice, "GET", acme, nil).obj(t)["storage_usage"]; usage != float64(len(pdf)) {
		t.Fatalf("storage_usage %v, want %d", usage, len(pdf))
	}
}

func TestContentDisposition(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"rules.pdf":            `attachment; filename=rules.pdf; filename*=UTF-8''rules.pdf`,
		"two words.pdf":        `attachment; filename="two words.pdf"; filename*=UTF-8''two%20words.pdf`,
		`we"ird\name%.pdf`:     `attachment; filename=we_ird_name_.pdf; filename*=UTF-8''we%22ird%5Cname%25.pdf`,
		"Sicherheitsübung.pdf": `attachment; filename=Sicherheits_bung.pdf; filename*=UTF-8''Sicherheits%C3%BCbung.pdf`,
	} {
		if got := contentDisposition(name); got != want {
			t.Errorf("%q: got %s, want %s", name, got, want)
		}
	}
	for in, want := range map[string]string{"../../etc/passwd": "passwd", `C:\x\a.pdf`: "a.pdf", "": "induction.pdf", "a\x00b.pdf": "ab.pdf"} {
		if got := cleanFileName(in); got != want {
			t.Errorf("cleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInductionAssignments(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site",
		"questions": []any{map[string]any{"question": "Boots on?", "type": "boolean"}}}).obj(t)["id"].(string)
	path := "/inductions/" + id
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	e.run(t, []scenario{
		{"a member assigns themself", f.bob, "POST", path + "/users/" + f.bob.ID, map[string]any{"due_at": 1800000000}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["due_at"] != "2027-01-15T08:00:00.000Z" || o["user"].(map[string]any)["id"] != f.bob.ID || o["record"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"again: the same assignment", f.bob, "POST", path + "/users/" + f.bob.ID, nil, 200, nil},
		{"a member cannot assign another", f.bob, "POST", path + "/users/" + carol.ID, nil, 403, nil},
		{"the manager assigns", f.alice, "POST", path + "/users/" + carol.ID, nil, 201, nil},
		{"not a member", f.alice, "POST", path + "/users/" + f.nobody.ID, nil, 400, wantField("user")},
		{"pending member", f.alice, "POST", path + "/users/" + f.pen.ID, nil, 400, wantField("user")},
		{"other organisation cannot assign", f.mallory, "POST", path + "/users/" + f.mallory.ID, nil, 403, nil},
		{"bad due_at", f.alice, "POST", path + "/users/" + carol.ID, map[string]any{"due_at": "tomorrow"}, 400, wantField("due_at")},
		{"manager lists assignments", f.alice, "GET", path + "/users", nil, 200, wantLen(2)},
		{"member cannot list assignments", f.bob, "GET", path + "/users", nil, 403, nil},
		{"manager reads one", f.alice, "GET", path + "/users/" + carol.ID, nil, 200, nil},
		{"absent assignment", f.alice, "GET", path + "/users/" + f.pen.ID, nil, 404, nil},
		{"my inductions", f.bob, "GET", "/users/@me/inductions", nil, 200, wantLen(1)},
		{"my induction, with the questions to answer", f.bob, "GET", "/users/@me/inductions/" + id, nil, 200, func(t *testing.T, r *testResponse) {
			wantKey("induction_id", id)(t, r)
			qs, _ := r.obj(t)["induction"].(map[string]any)["questions"].([]any)
			if len(qs) != 1 || qs[0].(map[string]any)["question"] != "Boots on?" {
				t.Fatalf("questions = %v", qs)
			}
		}},
		{"the list leaves questions out", f.bob, "GET", "/users/@me/inductions", nil, 200, func(t *testing.T, r *testResponse) {
			if _, ok := r.arr(t)[0]["induction"].(map[string]any)["questions"]; ok {
				t.Fatalf("the list carries questions")
			}
		}},
		{"not mine", f.alice, "GET", "/users/@me/inductions/" + id, nil, 404, nil},
		{"a member cannot unassign another", f.bob, "DELETE", path + "/users/" + carol.ID, nil, 403, nil},
		{"self unassigns", f.bob, "DELETE", path + "/users/" + f.bob.ID, nil, 200, wantKey("removed", true)},
		{"again: still 200", f.bob, "DELETE", path + "/users/" + f.bob.ID, nil, 200, wantKey("removed", false)},
		{"gone from my list", f.bob, "GET", "/users/@me/inductions", nil, 200, wantLen(0)},
	})
	// Leaving the organisation ends the assignment.
	e.must(204, carol, "DELETE", "/users/@me/organisations/"+f.acme, nil)
	e.must(404, carol, "GET", "/users/@me/inductions/"+id, nil)
}

// TestInductionRecords: completion validated by question type, the record
// captures the user's details, completes the assignment for the current
// revision until it expires, and exports as CSV and XLSX with the same rows.
func TestInductionRecords(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	ind := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site", "valid_for": 3600}).obj(t)
	id := ind["id"].(string)
	path := "/inductions/" + id
	r := e.must(200, f.alice, "PATCH", path, map[string]any{"questions": []any{
		map[string]any{"question": "Supervisor?", "type": "string"},
		map[string]any{"question": "Fit?", "type": "boolean"},
		map[string]any{"question": "Role?", "type": "enum", "values": []any{map[string]any{"value": "Worker"}, map[string]any{"value": "Visitor"}}},
	}}).obj(t)
	hash := r["revision_hash"].(string)
	qs := r["questions"].([]any)
	qid := func(i int) string { return qs[i].(map[string]any)["id"].(string) }
	visitor := qs[2].(map[string]any)["enum_values"].([]any)[1].(map[string]any)["id"].(string)
	e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"timezone_code": "Asia/Tokyo"})
	e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"first_name": "=HYPERLINK(\"x\")", "company": "Acme"})
	e.must(201, f.bob, "POST", path+"/users/"+f.bob.ID, nil)
	answers := func(a ...any) map[string]any { return map[string]any{"answers": a} }
	good := answers(
		map[string]any{"question_id": qid(0), "value": "Dana"},
		map[string]any{"question_id": qid(1), "value": true},
		map[string]any{"question_id": qid(2), "enum_id": visitor},
	)
	rec := "/users/@me/inductions/" + id + "/records"
	e.run(t, []scenario{
		{"not assigned", f.alice, "POST", rec, good, 404, nil},
		{"missing answer", f.bob, "POST", rec, answers(map[string]any{"question_id": qid(0), "value": "Dana"}), 400, wantField("answers." + qid(1))},
		{"every missing or wrong answer named at once", f.bob, "POST", rec, answers(map[string]any{"question_id": qid(1), "value": "yes"}), 400, func(t *testing.T, r *testResponse) {
			errs, _ := r.obj(t)["errors"].(map[string]any)
			if len(errs) != 3 || errs["answers."+qid(0)] == nil || errs["answers."+qid(1)] == nil || errs["answers."+qid(2)] == nil {
				t.Errorf("errors = %v, want all three questions named", errs)
			}
		}},
		{"boolean answered with text", f.bob, "POST", rec, answers(
			map[string]any{"question_id": qid(0), "value": "Dana"}, map[string]any{"question_id": qid(1), "value": "yes"},
			map[string]any{"question_id": qid(2), "enum_id": visitor}), 400, wantField("answers." + qid(1))},
		{"enum value of nothing", f.bob, "POST", rec, answers(
			map[string]any{"question_id": qid(0), "value": "Dana"}, map[string]any{"question_id": qid(1), "value": true},
			map[string]any{"question_id": qid(2), "enum_id": "123"}), 400, wantField("answers." + qid(2))},
		{"assigned and open", f.bob, "GET", "/users/@me/inductions", nil, 200, wantLen(1)},
		{"complete", f.bob, "POST", rec, good, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["induction_hash"] != hash || o["first_name"] != "=HYPERLINK(\"x\")" || o["company"] != "Acme" ||
				o["expires_at"] != "2026-11-21T10:30:00.000Z" || len(o["questions"].([]any)) != 3 {
				t.Errorf("record %v", o)
			}
		}},
		{"completed: not listed", f.bob, "GET", "/users/@me/inductions", nil, 200, wantLen(0)},
		{"completed: 404", f.bob, "GET", "/users/@me/inductions/" + id, nil, 404, nil},
		{"records of the revision", f.alice, "GET", path + "/revisions/" + hash + "/records", nil, 200, wantLen(1)},
		{"member cannot list records", f.bob, "GET", path + "/revisions/" + hash + "/records", nil, 403, nil},
		{"other organisation cannot list records", f.mallory, "GET", path + "/revisions/" + hash + "/records", nil, 403, nil},
		{"unknown revision", f.alice, "GET", path + "/revisions/" + strings.Repeat("0", 64) + "/records", nil, 404, nil},
		{"the assignment shows its record", f.alice, "GET", path + "/users/" + f.bob.ID, nil, 200, func(t *testing.T, r *testResponse) {
			if r.obj(t)["record"] == nil {
				t.Error("no record")
			}
		}},
	})
	recID := e.must(200, f.alice, "GET", path+"/revisions/"+hash+"/records", nil).arr(t)[0]["id"].(string)
	e.run(t, []scenario{
		{"a record with its answers", f.alice, "GET", "/induction-records/" + recID, nil, 200, func(t *testing.T, r *testResponse) {
			qs := r.obj(t)["questions"].([]any)
			if a := qs[2].(map[string]any)["answer"].(map[string]any); a["enum_id"] != visitor || a["value"] != "Visitor" {
				t.Errorf("answer %v", a)
			}
		}},
		{"member cannot read a record", f.bob, "GET", "/induction-records/" + recID, nil, 403, nil},
		{"other organisation cannot read a record", f.mallory, "GET", "/induction-records/" + recID, nil, 403, nil},
		{"absent record", f.alice, "GET", "/induction-records/123456789", nil, 404, nil},
		{"member cannot export", f.bob, "GET", path + "/revisions/" + hash + "/records/export-csv", nil, 403, nil},
	})
	// CSV: a byte-order mark, CRLF lines, formulas escaped, times in the
	// caller's zone (Tokyo).
	csvResp := e.must(200, f.alice, "GET", path+"/revisions/"+hash+"/records/export-csv", nil)
	if !bytes.HasPrefix(csvResp.Body, []byte(render.CSVBOM)) || bytes.Count(csvResp.Body, []byte("\r\n")) != 2 {
		t.Fatalf("csv without BOM or CRLF: %q", csvResp.Body)
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(csvResp.Body, []byte(render.CSVBOM)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{exportHeader, {"'=HYPERLINK(\"x\")", "Tester", "", "Acme", "2026-11-21 18:30", "2026-11-21 19:30"}}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("csv %q, want %q", rows, want)
	}
	// XLSX: the same rows as typed cells, text without the apostrophe.
	x := e.must(200, f.alice, "GET", path+"/revisions/"+hash+"/records/export-xlsx", nil)
	book, err := excelize.OpenReader(bytes.NewReader(x.Body))
	if err != nil {
		t.Fatal(err)
	}
	want[1][0] = "=HYPERLINK(\"x\")"
	sheet, err := book.GetRows("Induction records")
	if err != nil || !reflect.DeepEqual(sheet, want) {
		t.Fatalf("xlsx %q (%v), want %q", sheet, err, want)
	}
	checkXLSXLayout(t, x.Body, book, "Induction records", map[string]string{"A2": "text", "E2": "date", "F2": "date"})
	// A new revision needs a new record; an expired record no longer counts.
	e.must(200, f.alice, "PATCH", path, map[string]any{"description": "changed"})
	e.must(200, f.bob, "GET", "/users/@me/inductions/"+id, nil)
	e.must(200, f.alice, "PATCH", path, map[string]any{"description": ""}) // the same content as the record's revision
	e.must(404, f.bob, "GET", "/users/@me/inductions/"+id, nil)
	e.clock.Advance(2 * time.Hour)
	bob := e.tokenFor(db.User{ID: f.bob.id, Email: f.bob.Email})
	e.must(200, bob, "GET", "/users/@me/inductions/"+id, nil)
}

// TestInductionReminders: due within 7 days, overdue and expiring within
// 30 days are mailed to the assigned user, each once a day.
func TestInductionReminders(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	ind := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site", "valid_for": 40 * 24 * 3600}).obj(t)
	path := "/inductions/" + ind["id"].(string)
	now := e.clock.Now()
	e.must(201, f.alice, "POST", path+"/users/"+f.bob.ID, map[string]any{"due_at": now.Add(3 * 24 * time.Hour).Unix()})
	e.must(201, f.alice, "POST", path+"/users/"+carol.ID, map[string]any{"due_at": now.Add(-24 * time.Hour).Unix()})
	e.must(201, f.alice, "POST", path+"/users/"+f.alice.ID, map[string]any{"due_at": now.Add(60 * 24 * time.Hour).Unix()})
	subjects := func(to string) []string {
		rows, err := e.store.R.OutboxList(context.Background(), 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			if r.Recipient == to && strings.Contains(r.Subject, "induction") {
				out = append(out, r.Subject)
			}
		}
		return out
	}
	sent, err := e.srv.remindInductions(context.Background(), now)
	if err != nil || sent != 2 {
		t.Fatalf("sent %d (%v), want 2", sent, err)
	}
	if got := subjects(f.bob.Email); len(got) != 1 || !strings.Contains(got[0], "due soon") {
		t.Errorf("bob: %v", got)
	}
	if got := subjects(carol.Email); len(got) != 1 || !strings.Contains(got[0], "overdue") {
		t.Errorf("carol: %v", got)
	}
	if got := subjects(f.alice.Email); len(got) != 0 {
		t.Errorf("alice, due in 60 days: %v", got)
	}
	if sent, _ := e.srv.remindInductions(context.Background(), now.Add(time.Hour)); sent != 0 {
		t.Errorf("the same day mailed %d again", sent)
	}
	// Alice completes; 15 days later her record (valid 40 days) expires
	// within 30 days.
	e.must(201, f.alice, "POST", "/users/@me/inductions/"+ind["id"].(string)+"/records", map[string]any{"answers": []any{}})
	if sent, _ := e.srv.remindInductions(context.Background(), now.Add(15*24*time.Hour)); sent != 3 {
		t.Errorf("day 15: sent %d, want 3 (two overdue, one expiring)", sent)
	}
	if got := subjects(f.alice.Email); len(got) != 1 || !strings.Contains(got[0], "expires soon") {
		t.Errorf("alice: %v", got)
	}
}

// TestInductionReminderZone: a reminder writes the due day in the
// recipient's time zone, as notifications write times: a due time of 20:00
// UTC is the next morning in Perth, while a member with no zone chosen
// reads the UTC day. The mail (text and HTML) and the notification agree.
func TestInductionReminderZone(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"timezone_code": "Australia/Perth"})
	ind := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site"}).obj(t)
	path := "/inductions/" + ind["id"].(string)
	now := e.clock.Now().UTC()
	due := time.Date(now.Year(), now.Month(), now.Day(), 20, 0, 0, 0, time.UTC).Add(3 * 24 * time.Hour)
	for _, u := range []*testUser{f.bob, carol} {
		e.must(201, f.alice, "POST", path+"/users/"+u.ID, map[string]any{"due_at": due.Unix()})
	}
	if sent, err := e.srv.remindInductions(context.Background(), now); err != nil || sent != 2 {
		t.Fatalf("sent %d (%v), want 2", sent, err)
	}
	perth, err := time.LoadLocation("Australia/Perth")
	if err != nil {
		t.Fatal(err)
	}
	utcDay, perthDay := due.Format("Monday 2 January 2006"), due.In(perth).Format("Monday 2 January 2006")
	if utcDay == perthDay {
		t.Fatalf("the test's due time %v is the same day in Perth", due)
	}
	rows, err := e.store.R.OutboxList(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	mails := map[string]int{}
	for _, r := range rows {
		if !strings.Contains(r.Subject, "induction") {
			continue
		}
		want, not := utcDay, perthDay
		if r.Recipient == f.bob.Email {
			want, not = perthDay, utcDay
		}
		if !strings.Contains(r.Body, "is due on "+want+".") || !strings.Contains(r.Html, want) || strings.Contains(r.Body, not) {
			t.Errorf("mail to %s says %q, want the day %s", r.Recipient, r.Body, want)
		}
		mails[r.Recipient]++
	}
	if mails[f.bob.Email] != 1 || mails[carol.Email] != 1 {
		t.Errorf("reminder mails %v", mails)
	}
	var bodies []any
	for _, n := range e.must(200, f.bob, "GET", "/users/@me/notifications", nil).arr(t) {
		if n["kind"] == notifyInductionDue {
			bodies = append(bodies, n["body"])
		}
	}
	if len(bodies) != 1 || bodies[0] != "It is due on "+perthDay+"." {
		t.Errorf("bob's reminders %v", bodies)
	}
	// Another organisation's member is not reminded of acme's induction.
	if got := e.must(200, f.mallory, "GET", "/users/@me/notifications", nil).arr(t); len(got) != 0 {
		t.Errorf("an outsider was notified: %v", got)
	}
}

// TestInductionEvents: induction integrations get created, updated (a new
// revision) and completed deliveries, queued in the change's transaction.
func TestInductionEvents(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t) // no worker: deliveries only queue
	e, acme := f.e, "/organisations/"+f.acme
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "induction", "provider": "github",
		"configuration": `{"url": "https://hooks.example/induction"}`}).obj(t)["id"].(string)
	id := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site"}).obj(t)["id"].(string)
	q := e.must(200, f.alice, "PATCH", "/inductions/"+id, map[string]any{"questions": []any{map[string]any{"question": "Fit?", "type": "boolean"}}}).obj(t)
	qid := q["questions"].([]any)[0].(map[string]any)["id"].(string)
	e.must(201, f.bob, "POST", "/inductions/"+id+"/users/"+f.bob.ID, nil)
	e.must(201, f.bob, "POST", "/users/@me/inductions/"+id+"/records", map[string]any{"answers": []any{map[string]any{"question_id": qid, "value": true}}})
	rows, err := e.store.Writer.Query(`SELECT event FROM integration_deliveries WHERE integration_id = ? ORDER BY id`, parseTestID(t, integ))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var ev string
		_ = rows.Scan(&ev)
		got = append(got, ev)
	}
	if strings.Join(got, ",") != "induction.created,induction.updated,induction.completed" {
		t.Errorf("events %v", got)
	}
}
