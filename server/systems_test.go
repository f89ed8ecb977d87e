package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"workspace/db"
)

func TestSystems(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	evilRoot := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/systems", map[string]any{"name": "Theirs"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"member without MANAGE_SYSTEMS cannot create", f.bob, "POST", acme + "/systems", map[string]any{"name": "Water"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/systems", map[string]any{"name": "Water"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/systems", map[string]any{"name": "Water"}, 400, nil},
		{"name over 60", f.alice, "POST", acme + "/systems", map[string]any{"name": strings.Repeat("n", 61)}, 400, wantField("name")},
		{"code over 12", f.alice, "POST", acme + "/systems", map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"parent in another organisation", f.alice, "POST", acme + "/systems", map[string]any{"parent_id": evilRoot}, 400, wantField("parent_id")},
		{"absent parent", f.alice, "POST", acme + "/systems", map[string]any{"parent_id": "123456789"}, 400, wantField("parent_id")},
		{"number is read-only", f.alice, "POST", acme + "/systems", map[string]any{"number": 7}, 400, wantField("number")},
	})
	root := e.must(201, f.alice, "POST", acme+"/systems", map[string]any{"root_prefix": "W-", "code": "W"}).obj(t)
	if root["number"] != float64(1) || root["formatted_number"] != "W-1" || root["root_id"] != nil || root["name"] != "new system" ||
		root["description"] != "new system description" || root["unused"] != false {
		t.Fatalf("root %v", root)
	}
	rid := root["id"].(string)
	child := e.must(201, f.alice, "POST", acme+"/systems", map[string]any{"parent_id": rid, "name": "Pumps", "root_prefix": "ignored"}).obj(t)
	if child["number"] != float64(2) || child["formatted_number"] != "W-2" || child["root_id"] != rid || child["parent_id"] != rid ||
		child["root"].(map[string]any)["id"] != rid || child["root_prefix"] != "W-" {
		t.Fatalf("child %v", child)
	}
	cid := child["id"].(string)
	grand := e.must(201, f.alice, "POST", acme+"/systems", map[string]any{"parent_id": cid, "name": "Pump 1"}).obj(t)
	if grand["root_id"] != rid || grand["parent_id"] != cid || grand["formatted_number"] != "W-3" {
		t.Fatalf("grandchild %v", grand)
	}
	e.must(201, f.alice, "POST", acme+"/systems", map[string]any{"name": "Power", "root_prefix": "P-"})
	e.run(t, []scenario{
		{"roots by default", f.bob, "GET", acme + "/systems", nil, 200, func(t *testing.T, r *testResponse) { wantLen(2)(t, r); wantTotal("2")(t, r) }},
		{"every system", f.bob, "GET", acme + "/systems?root=false", nil, 200, wantLen(4)},
		{"bad root flag", f.bob, "GET", acme + "/systems?root=maybe", nil, 400, wantField("root")},
		{"other organisation cannot list", f.mallory, "GET", acme + "/systems", nil, 403, nil},
		{"member gets", f.bob, "GET", "/systems/" + cid, nil, 200, wantKey("name", "Pumps")},
		{"other organisation cannot get", f.mallory, "GET", "/systems/" + cid, nil, 403, nil},
		{"absent system is 400", f.bob, "GET", "/systems/123456789", nil, 400, nil},
		{"subsystems of a root", f.bob, "GET", "/systems/" + rid + "/subsystems", nil, 200, wantLen(2)},
		{"other organisation cannot list subsystems", f.mallory, "GET", "/systems/" + rid + "/subsystems", nil, 403, nil},
		{"member cannot patch", f.bob, "PATCH", "/systems/" + cid, map[string]any{"name": "X"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", "/systems/" + cid, map[string]any{"name": "X"}, 403, nil},
		{"a child's root prefix cannot change", f.alice, "PATCH", "/systems/" + cid, map[string]any{"root_prefix": "X-"}, 400, wantField("root_prefix")},
		{"number is read-only", f.alice, "PATCH", "/systems/" + cid, map[string]any{"number": 9}, 400, wantField("number")},
		{"patch fields", f.alice, "PATCH", "/systems/" + cid, map[string]any{"name": "Pump set", "code": "PS", "description": "d"}, 200, wantKey("name", "Pump set")},
		{"a root's prefix reaches its tree", f.alice, "PATCH", "/systems/" + rid, map[string]any{"root_prefix": "WS-"}, 200, wantKey("formatted_number", "WS-1")},
		{"the grandchild follows", f.bob, "GET", "/systems/" + grand["id"].(string), nil, 200, wantKey("formatted_number", "WS-3")},
		{"unused is the soft delete", f.alice, "PATCH", "/systems/" + cid, map[string]any{"unused": true}, 200, wantKey("unused", true)},
		{"unused systems listed on request", f.bob, "GET", acme + "/systems?root=false&unused=true", nil, 200, wantLen(1)},
		{"and left out by default", f.bob, "GET", acme + "/systems?root=false", nil, 200, wantLen(3)},
		{"no delete", f.alice, "DELETE", "/systems/" + cid, nil, 405, func(t *testing.T, r *testResponse) {
			if allow := r.Header.Get("Allow"); !strings.Contains(allow, "PATCH") || strings.Contains(allow, "DELETE") {
				t.Errorf("Allow %q", allow)
			}
		}},
	})
}

// TestSystemNumbersConcurrent: 100 systems created at once get the numbers
// 1 to 100, each once.
func TestSystemNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	nums := make([]int, 100)
	var wg sync.WaitGroup
	for i := range nums {
		wg.Go(func() {
			r := e.do(f.alice, "POST", acme+"/systems", map[string]any{"name": fmt.Sprint("S", i)})
			if r.Status != 201 {
				t.Errorf("status %d: %s", r.Status, r.Body)
				return
			}
			nums[i] = int(r.obj(t)["number"].(float64))
		})
	}
	wg.Wait()
	slices.Sort(nums)
	for i, n := range nums {
		if n != i+1 {
			t.Fatalf("numbers %v, want 1..100 each once", nums)
		}
	}
}

func TestPrefixes(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", acme + "/prefixes", map[string]any{"number_format": "PX-{number}"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/prefixes", map[string]any{"number_format": "PX-{number}"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/prefixes", map[string]any{"number_format": "PX-{number}"}, 400, nil},
		{"format required", f.alice, "POST", acme + "/prefixes", map[string]any{}, 400, wantField("number_format")},
		{"format without {number}", f.alice, "POST", acme + "/prefixes", map[string]any{"number_format": "PX-"}, 400, wantField("number_format")},
		{"digits out of range", f.alice, "POST", acme + "/prefixes", map[string]any{"number_format": "PX-{number}", "number_digits": 0}, 400, wantField("number_digits")},
		{"last_number not settable on create", f.alice, "POST", acme + "/prefixes", map[string]any{"number_format": "PX-{number}", "last_number": 5}, 400, wantField("last_number")},
	})
	p := e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "PX-{number}", "number_digits": 4, "unique_number": true, "description": "Pumps"}).obj(t)
	if p["last_number"] != float64(0) || p["enabled"] != true || p["unique_number"] != true || p["number_digits"] != float64(4) {
		t.Fatalf("created %v", p)
	}
	path := "/api/prefixes/" + p["id"].(string)
	pid, oid := parseTestID(t, p["id"].(string)), parseTestID(t, f.acme)
	var formatted string
	if err := e.store.InTx(context.Background(), func(q *db.Queries) (err error) {
		_, formatted, err = drawNumber(context.Background(), q, oid, pid)
		return err
	}); err != nil || formatted != "PX-0001" {
		t.Fatalf("first draw %q %v, want PX-0001", formatted, err)
	}
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/prefixes", nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", acme + "/prefixes", nil, 403, nil},
		{"member gets", f.bob, "GET", path, nil, 200, wantKey("last_number", 1)},
		{"other organisation cannot get", f.mallory, "GET", path, nil, 403, nil},
		{"absent prefix is 400", f.bob, "GET", "/api/prefixes/123456789", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"description": "x"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"description": "x"}, 403, nil},
		{"number_format read-only", f.alice, "PATCH", path, map[string]any{"number_format": "PY-{number}"}, 400, wantField("number_format")},
		{"unique_number read-only", f.alice, "PATCH", path, map[string]any{"unique_number": false}, 400, wantField("unique_number")},
		{"sent back unchanged is fine", f.alice, "PATCH", path, map[string]any{"number_format": "PX-{number}", "unique_number": true}, 200, nil},
		{"last_number may not go down", f.alice, "PATCH", path, map[string]any{"last_number": 0}, 400, wantField("last_number")},
		{"last_number goes up", f.alice, "PATCH", path, map[string]any{"last_number": 41}, 200, wantKey("last_number", 41)},
		{"enabled cannot be deleted", f.alice, "DELETE", path, nil, 400, nil},
		{"disable", f.alice, "PATCH", path, map[string]any{"enabled": false}, 200, wantKey("enabled", false)},
		{"used cannot be deleted", f.alice, "DELETE", path, nil, 400, nil},
	})
	// A disabled prefix draws nothing.
	if err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		_, _, err := drawNumber(context.Background(), q, oid, pid)
		return err
	}); err == nil {
		t.Fatal("a disabled prefix drew a number")
	}
	fresh := "/api/prefixes/" + e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "{number}"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"member cannot delete", f.bob, "DELETE", fresh, nil, 403, nil},
		{"fresh but enabled", f.alice, "DELETE", fresh, nil, 400, nil},
		{"disable fresh", f.alice, "PATCH", fresh, map[string]any{"enabled": false}, 200, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", fresh, nil, 403, nil},
		{"delete disabled and unused", f.alice, "DELETE", fresh, nil, 204, nil},
		{"deleted", f.alice, "DELETE", fresh, nil, 400, nil},
	})
}

// TestPrefixDrawsConcurrent: 100 draws at once from one prefix get 1 to
// 100, each once; another organisation cannot draw from it.
func TestPrefixDrawsConcurrent(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	p := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/prefixes", map[string]any{"number_format": "D-{number}"}).obj(t)
	pid, oid := parseTestID(t, p["id"].(string)), parseTestID(t, f.acme)
	nums := make([]int, 100)
	var wg sync.WaitGroup
	for i := range nums {
		wg.Go(func() {
			err := e.store.InTx(context.Background(), func(q *db.Queries) error {
				n, s, err := drawNumber(context.Background(), q, oid, pid)
				if err == nil && s != fmt.Sprint("D-", n) {
					t.Errorf("formatted %q for %d", s, n)
				}
				nums[i] = int(n)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slices.Sort(nums)
	for i, n := range nums {
		if n != i+1 {
			t.Fatalf("numbers %v, want 1..100 each once", nums)
		}
	}
	if err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		_, _, err := drawNumber(context.Background(), q, parseTestID(t, f.evil), pid)
		return err
	}); err == nil {
		t.Fatal("another organisation drew from the prefix")
	}
}
