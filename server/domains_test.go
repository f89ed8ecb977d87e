package server

import (
	"testing"
)

func TestDomains(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{records: map[string][]string{}}
	f := newOrgFixture(t, withDNS(dns))
	e, acme := f.e, "/organisations/"+f.acme
	domains := acme + "/domains"
	evilDomain := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/domains", map[string]any{"domain": "evil.test"}).obj(t)["id"].(string)
	var id, token string
	e.run(t, []scenario{
		{"add with its challenge", f.alice, "POST", domains, map[string]any{"domain": "Acme.TEST."}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			id, _ = o["id"].(string)
			token, _ = o["challenge_token"].(string)
			if o["domain"] != "acme.test" || len(token) < 20 || o["is_verified"] != false || o["is_approved"] != false || o["organisation_id"] != f.acme {
				t.Errorf("got %v", o)
			}
		}},
		{"add twice", f.alice, "POST", domains, map[string]any{"domain": "acme.test"}, 400, wantField("domain")},
		{"not a domain", f.alice, "POST", domains, map[string]any{"domain": "acme"}, 400, wantField("domain")},
		{"empty", f.alice, "POST", domains, map[string]any{}, 400, wantField("domain")},
		{"numeric top level", f.alice, "POST", domains, map[string]any{"domain": "10.0.0.1"}, 400, wantField("domain")},
		{"member without MANAGE_ORGANISATION", f.bob, "POST", domains, map[string]any{"domain": "bob.test"}, 403, nil},
		{"pending member", f.pen, "POST", domains, map[string]any{"domain": "pen.test"}, 403, nil},
		{"other organisation", f.mallory, "POST", domains, map[string]any{"domain": "evil2.test"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/42/domains", map[string]any{"domain": "x.test"}, 404, nil},
		{"another organisation may claim the same name", f.mallory, "POST", "/organisations/" + f.evil + "/domains", map[string]any{"domain": "acme.test"}, 201, nil},
	})
	one := domains + "/" + id
	e.run(t, []scenario{
		{"list hides the challenge", f.alice, "GET", domains, nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 1 {
				t.Fatalf("got %v", list)
			}
			if _, ok := list[0]["challenge_token"]; ok {
				t.Errorf("challenge_token shown unasked: %v", list[0])
			}
		}},
		{"list with the challenge", f.alice, "GET", domains + "?include_challenge=true", nil, 200, func(t *testing.T, r *testResponse) {
			if got := r.arr(t)[0]["challenge_token"]; got != token {
				t.Errorf("got %v, want %s", got, token)
			}
		}},
		{"include_challenge not a boolean", f.alice, "GET", domains + "?include_challenge=maybe", nil, 400, nil},
		{"member cannot list", f.bob, "GET", domains, nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", domains, nil, 403, nil},

		{"approve before verifying", f.alice, "PATCH", one, map[string]any{"is_approved": true}, 400, wantField("is_approved")},
		{"verify without the record", f.alice, "POST", one + "/verify", nil, 400, nil},
	})
	dns.set("acme.test", token) // at the bare name, not the challenge name
	e.run(t, []scenario{{"record at the wrong name", f.alice, "POST", one + "/verify", nil, 400, nil}})
	dns.set(challengePrefix+"acme.test", "wrong-token")
	e.run(t, []scenario{{"wrong token", f.alice, "POST", one + "/verify", nil, 400, nil}})
	dns.set(challengePrefix+"acme.test", "v=spf1 -all", " "+token+" ")
	e.run(t, []scenario{
		{"member cannot verify", f.bob, "POST", one + "/verify", nil, 403, nil},
		{"other organisation cannot verify", f.mallory, "POST", one + "/verify", nil, 403, nil},
		{"verify another organisation's domain through ours", f.alice, "POST", domains + "/" + evilDomain + "/verify", nil, 404, nil},
		{"verify", f.alice, "POST", one + "/verify", nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["is_verified"] != true {
				t.Errorf("got %v", o)
			}
			if _, ok := o["challenge_token"]; ok {
				t.Errorf("challenge_token shown unasked")
			}
		}},
		{"verify again", f.alice, "POST", one + "/verify", nil, 200, wantKey("is_verified", true)},
		{"read-only is_verified", f.alice, "PATCH", one, map[string]any{"is_verified": false}, 400, wantField("is_verified")},
		{"read-only domain", f.alice, "PATCH", one, map[string]any{"domain": "x.test"}, 400, wantField("domain")},
		{"member cannot approve", f.bob, "PATCH", one, map[string]any{"is_approved": true}, 403, nil},
		{"other organisation cannot approve", f.mallory, "PATCH", one, map[string]any{"is_approved": true}, 403, nil},
		{"approve", f.alice, "PATCH", one, map[string]any{"is_approved": true}, 200, wantKey("is_approved", true)},
		{"restrict to approved domains", f.alice, "PATCH", acme, map[string]any{"restrict_email_domain": true}, 200, wantKey("restrict_email_domain", true)},
		{"the last approved domain stays while restricted", f.alice, "PATCH", one, map[string]any{"is_approved": false}, 400, nil},
		{"nor can it be removed", f.alice, "DELETE", one, nil, 400, nil},
		{"lift the restriction", f.alice, "PATCH", acme, map[string]any{"restrict_email_domain": false}, 200, nil},
		{"withdraw approval", f.alice, "PATCH", one, map[string]any{"is_approved": false}, 200, wantKey("is_approved", false)},
		{"member cannot remove", f.bob, "DELETE", one, nil, 403, nil},
		{"other organisation cannot remove", f.mallory, "DELETE", one, nil, 403, nil},
		{"remove another organisation's domain through ours", f.alice, "DELETE", domains + "/" + evilDomain, nil, 404, nil},
		{"remove", f.alice, "DELETE", one, nil, 204, nil},
		{"removed", f.alice, "DELETE", one, nil, 404, nil},
		{"patch removed", f.alice, "PATCH", one, map[string]any{"is_approved": true}, 404, nil},
		{"bad domain id", f.alice, "DELETE", domains + "/x", nil, 400, nil},
		{"other organisation's domains untouched", f.mallory, "GET", "/organisations/" + f.evil + "/domains", nil, 200, wantLen(2)},
	})
}
