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
