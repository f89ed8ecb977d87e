package db

import (
	"context"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSyncIndexKeys: an e-mail address two nodes gave two new accounts
// apart, and a domain both added to one organisation, no longer refuse the
// exchange: both accounts stay, the later one's address held aside (the
// later by clock whichever node applies it: the site's in one pair, the
// office's in the other), one domain stays; each is a conflict listed on
// the hub and, after the exchange, on the site, and the nodes end equal.
func TestSyncIndexKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	hub, site := &syncNode{}, &syncNode{}
	hub.at(t0)
	site.at(t0)
	hub.s = openSyncStore(t, filepath.Join(dir, "hub.db"), 1, hub.clock())
	defer hub.s.Close()
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub.exec(t, seedOrg+`INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`);`)
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.s.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site.s = openSyncStore(t, clonePath, 2, site.clock())
	defer site.s.Close()
	if err := site.s.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	orgs := []int64{10}
	account := func(n *syncNode, id int64, email string) {
		n.exec(t, `INSERT INTO users (id, email, created_at, updated_at) VALUES (?, ?, `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, ?, `+ts+`)`, id, email, id)
	}
	domain := func(n *syncNode, id int64, d string) {
		n.exec(t, `INSERT INTO organisation_domains (id, organisation_id, domain, challenge_token, created_at) VALUES (?, 10, ?, 'tok', `+ts+`)`, id, d)
	}
	// The office first, the site later (by clock): the site's are later.
	hub.at(t0.Add(time.Minute))
	account(hub, 20, "x@example.com")
	domain(hub, 30, "acme.test")
	site.at(t0.Add(time.Hour))
	account(site, 21, "X@example.com")
	domain(site, 31, "ACME.test")
	// The site first, the office later: the office's are later.
	account(site, 23, "y@example.com")
	domain(site, 33, "builders.test")
	hub.at(t0.Add(2 * time.Hour))
	account(hub, 22, "y@example.com")
	domain(hub, 32, "builders.test")

	exchange(t, site.s, hub.s, orgs, 3)
	exchange(t, hub.s, site.s, orgs, 3)
	exchange(t, site.s, hub.s, orgs, 3)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT id, email FROM users WHERE id >= 20 ORDER BY id`); !reflect.DeepEqual(got, []string{
			"[20 x@example.com]", "[21 held-21@sync.invalid]", "[22 held-22@sync.invalid]", "[23 y@example.com]"}) {
			t.Errorf("node %d: accounts %v", n.NodeID(), got)
		}
		if got := dump(t, n, `SELECT id, domain FROM organisation_domains ORDER BY id`); !reflect.DeepEqual(got, []string{"[30 acme.test]", "[33 builders.test]"}) {
			t.Errorf("node %d: domains %v", n.NodeID(), got)
		}
		if got := dump(t, n, `SELECT organisation_id, tbl, col, row_id, other_id, value, renamed_to FROM sync_conflicts ORDER BY row_id`); !reflect.DeepEqual(got, []string{
			"[10 users email 21 20 X@example.com held-21@sync.invalid]",
			"[10 users email 22 23 y@example.com held-22@sync.invalid]",
			"[10 organisation_domains domain 31 30 ACME.test ]",
			"[10 organisation_domains domain 32 33 builders.test ]"}) {
			t.Errorf("node %d: conflicts %v", n.NodeID(), got)
		}
	}
	for _, q := range []string{`SELECT * FROM users ORDER BY id`, `SELECT * FROM organisation_domains ORDER BY id`, `SELECT * FROM sync_conflicts ORDER BY id`} {
		if a, b := dump(t, hub.s, q), dump(t, site.s, q); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: hub %v, site %v", q, a, b)
		}
	}
}

// TestSyncUniqueIndexesHaveRules: every unique index of a replicated table
// (beyond its primary key) is kept by a rule when two nodes give its key
// apart: an IndexKey rule, number blocks, the duplicate-evidence flag, the
// per-node audit chains, or a reason it cannot collide. A new unique index
// fails here until it has one.
func TestSyncUniqueIndexesHaveRules(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	reasons := map[string]string{
		"systems(organisation_id,number)":                 "numbers from leased blocks",
		"work_items_number":                               "numbers from leased blocks",
		"documents(organisation_id,number)":               "numbers from leased blocks",
		"document_merge_requests(organisation_id,number)": "numbers from leased blocks",
		"toolbox_users_once":                              "duplicate evidence, flagged (duplicate_of)",
		"witness_records_once":                            "duplicate evidence, flagged (duplicate_of)",
		"audit_log_chain":                                 "one chain per organisation and node",
		"invites(code)":                                   "16 random characters (about 95 bits): two nodes never draw one",
		"user_emails_user_email":                          "a person's other addresses never leave their node",
		"document_chunks(hash)":                           "content-addressed: one hash is one content (issue II)",
	}
	rows, err := s.Reader.Query(`SELECT m.name, i.name, i.origin, coalesce(x.sql, '') FROM sqlite_master m, pragma_index_list(m.name) i
		LEFT JOIN sqlite_master x ON x.name = i.name WHERE m.type = 'table' AND i."unique" AND i.origin <> 'pk'`)
	if err != nil {
		t.Fatal(err)
	}
	type index struct{ table, name, origin string }
	var all []index
	for rows.Next() {
		var ix index
		var sqlText string
		if err := rows.Scan(&ix.table, &ix.name, &ix.origin, &sqlText); err != nil {
			t.Fatal(err)
		}
		all = append(all, ix)
	}
	rows.Close()
	seen := 0
	for _, ix := range all {
		p, ok := SyncCatalogue[ix.table]
		if !ok || p.Policy != Replicated {
			continue
		}
		seen++
		cols := dump(t, s, `SELECT coalesce(name, '') FROM pragma_index_info('`+ix.name+`') ORDER BY seqno`)
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = strings.Trim(c, "[]")
		}
		name := ix.name
		if regexp.MustCompile(`^sqlite_autoindex_`).MatchString(name) {
			name = ix.table + "(" + strings.Join(names, ",") + ")"
		}
		if p.IndexKey != nil && reflect.DeepEqual(p.IndexKey.Cols, names) {
			continue
		}
		if reasons[name] == "" {
			t.Errorf("%s: unique index %s (%v) has no rule for a key two nodes gave apart", ix.table, name, names)
		}
	}
	if seen < 10 {
		t.Fatalf("found %d unique indexes of replicated tables", seen)
	}
}
