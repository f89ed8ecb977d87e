package server

import (
	"strings"
	"testing"
)

// A held talk is a record of what was presented and who was invited
// (issue 29): its sections, topics' wording and place, sessions and
// invitations refuse changes with 409, while the meeting's own notes,
// check-ins and signatures go on. Another organisation's member meets 403
// before any of that.
func TestToolboxHeldIsReadOnly(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	id := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Lifting"}).obj(t)["id"].(string)
	tp := "/toolboxes/" + id
	sec := e.must(201, f.alice, "POST", tp+"/sections", map[string]any{"title": "Slings"}).obj(t)["id"].(string)
	empty := e.must(201, f.alice, "POST", tp+"/sections", map[string]any{"title": "Spare"}).obj(t)["id"].(string)
	topic := e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"section_id": sec, "body": "Check the tag"}).obj(t)["id"].(string)
	sid := e.must(201, f.alice, "POST", tp+"/schedules", map[string]any{"scheduled_start_at": "2026-11-21T07:00:00Z",
		"scheduled_finish_at": "2026-11-21T08:00:00Z", "invitee_ids": []string{f.bob.ID}}).obj(t)["id"].(string)
	sp := "/schedules/" + sid

	held := func(what string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			if m, _ := r.obj(t)["message"].(string); !strings.Contains(m, "has been held") || !strings.Contains(m, what) {
				t.Errorf("message %q, want it to say the talk was held and name %s", m, what)
			}
		}
	}
	e.run(t, []scenario{
		{"before the meeting a section is added", f.bob, "POST", tp + "/sections", map[string]any{"title": "Before"}, 201, wantKey("title", "Before")},
		{"before the meeting another organisation still cannot", f.mallory, "POST", tp + "/sections", map[string]any{"title": "X"}, 403, nil},
		{"the meeting starts", f.alice, "POST", tp + "/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12}, 200, nil},
	})
	drawn := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 600 200"><path d="M10 10 L50 60" fill="none" stroke="#000"/></svg>`
	e.run(t, []scenario{
		{"no new section", f.alice, "POST", tp + "/sections", map[string]any{"title": "Late"}, 409, held("sections")},
		{"no renamed section", f.alice, "PATCH", tp + "/sections/" + sec, map[string]any{"title": "Renamed"}, 409, held("sections")},
		{"no moved section", f.alice, "PATCH", tp + "/sections/" + empty, map[string]any{"order": 1}, 409, held("sections")},
		{"no removed section", f.alice, "DELETE", tp + "/sections/" + empty, nil, 409, held("sections")},
		{"no new topic", f.alice, "POST", tp + "/topics", map[string]any{"section_id": sec, "body": "Late"}, 409, held("topics")},
		{"no reworded topic", f.alice, "PATCH", tp + "/topics/" + topic, map[string]any{"body": "Other words"}, 409, held("topics")},
		{"no topic moved to the top level", f.alice, "PATCH", tp + "/topics/" + topic, map[string]any{"section_id": nil}, 409, held("topics")},
		{"no removed topic", f.alice, "DELETE", tp + "/topics/" + topic, nil, 409, held("topics")},
		{"the review is the meeting's note", f.bob, "PATCH", tp + "/topics/" + topic, map[string]any{"review_response": true}, 200, wantKey("review_response", true)},
		{"so are comments, with the same words", f.bob, "PATCH", tp + "/topics/" + topic, map[string]any{"comments": "All tagged", "body": "Check the tag"}, 200, wantKey("comments", "All tagged")},
		{"no new session", f.alice, "POST", tp + "/schedules", map[string]any{"scheduled_start_at": "2026-11-22T07:00:00Z", "scheduled_finish_at": "2026-11-22T08:00:00Z"}, 409, held("sessions")},
		{"no new session times", f.alice, "PATCH", sp, map[string]any{"scheduled_start_at": "2026-11-21T06:00:00Z"}, 409, held("sessions")},
		{"the actual start is recorded", f.alice, "PATCH", sp, map[string]any{"actual_start_at": "2026-11-21T07:04:00Z"}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["actual_start_at"] == nil || o["scheduled_start_at"] != "2026-11-21T07:00:00.000Z" {
				t.Errorf("got %v", o)
			}
		}},
		{"no removed session", f.alice, "DELETE", sp, nil, 409, held("sessions")},
		{"no new invitee", f.alice, "PUT", sp + "/invitees/" + carol.ID, nil, 409, held("invitations")},
		{"no removed invitee", f.alice, "DELETE", sp + "/invitees/" + f.bob.ID, nil, 409, held("invitations")},
		{"another organisation: sections", f.mallory, "POST", tp + "/sections", map[string]any{"title": "X"}, 403, nil},
		{"another organisation: topics", f.mallory, "PATCH", tp + "/topics/" + topic, map[string]any{"body": "X"}, 403, nil},
		{"another organisation: invitees", f.mallory, "PUT", sp + "/invitees/" + f.mallory.ID, nil, 403, nil},
		{"another organisation: sessions", f.mallory, "DELETE", sp, nil, 403, nil},
		{"bob checks in at the held talk", f.bob, "POST", sp + "/check-in", map[string]any{}, 200, nil},
		{"a drawn signature with a script is refused", f.bob, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid,
			"signature": `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`}, 400, nil},
		{"a drawn signature of the wrong type", f.bob, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid, "signature": 5}, 400, wantField("signature")},
		{"bob signs with a signature drawn on his phone", f.bob, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid, "signature": drawn}, 200, wantKey("response_code", "toolbox_signed")},
	})
	tb := e.must(200, f.alice, "GET", tp, nil).obj(t)
	users := tb["users"].([]any)
	if len(users) != 1 {
		t.Fatalf("signatures %v", users)
	}
	u := users[0].(map[string]any)
	// Drawn for this talk, reached in the app: the method says signature.
	if sig, _ := u["signature"].(string); !strings.Contains(sig, `d="M10 10 L50 60"`) || u["recorded_by"] != nil || u["signed_method"] != "signature" {
		t.Errorf("bob's signature %v", u)
	}
	sections := tb["sections"].([]any)
	if len(sections) != 3 || sections[0].(map[string]any)["title"] != "Slings" {
		t.Errorf("sections changed: %v", sections)
	}
}
