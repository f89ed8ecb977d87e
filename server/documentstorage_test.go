package server

import (
	"context"
	"strings"
	"testing"

	"workspace/db"
)

// TestDocumentStorageUsage: document content counts in the organisation's
// storage_usage by the bytes a write stored first; an edit that brings back
// stored content, and a fork, cost nothing; the recount agrees throughout.
func TestDocumentStorageUsage(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	orgID, _ := db.ParseID(f.acme)
	usage := func() int64 {
		t.Helper()
		u := int64(e.must(200, f.alice, "GET", "/organisations/"+f.acme, nil).obj(t)["storage_usage"].(float64))
		recount, err := e.store.R.OrgStorageRecount(context.Background(), int64(orgID))
		if err != nil || recount != u {
			t.Fatalf("storage_usage %d, recount %d (%v)", u, recount, err)
		}
		return u
	}
	u0 := usage()
	if u0 <= 0 {
		t.Fatalf("a new document's first revision is stored: usage %d", u0)
	}
	h := c.head(t, "main")
	h1 := c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Qty", "type": "number"})
	u1 := usage()
	h2 := c.change(t, "POST", c.rev(h1)+"/clauses", map[string]any{"text": strings.Repeat("long text ", 2000)})
	u2 := usage()
	if u2-u1 < 20000 {
		t.Fatalf("a 20 KB clause added %d bytes", u2-u1)
	}
	// Deleting the clause makes the content of h1 again: nothing new is stored.
	id := c.clauseIDs(t, h2)[0]
	h3 := c.change(t, "DELETE", c.rev(h2)+"/clauses/"+id, nil)
	if h3 != h1 {
		t.Fatalf("deleting the only clause gives %s, want the content of %s", h3, h1)
	}
	if u3 := usage(); u3 != u2 {
		t.Fatalf("a revert stored %d bytes", u3-u2)
	}
	// A fork shares the stored objects.
	e.must(201, f.alice, "POST", c.doc, map[string]any{})
	if u4 := usage(); u4 != u2 {
		t.Fatalf("a fork stored %d bytes", u4-u2)
	}
	// Another organisation's documents are charged to it, not to Acme.
	evilID, _ := db.ParseID(f.evil)
	var evilUsage int64
	if err := e.store.Reader.QueryRow(`SELECT storage_usage FROM organisations WHERE id = ?`, int64(evilID)).Scan(&evilUsage); err != nil || evilUsage <= 0 {
		t.Fatalf("Evil's usage %d (%v)", evilUsage, err)
	}
	e.must(403, f.mallory, "GET", "/organisations/"+f.acme, nil)
}

// TestDocumentAssetLinks: asset_group_id names any asset group of the
// document's organisation, asset_id an asset (a single group); other
// organisations' ids and groups as assets are 400.
func TestDocumentAssetLinks(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	acme, evil := "/organisations/"+f.acme, "/organisations/"+f.evil
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	truck := id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Truck"}))
	convoy := id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 1, "name": "Convoy"}))
	asset := id(e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": truck, "name": "T1"}))
	group := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": convoy, "name": "Convoy A"}))
	evilType := id(e.must(201, f.mallory, "POST", evil+"/asset-types", map[string]any{"ephemerality": 0, "name": "Evil"}))
	evilAsset := id(e.must(201, f.mallory, "POST", evil+"/assets", map[string]any{"type_id": evilType, "name": "E1"}))
	doc := "/documents/" + f.doc
	e.run(t, []scenario{
		{"create with both", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Linked", "asset_group_id": group, "asset_id": asset}, 201,
			func(t *testing.T, r *testResponse) {
				o := r.obj(t)
				if o["asset_group_id"] != group || o["asset_id"] != asset || o["asset"].(map[string]any)["id"] != asset {
					t.Fatalf("links %v", o)
				}
			}},
		{"an asset as the group (its single group)", f.alice, "PATCH", doc, map[string]any{"asset_group_id": asset}, 200, wantKey("asset_group_id", asset)},
		{"a group as the asset", f.alice, "PATCH", doc, map[string]any{"asset_id": group}, 400, wantField("asset_id")},
		{"another organisation's asset", f.alice, "PATCH", doc, map[string]any{"asset_id": evilAsset}, 400, wantField("asset_id")},
		{"another organisation's group", f.alice, "PATCH", doc, map[string]any{"asset_group_id": evilAsset}, 400, wantField("asset_group_id")},
		{"absent asset", f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Doc", "asset_id": "5"}, 400, wantField("asset_id")},
		{"wrong type", f.alice, "PATCH", doc, map[string]any{"asset_id": 5}, 400, nil},
		{"foreign member cannot link", f.mallory, "PATCH", doc, map[string]any{"asset_id": evilAsset}, 403, nil},
		{"set the asset", f.alice, "PATCH", doc, map[string]any{"asset_id": asset}, 200, wantKey("asset_id", asset)},
		{"kept by a patch of something else", f.alice, "PATCH", doc, map[string]any{"title": "Renamed"}, 200, wantKey("asset_id", asset)},
		{"a fork in the organisation keeps the links", f.alice, "POST", doc, map[string]any{}, 201, wantKey("asset_id", asset)},
		{"cleared with null", f.alice, "PATCH", doc, map[string]any{"asset_id": nil, "asset_group_id": nil}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["asset_id"] != nil || o["asset_group_id"] != nil {
				t.Fatalf("links %v", o)
			}
		}},
	})
}
