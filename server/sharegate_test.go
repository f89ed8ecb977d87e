package server

import (
	"net/url"
	"testing"
)

// sharesFromAnyone sets the users' allow_shares_from to 255 (anyone signed
// in): a personal share from someone holding MANAGE_FLEETS in no organisation
// the recipient is in needs it (shareGate).
func (e *testEnv) sharesFromAnyone(us ...*testUser) {
	e.t.Helper()
	for _, u := range us {
		e.sharesFrom(u, 255)
	}
}

// sharesFrom sets u's allow_shares_from.
func (e *testEnv) sharesFrom(u *testUser, v int) {
	e.t.Helper()
	e.must(200, u, "PATCH", "/users/@me", map[string]any{"allow_shares_from": v})
}

// wantGate checks a share creation's gate refusal: the lookup's message, and
// user_id named in errors with it (recipientGate), so a form shows it at the
// recipient's field.
func wantGate(msg string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		wantMessage(msg)(t, r)
		if errs, _ := r.obj(t)["errors"].(map[string]any); errs["user_id"] != msg || len(errs) != 1 {
			t.Errorf("errors = %v, want user_id: %q", errs, msg)
		}
	}
}

// wantMessage checks an error answer's message.
func wantMessage(msg string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if got := r.obj(t)["message"]; got != msg {
			t.Errorf("message %q, want %q", got, msg)
		}
	}
}

// TestShareCreateHonoursAllowSharesFrom: creating a fleet, project or
// document share that names a user_id applies the recipient's
// allow_shares_from exactly as GET /users/lookup does (shareGate): 0 no one;
// 1 (and 2, connections, as 1) only a sharer holding MANAGE_FLEETS in an
// organisation both are members of; 255 anyone. A refusal is the lookup's
// 403 and creates nothing; a foreign organisation's manager is refused by
// the subject's authorisation before the recipient is considered.
func TestShareCreateHonoursAllowSharesFrom(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	// Joint: alice owns it (MANAGE_FLEETS there); bob is a plain member. In
	// Acme bob may share every kind (MANAGE_FLEETS, SHARE_PROJECTS).
	joint := e.org(f.alice, "Joint")
	e.addMember(joint, f.bob)
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"MANAGE_FLEETS": "allow", "SHARE_PROJECTS": "allow"})
	// Mallory (owner of Evil) is in Joint too, without MANAGE_FLEETS there.
	e.addMember(joint, f.mallory)
	evilFleet := id(e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/fleets", map[string]any{"name": "Evil trucks"}))

	recipient := func(name string, setting int, orgs ...string) *testUser {
		u := e.user(name)
		for _, o := range orgs {
			e.addMember(o, u)
		}
		e.sharesFrom(u, setting)
		return u
	}
	noOne := recipient("noone", 0, joint)       // refuses everyone, even alice
	jointOne := recipient("jointone", 1, joint) // only fleet managers of Joint: alice
	jointTwo := recipient("jointtwo", 2, joint) // connections: as 1
	stranger := recipient("stranger", 1)        // in no organisation: no one qualifies
	anyone := recipient("anyone", 255)          // anyone signed in

	project := id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Plant"}))
	doc := id(e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Spec"}))
	kinds := []struct {
		name, path string
		body       map[string]any // besides user_id
	}{
		{"fleet", "/fleets/" + f.fleet + "/shares", map[string]any{}},
		{"project", "/projects/" + project + "/shares", map[string]any{}},
		{"document", "/documents/" + doc + "/shares", map[string]any{"scope_view": true}},
	}
	to := func(base map[string]any, u *testUser) map[string]any {
		b := map[string]any{"user_id": u.ID}
		for k, v := range base {
			b[k] = v
		}
		return b
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			refused := []scenario{
				{"setting 0: no one, not even a fleet manager of a shared organisation", f.alice, "POST", k.path, to(k.body, noOne), 403, wantGate(shareGateNoOne)},
				{"setting 0: nor a stranger", f.bob, "POST", k.path, to(k.body, noOne), 403, wantGate(shareGateNoOne)},
				{"setting 1: a shared organisation without MANAGE_FLEETS there", f.bob, "POST", k.path, to(k.body, jointOne), 403, wantGate(shareGateFleetManage)},
				{"setting 2 behaves as 1", f.bob, "POST", k.path, to(k.body, jointTwo), 403, wantGate(shareGateFleetManage)},
				{"setting 1: no shared organisation", f.alice, "POST", k.path, to(k.body, stranger), 403, wantGate(shareGateFleetManage)},
				{"foreign organisation: its manager cannot share Acme's subject at all", f.mallory, "POST", k.path, to(k.body, anyone), 403, nil},
				{"nor learn the recipient's setting from the answer", f.mallory, "POST", k.path, to(k.body, noOne), 403, func(t *testing.T, r *testResponse) {
					if r.obj(t)["message"] == shareGateNoOne || r.obj(t)["errors"] != nil {
						t.Errorf("the subject's refusal must come first: %s", r.Body)
					}
				}},
				{"an absent user is still 400", f.alice, "POST", k.path, map[string]any{"user_id": "123456789", "scope_view": true}, 400, wantField("user_id")},
				// refused creates changed nothing
				{"no share was made", f.alice, "GET", k.path, nil, 200, wantLen(0)},
			}
			e.run(t, refused)
			for _, u := range []*testUser{noOne, jointOne, jointTwo, stranger} {
				for _, row := range e.must(200, u, "GET", "/users/@me/shares", nil).arr(t) {
					if row["type"] == k.name {
						t.Errorf("a refused share reached its recipient: %v", row)
					}
				}
			}
			e.run(t, []scenario{
				{"setting 1: a fleet manager of a shared organisation", f.alice, "POST", k.path, to(k.body, jointOne), 201, nil},
				{"setting 2: as 1", f.alice, "POST", k.path, to(k.body, jointTwo), 201, nil},
				{"setting 255: anyone who may share the subject", f.bob, "POST", k.path, to(k.body, anyone), 201, nil},
				{"three shares made", f.alice, "GET", k.path, nil, 200, wantLen(3)},
			})
		})
	}
	// Mallory shares her own fleet: the recipient's setting still decides.
	// Joint is shared with jointOne but mallory holds no MANAGE_FLEETS there.
	e.run(t, []scenario{
		{"foreign sharer's own fleet: shared organisation without MANAGE_FLEETS", f.mallory, "POST", "/fleets/" + evilFleet + "/shares", map[string]any{"user_id": jointOne.ID}, 403, wantGate(shareGateFleetManage)},
		{"foreign sharer's own fleet: no shared organisation", f.mallory, "POST", "/fleets/" + evilFleet + "/shares", map[string]any{"user_id": f.nobody.ID}, 403, wantGate(shareGateFleetManage)},
		{"foreign sharer's own fleet: nothing made", f.mallory, "GET", "/fleets/" + evilFleet + "/shares", nil, 200, wantLen(0)},
		{"foreign sharer's own fleet: to anyone", f.mallory, "POST", "/fleets/" + evilFleet + "/shares", map[string]any{"user_id": anyone.ID}, 201, nil},
	})
	// The lookup answers exactly as creating does, sharer by sharer.
	for _, c := range []struct {
		as     *testUser
		target *testUser
		want   int
	}{
		{f.alice, noOne, 403}, {f.bob, jointOne, 403}, {f.bob, jointTwo, 403}, {f.alice, stranger, 403}, {f.mallory, jointOne, 403},
		{f.alice, jointOne, 200}, {f.alice, jointTwo, 200}, {f.bob, anyone, 200}, {f.mallory, anyone, 200},
	} {
		r := e.do(c.as, "GET", "/users/lookup?email="+url.QueryEscape(c.target.Email), nil)
		if r.Status != c.want {
			t.Errorf("lookup of %s by %s: %d, want %d: %s", c.target.Email, c.as.Email, r.Status, c.want, r.Body)
		}
		if r.Status == 403 && r.obj(t)["errors"] != nil {
			t.Errorf("the lookup's refusal names a field (it has no user_id): %s", r.Body)
		}
	}
}

// TestUserFleetsListsAcceptedPersonalShares: GET /users/@me/fleets lists the
// fleets shared with the caller personally once accepted, none before.
func TestUserFleetsListsAcceptedPersonalShares(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e := f.e
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	sid := e.must(201, f.alice, "POST", "/fleets/"+f.fleet+"/shares", map[string]any{"user_id": carol.ID}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"pending: none", carol, "GET", "/users/@me/fleets", nil, 200, wantLen(0)},
		{"accept", carol, "POST", "/users/@me/fleet-shares/" + sid + "/accept", nil, 200, nil},
		{"accepted: the fleet", carol, "GET", "/users/@me/fleets", nil, 200, wantLen(1)},
		{"another organisation's owner has none", f.mallory, "GET", "/users/@me/fleets", nil, 200, wantLen(0)},
		{"no token", nil, "GET", "/users/@me/fleets", nil, 401, nil},
	})
}
