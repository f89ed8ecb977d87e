package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"workspace/db"
	"workspace/server/perm"
)

// Helpers of the organisations area tests.

// addPending puts u into the organisation as a pending member.
func (e *testEnv) addPending(orgID string, u *testUser) {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		return q.MemberCreate(context.Background(), db.MemberCreateParams{OrganisationID: int64(oid), UserID: u.id, Pending: true, JoinedAt: e.srv.nowText()})
	})
	if err != nil {
		e.t.Fatalf("add pending member: %v", err)
	}
}

// addEmail gives u another e-mail address.
func (e *testEnv) addEmail(u *testUser, email string, verified bool) {
	e.t.Helper()
	err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		_, err := q.UserEmailCreate(context.Background(), db.UserEmailCreateParams{
			ID: e.store.IDs.Next(), UserID: u.id, Email: email, IsVerified: verified, CreatedAt: e.srv.nowText(),
		})
		return err
	})
	if err != nil {
		e.t.Fatalf("add e-mail: %v", err)
	}
}

// grant sets organisation grants for a role, user or @everyone as u.
func (e *testEnv) grant(u *testUser, orgID, target string, perms map[string]string) {
	e.t.Helper()
	e.must(http.StatusOK, u, "PUT", "/organisations/"+orgID+"/permissions/"+target, map[string]any{"permissions": perms})
}

// role creates a role as u and returns its id.
func (e *testEnv) role(u *testUser, orgID, alias string) string {
	e.t.Helper()
	return e.must(http.StatusCreated, u, "POST", "/organisations/"+orgID+"/roles", map[string]any{"alias": alias}).obj(e.t)["id"].(string)
}

// assign gives member the role, as u.
func (e *testEnv) assign(u *testUser, orgID string, member *testUser, roleID string) {
	e.t.Helper()
	e.must(http.StatusNoContent, u, "PUT", "/organisations/"+orgID+"/members/"+member.ID+"/roles/"+roleID, nil)
}

// orgFixture: alice owns Acme with bob a member, pen a pending member;
// mallory owns Evil (another organisation); nobody is in none.
type orgFixture struct {
	e                                *testEnv
	alice, bob, pen, mallory, nobody *testUser
	acme, evil                       string
}

func newOrgFixture(t *testing.T, opts ...func(*Config)) *orgFixture {
	e := newEnv(t, opts...)
	f := &orgFixture{e: e, alice: e.user("alice"), bob: e.user("bob"), pen: e.user("pen"), mallory: e.user("mallory"), nobody: e.user("nobody")}
	f.acme = e.org(f.alice, "Acme")
	f.evil = e.org(f.mallory, "Evil")
	e.addMember(f.acme, f.bob)
	e.addPending(f.acme, f.pen)
	return f
}

func TestOrganisationGetPatchDelete(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"owner reads with member_count", f.alice, "GET", acme, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["member_count"] != float64(2) || o["name"] != "Acme" || o["owned_by"].(map[string]any)["id"] != f.alice.ID {
				t.Errorf("got %v, want Acme owned by alice with 2 members (pending not counted)", o)
			}
		}},
		{"member reads", f.bob, "GET", acme, nil, 200, nil},
		{"pending member has no access", f.pen, "GET", acme, nil, 403, nil},
		{"member of another organisation", f.mallory, "GET", acme, nil, 403, nil},
		{"no token", nil, "GET", acme, nil, 401, nil},
		{"absent organisation", f.alice, "GET", "/organisations/123456789", nil, 404, nil},
		{"not a snowflake", f.alice, "GET", "/organisations/abc", nil, 400, nil},

		{"member without MANAGE_ORGANISATION", f.bob, "PATCH", acme, map[string]any{"name": "Bobco"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", acme, map[string]any{"name": "Evil2"}, 403, nil},
		{"name too short", f.alice, "PATCH", acme, map[string]any{"name": "A"}, 400, wantField("name")},
		{"name too long", f.alice, "PATCH", acme, map[string]any{"name": strings.Repeat("n", 101)}, 400, wantField("name")},
		{"code over 12", f.alice, "PATCH", acme, map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"default_branch_name too short", f.alice, "PATCH", acme, map[string]any{"default_branch_name": "x"}, 400, wantField("default_branch_name")},
		{"read-only id", f.alice, "PATCH", acme, map[string]any{"id": "1"}, 400, wantField("id")},
		{"read-only owned_by", f.alice, "PATCH", acme, map[string]any{"owned_by": map[string]any{"id": f.bob.ID}}, 400, wantField("owned_by")},
		{"read-only is_verified", f.alice, "PATCH", acme, map[string]any{"is_verified": true}, 400, wantField("is_verified")},
		{"wrong type", f.alice, "PATCH", acme, map[string]any{"member_approval": "yes"}, 400, wantField("member_approval")},
		{"malformed JSON", f.alice, "PATCH", acme, `{"name":`, 400, nil},
		{"not an object", f.alice, "PATCH", acme, `[1]`, 400, nil},
		{"restrict_email_domain needs an approved domain", f.alice, "PATCH", acme, map[string]any{"restrict_email_domain": true}, 400, wantField("restrict_email_domain")},
		{"nothing changed by refused patches", f.alice, "GET", acme, nil, 200, wantKey("name", "Acme")},
		{"owner patches", f.alice, "PATCH", acme, map[string]any{"name": " Acme Ltd ", "description": "d", "location": "Perth", "code": "ACME",
			"default_branch_name": "trunk", "member_approval": true, "unknown": 1}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["name"] != "Acme Ltd" || o["code"] != "ACME" || o["location"] != "Perth" || o["default_branch_name"] != "trunk" || o["member_approval"] != true {
				t.Errorf("got %v", o)
			}
		}},
	})
	// A MANAGE_ORGANISATION grant lets bob patch.
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"MANAGE_ORGANISATION": "allow"})
	e.run(t, []scenario{
		{"granted member patches", f.bob, "PATCH", acme, map[string]any{"description": "by bob"}, 200, wantKey("description", "by bob")},
		{"granted member cannot delete", f.bob, "DELETE", acme, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", acme, nil, 403, nil},
		{"owner deletes", f.alice, "DELETE", acme, nil, 204, nil},
		{"deleted: get", f.alice, "GET", acme, nil, 404, nil},
		{"deleted: patch", f.alice, "PATCH", acme, map[string]any{"name": "Back"}, 404, nil},
		{"deleted: delete again", f.alice, "DELETE", acme, nil, 404, nil},
		{"deleted: roles list is 400", f.alice, "GET", acme + "/roles", nil, 400, nil},
		{"other organisation untouched", f.mallory, "GET", "/organisations/" + f.evil, nil, 200, wantKey("is_deleted", false)},
	})
	var deletedBy *int64
	err := e.store.Reader.QueryRow(`SELECT deleted_by FROM organisations WHERE id = ?`, f.acme).Scan(&deletedBy)
	if err != nil || deletedBy == nil || *deletedBy != f.alice.id {
		t.Errorf("deleted_by: got %v (%v), want alice", deletedBy, err)
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("Carol")
	e.addMember(f.acme, carol)
	names := func(want ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			var got []string
			for _, m := range r.arr(t) {
				got = append(got, m["user"].(map[string]any)["first_name"].(string))
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("got %v, want %v", got, want)
			}
		}
	}
	e.run(t, []scenario{
		{"list all, pending included", f.bob, "GET", acme + "/members", nil, 200, names("alice", "bob", "pen", "Carol")},
		{"filter by first name prefix, any case", f.bob, "GET", acme + "/members?filter=CA", nil, 200, names("Carol")},
		{"filter by last name", f.bob, "GET", acme + "/members?filter=test", nil, 200, names("alice", "bob", "pen", "Carol")},
		{"filter by e-mail", f.bob, "GET", acme + "/members?filter=bob@ex", nil, 200, names("bob")},
		{"filter is a prefix, not a substring", f.bob, "GET", acme + "/members?filter=lice", nil, 200, names()},
		{"pending member cannot list", f.pen, "GET", acme + "/members", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/members", nil, 403, nil},
		{"absent organisation", f.alice, "GET", "/organisations/42/members", nil, 404, nil},

		{"get a member", f.bob, "GET", acme + "/members/" + f.alice.ID, nil, 200, func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["is_owner"] != true || m["pending"] != false || m["joined_at"] == "" {
				t.Errorf("got %v", m)
			}
		}},
		{"get a pending member", f.alice, "GET", acme + "/members/" + f.pen.ID, nil, 200, wantKey("pending", true)},
		{"get a non-member", f.alice, "GET", acme + "/members/" + f.mallory.ID, nil, 404, nil},
		{"other organisation cannot get a member", f.mallory, "GET", acme + "/members/" + f.bob.ID, nil, 403, nil},
		{"bad user id", f.alice, "GET", acme + "/members/x", nil, 400, nil},

		{"member cannot approve", f.bob, "PATCH", acme + "/members/" + f.pen.ID, map[string]any{"pending": false}, 403, nil},
		{"other organisation cannot approve", f.mallory, "PATCH", acme + "/members/" + f.pen.ID, map[string]any{"pending": false}, 403, nil},
		{"pending true refused", f.alice, "PATCH", acme + "/members/" + f.bob.ID, map[string]any{"pending": true}, 400, wantField("pending")},
		{"read-only is_owner", f.alice, "PATCH", acme + "/members/" + f.bob.ID, map[string]any{"is_owner": true}, 400, wantField("is_owner")},
		{"approve a non-member", f.alice, "PATCH", acme + "/members/" + f.mallory.ID, map[string]any{"pending": false}, 404, nil},
		{"owner approves", f.alice, "PATCH", acme + "/members/" + f.pen.ID, map[string]any{"pending": false}, 200, wantKey("pending", false)},
		{"approved member reads", f.pen, "GET", acme, nil, 200, wantKey("member_count", float64(4))},

		{"member cannot remove", f.bob, "DELETE", acme + "/members/" + carol.ID, nil, 403, nil},
		{"other organisation cannot remove", f.mallory, "DELETE", acme + "/members/" + carol.ID, nil, 403, nil},
		{"owner cannot be removed", f.alice, "DELETE", acme + "/members/" + f.alice.ID, nil, 400, nil},
		{"remove a non-member", f.alice, "DELETE", acme + "/members/" + f.mallory.ID, nil, 404, nil},
		{"owner removes", f.alice, "DELETE", acme + "/members/" + carol.ID, nil, 204, nil},
		{"removed member has no access", carol, "GET", acme, nil, 403, nil},
	})
}

func TestBans(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	inv := e.must(201, f.alice, "POST", acme+"/invites", map[string]any{}).obj(t)["code"].(string)
	e.run(t, []scenario{
		{"member cannot ban", f.bob, "PUT", acme + "/bans/" + f.pen.ID, map[string]any{"reason": "x"}, 403, nil},
		{"other organisation cannot ban", f.mallory, "PUT", acme + "/bans/" + f.bob.ID, map[string]any{"reason": "x"}, 403, nil},
		{"owner cannot be banned", f.alice, "PUT", acme + "/bans/" + f.alice.ID, map[string]any{"reason": "x"}, 400, nil},
		{"an id no account holds is banned like a stranger", f.alice, "PUT", acme + "/bans/987654321", map[string]any{"reason": "x"}, 200, wantOnlyUserID("987654321")},
		{"reason wrong type", f.alice, "PUT", acme + "/bans/" + f.bob.ID, map[string]any{"reason": 5}, 400, wantField("reason")},
		{"ban a member", f.alice, "PUT", acme + "/bans/" + f.bob.ID, map[string]any{"reason": "spam"}, 200, func(t *testing.T, r *testResponse) {
			b := r.obj(t)
			if b["reason"] != "spam" || b["user"].(map[string]any)["id"] != f.bob.ID || b["banned_at"] == "" {
				t.Errorf("got %v", b)
			}
		}},
		{"the ban removed the membership", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 404, nil},
		{"banned user has no access", f.bob, "GET", acme, nil, 403, nil},
		{"banned user cannot use an invite", f.bob, "POST", "/invites/" + inv, nil, 403, nil},
		{"ban a non-member in advance", f.alice, "PUT", acme + "/bans/" + f.nobody.ID, map[string]any{}, 200, wantOnlyUserID(f.nobody.ID)},
		{"banning again updates the reason", f.alice, "PUT", acme + "/bans/" + f.bob.ID, map[string]any{"reason": "spam again"}, 200, wantKey("reason", "spam again")},
		{"list bans", f.alice, "GET", acme + "/bans", nil, 200, func(t *testing.T, r *testResponse) {
			bans := r.arr(t)
			if len(bans) != 3 {
				t.Fatalf("got %d bans, want 3", len(bans))
			}
			for _, b := range bans {
				u := b["user"].(map[string]any)
				switch u["id"] {
				case f.bob.ID: // a member when banned: shown in full
					if u["email"] != f.bob.Email {
						t.Errorf("bob: got %v, want his user object", u)
					}
				default: // never a member: the id only
					if len(u) != 1 {
						t.Errorf("stranger: got %v, want only the id", u)
					}
				}
			}
		}},
		{"member cannot list bans", f.pen, "GET", acme + "/bans", nil, 403, nil},
		{"other organisation cannot list bans", f.mallory, "GET", acme + "/bans", nil, 403, nil},
		{"other organisation cannot lift", f.mallory, "DELETE", acme + "/bans/" + f.bob.ID, nil, 403, nil},
		{"lift the ban", f.alice, "DELETE", acme + "/bans/" + f.bob.ID, nil, 204, nil},
		{"lift again", f.alice, "DELETE", acme + "/bans/" + f.bob.ID, nil, 404, nil},
		{"lift the ban of an id no account holds", f.alice, "DELETE", acme + "/bans/987654321", nil, 204, nil},
		{"unbanned user uses the invite", f.bob, "POST", "/invites/" + inv, nil, 200, nil},
		{"other organisation's bans are its own", f.mallory, "GET", "/organisations/" + f.evil + "/bans", nil, 200, wantLen(0)},
	})
}

func TestMyOrganisations(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	find := func(t *testing.T, r *testResponse, id string) map[string]any {
		t.Helper()
		for _, o := range r.arr(t) {
			if o["id"] == id {
				return o
			}
		}
		t.Fatalf("organisation %s not listed: %s", id, r.Body)
		return nil
	}
	t.Run("owner holds everything", func(t *testing.T) {
		r := e.must(200, f.alice, "GET", "/users/@me/organisations", nil)
		if n := len(r.arr(t)); n != 1 {
			t.Fatalf("got %d organisations, want 1", n)
		}
		o := find(t, r, f.acme)
		perms := o["permissions"].(map[string]any)
		if len(perms) != 18 {
			t.Errorf("got %d permissions, want all 18", len(perms))
		}
		for k, v := range perms {
			if v != true {
				t.Errorf("owner %s = %v, want true", k, v)
			}
		}
		ou := o["organisation_user"].(map[string]any)
		if ou["is_owner"] != true || ou["pending"] != false || ou["joined_at"] == "" || ou["notification_email_id"] != nil {
			t.Errorf("organisation_user: got %v", ou)
		}
		if _, ok := o["features"].(map[string]any); !ok {
			t.Errorf("features: got %v, want an object", o["features"])
		}
	})
	t.Run("member holds @everyone's defaults", func(t *testing.T) {
		perms := find(t, e.must(200, f.bob, "GET", "/users/@me/organisations", nil), f.acme)["permissions"].(map[string]any)
		for k, v := range perms {
			want := k == "VIEW_PROJECTS" || k == "VIEW_WORKITEMS" || k == "VIEW_DOCUMENTS"
			if v != want {
				t.Errorf("%s = %v, want %v", k, v, want)
			}
		}
	})
	t.Run("pending membership listed with nothing allowed", func(t *testing.T) {
		o := find(t, e.must(200, f.pen, "GET", "/users/@me/organisations", nil), f.acme)
		if o["organisation_user"].(map[string]any)["pending"] != true {
			t.Errorf("pending: got %v", o["organisation_user"])
		}
		for k, v := range o["permissions"].(map[string]any) {
			if v != false {
				t.Errorf("%s = %v, want false", k, v)
			}
		}
	})
	t.Run("no organisations, and deleted ones vanish", func(t *testing.T) {
		e.run(t, []scenario{
			{"none", f.nobody, "GET", "/users/@me/organisations", nil, 200, wantLen(0)},
			{"delete Evil", f.mallory, "DELETE", "/organisations/" + f.evil, nil, 204, nil},
			{"deleted gone", f.mallory, "GET", "/users/@me/organisations", nil, 200, wantLen(0)},
			{"no token", nil, "GET", "/users/@me/organisations", nil, 401, nil},
		})
	})
}

// TestOrganisationsNo5xx throws malformed ids and bodies at every route of
// the area, as owner, outsider and nobody: no answer may be a 5xx.
func TestOrganisationsNo5xx(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	role := e.role(f.alice, f.acme, "Role")
	code := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/invites", nil).obj(t)["code"].(string)
	dom := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/domains", map[string]any{"domain": "acme.test"}).obj(t)["id"].(string)
	routes := []struct{ method, path string }{
		{"GET", "/organisations/{org}"}, {"PATCH", "/organisations/{org}"},
		{"GET", "/organisations/{org}/members"}, {"GET", "/organisations/{org}/members/{user}"},
		{"PATCH", "/organisations/{org}/members/{user}"}, {"DELETE", "/organisations/{org}/members/{user}"},
		{"GET", "/organisations/{org}/bans"}, {"PUT", "/organisations/{org}/bans/{user}"}, {"DELETE", "/organisations/{org}/bans/{user}"},
		{"POST", "/organisations/{org}/domains"}, {"GET", "/organisations/{org}/domains"},
		{"PATCH", "/organisations/{org}/domains/{domain}"}, {"DELETE", "/organisations/{org}/domains/{domain}"},
		{"POST", "/organisations/{org}/domains/{domain}/verify"},
		{"GET", "/organisations/{org}/roles"}, {"POST", "/organisations/{org}/roles"}, {"PATCH", "/organisations/{org}/roles"},
		{"PUT", "/organisations/{org}/members/{user}/roles/{role}"}, {"DELETE", "/organisations/{org}/members/{user}/roles/{role}"},
		{"GET", "/organisations/{org}/permissions"}, {"PUT", "/organisations/{org}/permissions/{role}"},
		{"GET", "/roles/{role}"}, {"PATCH", "/roles/{role}"}, {"GET", "/roles/{role}/members"},
		{"POST", "/organisations/{org}/invites"}, {"GET", "/organisations/{org}/invites"},
		{"GET", "/invites/{code}"}, {"PATCH", "/invites/{code}"}, {"POST", "/invites/{code}"},
		{"GET", "/users/@me/organisations"},
		{"DELETE", "/roles/{role}"}, {"DELETE", "/invites/{code}"}, {"DELETE", "/organisations/{org}"},
	}
	ids := []map[string]string{
		{"{org}": f.acme, "{user}": f.bob.ID, "{role}": role, "{domain}": dom, "{code}": code},
		{"{org}": f.evil, "{user}": f.alice.ID, "{role}": f.acme, "{domain}": "1", "{code}": "1"},
		{"{org}": "0", "{user}": "-1", "{role}": "99999999999999999999", "{domain}": "x", "{code}": "%20"},
		{"{org}": "9223372036854775807", "{user}": "9223372036854775807", "{role}": "9223372036854775807", "{domain}": "9223372036854775807", "{code}": "a"},
	}
	bodies := []any{nil, "", "{", "[]", `"s"`, "null", "1", `{"name":null,"alias":null,"permissions":null,"id":null,"order":null}`,
		map[string]any{"name": 1, "alias": []int{1}, "description": false, "code": 5, "pending": "no", "reason": 1, "domain": 1,
			"is_approved": "x", "email": 1, "expires_at": 1, "approval": 1, "auto_add": "y", "order": 1e30, "id": "x", "permissions": []int{}},
		map[string]any{"permissions": map[string]any{"VIEW_PROJECTS": 1}},
		map[string]any{"permissions": map[string]string{}},
		map[string]any{"id": "1", "order": 9223372036854775807},
		map[string]any{"expires_at": "9999-12-31T23:59:59Z", "domain": "a.b"},
	}
	for _, as := range []*testUser{f.mallory, nil, f.alice} {
		for _, rt := range routes {
			for _, set := range ids {
				path := rt.path
				for k, v := range set {
					path = strings.ReplaceAll(path, k, v)
				}
				for _, b := range bodies {
					if r := e.do(as, rt.method, path, b); r.Status >= 500 {
						t.Fatalf("%s %s %v: status %d: %s", rt.method, path, b, r.Status, r.Body)
					}
				}
			}
		}
	}
}

func TestOrganisationCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	mine := func(want int) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			if got := len(r.arr(t)); got != want {
				t.Errorf("got %d organisations, want %d", got, want)
			}
		}
	}
	var id string
	e.run(t, []scenario{
		{"creates with the caller as owner and first member", alice, "POST", "/organisations", map[string]any{"name": "  Acme  ", "code": "AC", "description": "d", "location": "Perth"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			id, _ = o["id"].(string)
			if o["name"] != "Acme" || o["code"] != "AC" || o["description"] != "d" || o["location"] != "Perth" ||
				o["member_count"] != float64(1) || o["is_deleted"] != false || o["owned_by"].(map[string]any)["id"] != alice.ID {
				t.Errorf("got %v", o)
			}
		}},
		{"name of 2 characters", alice, "POST", "/organisations", map[string]any{"name": "ab"}, 201, wantKey("name", "ab")},
		{"name of 100 characters", alice, "POST", "/organisations", map[string]any{"name": strings.Repeat("é", 100)}, 201, nil},
		{"name missing", alice, "POST", "/organisations", map[string]any{}, 400, wantField("name")},
		{"name too short", alice, "POST", "/organisations", map[string]any{"name": "a"}, 400, wantField("name")},
		{"name too short once trimmed", alice, "POST", "/organisations", map[string]any{"name": "  a  "}, 400, wantField("name")},
		{"name too long", alice, "POST", "/organisations", map[string]any{"name": strings.Repeat("n", 101)}, 400, wantField("name")},
		{"name wrong type", alice, "POST", "/organisations", map[string]any{"name": 5}, 400, wantField("name")},
		{"code over 12", alice, "POST", "/organisations", map[string]any{"name": "Acme", "code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"malformed JSON", alice, "POST", "/organisations", `{"name":`, 400, nil},
		{"no token", nil, "POST", "/organisations", map[string]any{"name": "Acme"}, 401, nil},
		{"refused requests created nothing", alice, "GET", "/users/@me/organisations", nil, 200, mine(3)},
	})
	e.run(t, []scenario{
		{"the owner is listed as a member", alice, "GET", "/organisations/" + id + "/members", nil, 200, func(t *testing.T, r *testResponse) {
			m := r.arr(t)
			if len(m) != 1 || m[0]["is_owner"] != true || m[0]["pending"] != false || m[0]["user"].(map[string]any)["id"] != alice.ID {
				t.Errorf("got %v", m)
			}
		}},
	})
}

// TestPendingMemberAndAbsentOrganisation: a pending member holding every
// permission through a user grant is still no member on every row of the
// area; an absent or deleted organisation answers each row's status.
func TestPendingMemberAndAbsentOrganisation(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	all := map[string]string{}
	for _, c := range perm.Catalogue {
		all[c.Name] = "allow"
	}
	e.grant(f.alice, f.acme, f.pen.ID, all)
	role := e.role(f.alice, f.acme, "Role")
	dom := e.must(201, f.alice, "POST", acme+"/domains", map[string]any{"domain": "acme.test"}).obj(t)["id"].(string)
	code := e.must(201, f.alice, "POST", acme+"/invites", nil).obj(t)["code"].(string)
	gone := e.org(f.alice, "Gone")
	goneRole := e.role(f.alice, gone, "Gone role")
	goneDom := e.must(201, f.alice, "POST", "/organisations/"+gone+"/domains", map[string]any{"domain": "gone.test"}).obj(t)["id"].(string)
	goneCode := e.must(201, f.alice, "POST", "/organisations/"+gone+"/invites", nil).obj(t)["code"].(string)
	e.must(204, f.alice, "DELETE", "/organisations/"+gone, nil)

	// Each row with the status an absent organisation answers.
	type row struct {
		method, path string
		body         any
		absent       int
	}
	rows := func(org, role, dom string) []row {
		o := "/organisations/" + org
		return []row{
			{"GET", o, nil, 404},
			{"PATCH", o, map[string]any{"name": "Taken"}, 404},
			{"DELETE", o, nil, 404},
			{"GET", o + "/members", nil, 404},
			{"GET", o + "/members/" + f.bob.ID, nil, 404},
			{"PATCH", o + "/members/" + f.pen.ID, map[string]any{"pending": false}, 404},
			{"DELETE", o + "/members/" + f.bob.ID, nil, 404},
			{"GET", o + "/bans", nil, 404},
			{"PUT", o + "/bans/" + f.bob.ID, map[string]any{"reason": "x"}, 404},
			{"DELETE", o + "/bans/" + f.bob.ID, nil, 404},
			{"POST", o + "/domains", map[string]any{"domain": "pen.test"}, 404},
			{"GET", o + "/domains", nil, 404},
			{"PATCH", o + "/domains/" + dom, map[string]any{"is_approved": false}, 404},
			{"DELETE", o + "/domains/" + dom, nil, 404},
			{"POST", o + "/domains/" + dom + "/verify", nil, 404},
			{"GET", o + "/roles", nil, 400},
			{"POST", o + "/roles", map[string]any{"alias": "Mine"}, 400},
			{"PATCH", o + "/roles", map[string]any{"id": role, "order": 0}, 400},
			{"PUT", o + "/members/" + f.bob.ID + "/roles/" + role, nil, 400},
			{"DELETE", o + "/members/" + f.bob.ID + "/roles/" + role, nil, 400},
			{"GET", o + "/permissions", nil, 404},
			{"PUT", o + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"CREATE_INVITE": "allow"}}, 404},
			{"GET", "/roles/" + role, nil, 400},
			{"PATCH", "/roles/" + role, map[string]any{"alias": "Mine"}, 400},
			{"GET", "/roles/" + role + "/members", nil, 400},
			{"DELETE", "/roles/" + role, nil, 400},
			{"POST", o + "/invites", nil, 404},
			{"GET", o + "/invites", nil, 404},
		}
	}
	var pending []scenario
	for _, r := range rows(f.acme, role, dom) {
		pending = append(pending, scenario{"pending: " + r.method + " " + r.path, f.pen, r.method, r.path, r.body, 403, nil})
	}
	pending = append(pending,
		scenario{"pending: PATCH invite", f.pen, "PATCH", "/invites/" + code, map[string]any{"approval": true}, 403, nil},
		scenario{"pending: DELETE invite", f.pen, "DELETE", "/invites/" + code, nil, 403, nil},
	)
	e.run(t, pending)

	var absent []scenario
	for _, r := range rows("42", "42", "42") {
		absent = append(absent, scenario{"absent: " + r.method + " " + r.path, f.alice, r.method, r.path, r.body, r.absent, nil})
	}
	for _, r := range rows(gone, goneRole, goneDom) {
		absent = append(absent, scenario{"deleted: " + r.method + " " + r.path, f.alice, r.method, r.path, r.body, r.absent, nil})
	}
	absent = append(absent,
		scenario{"deleted: GET invite", f.alice, "GET", "/invites/" + goneCode, nil, 404, nil},
		scenario{"deleted: PATCH invite", f.alice, "PATCH", "/invites/" + goneCode, map[string]any{"approval": true}, 404, nil},
		scenario{"deleted: DELETE invite", f.alice, "DELETE", "/invites/" + goneCode, nil, 404, nil},
		scenario{"deleted: POST invite", f.bob, "POST", "/invites/" + goneCode, nil, 400, nil},
	)
	e.run(t, absent)

	e.run(t, []scenario{
		{"pen is still pending", f.alice, "GET", acme + "/members/" + f.pen.ID, nil, 200, wantKey("pending", true)},
		{"bob is still a member", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 200, wantKey("pending", false)},
		{"the organisation is unchanged", f.alice, "GET", acme, nil, 200, wantKey("name", "Acme")},
		{"the role is unchanged", f.alice, "GET", "/roles/" + role, nil, 200, wantKey("name", "Role")},
		{"no ban", f.alice, "GET", acme + "/bans", nil, 200, wantLen(0)},
		{"the domain is kept", f.alice, "GET", acme + "/domains", nil, 200, wantLen(1)},
		{"the invite is pending", f.alice, "GET", "/invites/" + code, nil, 200, wantKey("status", "pending")},
		{"a pending member can be given a role", f.alice, "PUT", acme + "/members/" + f.pen.ID + "/roles/" + role, nil, 204, nil},
		{"and still has no access", f.pen, "GET", "/roles/" + role, nil, 403, nil},
	})
}

// TestRoleCreateConcurrent: roles created at once get the orders 0..n-1,
// each once.
func TestRoleCreateConcurrent(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do(f.alice, "POST", acme+"/roles", map[string]any{"alias": fmt.Sprintf("Role %d", i)}).Status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusCreated {
			t.Fatalf("request %d: got %d, want 201", i, s)
		}
	}
	roles := e.must(200, f.alice, "GET", acme+"/roles", nil).arr(t)
	if len(roles) != n+1 {
		t.Fatalf("got %d roles, want %d", len(roles), n+1)
	}
	for i, r := range roles {
		if r["order"] != float64(i) {
			t.Errorf("role %d (%v): order %v, want %d", i, r["name"], r["order"], i)
		}
	}
}

// TestMemberListRoles: each listed member carries its own roles, highest
// first, and nobody else's.
func TestMemberListRoles(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	low := e.role(f.alice, f.acme, "Low")
	high := e.role(f.alice, f.acme, "High")
	e.must(200, f.alice, "PATCH", acme+"/roles", map[string]any{"id": high, "order": 0})
	e.assign(f.alice, f.acme, f.bob, low)
	e.assign(f.alice, f.acme, f.bob, high)
	e.assign(f.alice, f.acme, f.pen, low)
	e.role(f.mallory, f.evil, "Evil")
	want := map[string]string{f.alice.ID: "", f.bob.ID: high + "," + low, f.pen.ID: low}
	e.run(t, []scenario{
		{"roles per member", f.bob, "GET", acme + "/members", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != len(want) {
				t.Fatalf("got %d members, want %d", len(list), len(want))
			}
			for _, m := range list {
				id := m["user"].(map[string]any)["id"].(string)
				var got []string
				for _, r := range m["roles"].([]any) {
					got = append(got, r.(string))
				}
				if strings.Join(got, ",") != want[id] {
					t.Errorf("member %s: got roles %v, want %s", id, got, want[id])
				}
			}
		}},
	})
}

// wantOnlyUserID checks a ban answer names its user by id and nothing more.
func wantOnlyUserID(id string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		u, _ := r.obj(t)["user"].(map[string]any)
		if len(u) != 1 || u["id"] != id {
			t.Errorf("user: got %v, want only {id: %s}", u, id)
		}
	}
}

// TestUserRevealRule: every route that takes a user id answers alike for a
// user the caller shares no organisation with and for an id no account
// holds, and never shows such a user's profile (issue 20).
func TestUserRevealRule(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	stranger := e.user("stranger") // in no organisation of mallory's
	e.addMember(f.acme, stranger)
	absent := "987654321987"
	evil := "/organisations/" + f.evil
	role := e.must(201, f.mallory, "POST", evil+"/roles", map[string]any{"name": "Crew"}).obj(t)["id"].(string)
	project := e.must(201, f.mallory, "POST", evil+"/projects", map[string]any{"name": "P"}).obj(t)["id"].(string)
	grant := map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}
	wg := "/workgroups/" + e.must(201, f.mallory, "POST", evil+"/workgroups", map[string]any{"name": "W"}).obj(t)["id"].(string)
	team := wg + "/teams/" + e.must(201, f.mallory, "POST", wg+"/teams", map[string]any{"name": "Crew", "colour": "#000000"}).obj(t)["id"].(string)
	routes := []struct {
		name, method, path string
		body               any
	}{
		{"user", "GET", "/users/%s", nil},
		{"member get", "GET", evil + "/members/%s", nil},
		{"member patch", "PATCH", evil + "/members/%s", map[string]any{"nick": "x"}},
		{"member remove", "DELETE", evil + "/members/%s", nil},
		{"ban", "PUT", evil + "/bans/%s", map[string]any{"reason": "x"}},
		{"ban lift", "DELETE", evil + "/bans/%s", nil},
		{"role assign", "PUT", evil + "/members/%s/roles/" + role, nil},
		{"role remove", "DELETE", evil + "/members/%s/roles/" + role, nil},
		{"user grant", "PUT", evil + "/permissions/%s", grant},
		{"project user grant", "PATCH", "/projects/" + project + "/permissions/%s", grant},
		{"team member add", "PUT", team + "/members/%s", nil},
		{"team leadership", "PATCH", team + "/members/%s", map[string]any{"is_leader": true}},
		{"team member remove", "DELETE", team + "/members/%s", nil},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			got := e.do(f.mallory, rt.method, fmt.Sprintf(rt.path, stranger.ID), rt.body)
			ref := e.do(f.mallory, rt.method, fmt.Sprintf(rt.path, absent), rt.body)
			if got.Status != ref.Status {
				t.Errorf("stranger answered %d, an absent id %d: existence leaks", got.Status, ref.Status)
			}
			if got.Status >= 500 {
				t.Errorf("status %d", got.Status)
			}
			body := string(got.Body)
			for _, secret := range []string{stranger.Email, "Tester", "stranger"} {
				if strings.Contains(body, secret) {
					t.Errorf("answer shows %q of a stranger: %s", secret, body)
				}
			}
		})
	}
	t.Run("ban list", func(t *testing.T) {
		r := e.must(200, f.mallory, "GET", evil+"/bans", nil)
		if strings.Contains(string(r.Body), stranger.Email) {
			t.Errorf("ban list shows a stranger: %s", r.Body)
		}
	})
}

// TestOneReadOnlyRule: on every PATCH, the object as GET showed it may be
// sent back (read-only fields unchanged) with a writable field changed; a
// changed read-only field is 400 naming it (decisions.md).
func TestOneReadOnlyRule(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	project := "/projects/" + e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "P"}).obj(t)["id"].(string)
	pkg := "/packages/" + e.must(201, f.alice, "POST", project+"/packages", map[string]any{"name": "K", "code": "K1"}).obj(t)["id"].(string)
	milestone := "/milestones/" + e.must(201, f.alice, "POST", project+"/milestones", map[string]any{"name": "M"}).obj(t)["id"].(string)
	role := "/roles/" + e.role(f.alice, f.acme, "Crew")
	for _, tc := range []struct {
		name, get, patch, writable, readOnly string
		value                                any
	}{
		{"organisation", acme, acme, "description", "created_at", "2020-01-01T00:00:00.000Z"},
		{"project", project, project, "description", "organisation_id", "123"},
		{"package", pkg, pkg, "description", "organisation_id", "123"},
		{"milestone", milestone, milestone, "description", "created_by", map[string]any{"id": f.bob.ID}},
		{"role", role, role, "description", "order", 99},
		{"member", acme + "/members/" + f.bob.ID, acme + "/members/" + f.bob.ID, "", "joined_at", "2020-01-01T00:00:00.000Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := e.must(200, f.alice, "GET", tc.get, nil).obj(t)
			if tc.writable != "" {
				obj[tc.writable] = "changed"
			}
			r := e.must(200, f.alice, "PATCH", tc.patch, obj)
			if tc.writable != "" && r.obj(t)[tc.writable] != "changed" {
				t.Fatalf("%s not changed: %s", tc.writable, r.Body)
			}
			obj[tc.readOnly] = tc.value
			wantField(tc.readOnly)(t, e.must(400, f.alice, "PATCH", tc.patch, obj))
		})
	}
}
