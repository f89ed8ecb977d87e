package web_test

// Browser test of provisional numbers (docs/sync.md, "Number blocks"): a
// work item numbered offline by a site office that ran out of numbers
// reads its number marked "provisional" in a list, and its own screen says
// in words that a final one comes at the next sync; a final number shows
// no such mark.

import (
	"context"
	"database/sql"
	"testing"

	"workspace/db"
)

func TestBrowserProvisionalNumbers(t *testing.T) {
	bctx := browser(t)
	base, store := appServerWith(t, nil)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			email := "pia-" + vp.name + "@example.com"
			registerAPI(t, base, "Pia", email, "owner password")
			as := apiAs(t, base, email, "owner password")
			var org, typ, me, offline, online struct {
				ID string `json:"id"`
			}
			as("POST", "/organisations", map[string]any{"name": "Site " + vp.name}, &org)
			as("GET", "/users/@me", nil, &me)
			as("POST", "/organisations/"+org.ID+"/work-item-types", map[string]any{"name": "Task"}, &typ)
			as("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": typ.ID, "title": "Check the hoist",
				"assignee_ids": []string{me.ID}}, &offline)
			as("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": typ.ID, "title": "Sweep the yard",
				"assignee_ids": []string{me.ID}}, &online)
			// As a site office out of numbers would have numbered it.
			n := int64(-(7<<32 | 1))
			if err := store.InTxSQL(context.Background(), func(tx *sql.Tx, q *db.Queries) error {
				_, err := tx.Exec(`UPDATE work_items SET number = ?, formatted_number = ? WHERE id = ?`, n, db.ProvisionalText(n), offline.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}

			p := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			p.openSignedIn("/app/workitems/"+offline.ID, email, "owner password")
			p.step = "the provisional number on the work item's screen"
			p.seeIn("h1", "Check the hoist")
			p.seeIn("h1", "provisional")
			p.see("Provisional number — a final one is given at the next sync.")
			p.axe("a work item with a provisional number")
			p.shot("provisional-workitem")

			p.step = "a final number has no mark"
			p.open("/app/workitems/" + online.ID)
			p.seeIn("h1", "Sweep the yard")
			p.notSee("Provisional number")

			p.step = "marked in the list"
			p.open("/app/me/workitems")
			p.see("Check the hoist")
			if got := eval[int](p, `document.querySelectorAll('.tag.warn').length`); got != 1 {
				p.fail("%d provisional marks in the list, want 1 (only the item numbered offline)", got)
			}
			p.seeIn("main", "provisional")
		})
	}
}
