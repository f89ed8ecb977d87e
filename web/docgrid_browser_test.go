package web_test

// Browser tests of the document grid's structure (issue 17): sheets
// (add, rename, move by dragging and by buttons, delete with confirmation),
// columns (settings, move, delete), choice columns bound to an enum item
// field, and the clause numbering format; then two editors changing the
// structure at once. Each step checks what the page shows, and the state
// through the API afterwards.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// apiClient calls the API as a person (a password-grant token), so a test
// can check what the page did.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

func newAPIClient(t *testing.T, base, email, password string) *apiClient {
	t.Helper()
	r, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", r.StatusCode, err)
	}
	return &apiClient{t: t, base: base, token: tok.AccessToken}
}

// do sends a request and decodes the answer into out; want is the status.
func (c *apiClient) do(method, path string, body any, want int, out any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

type gridTree struct {
	Hash               string  `json:"hash"`
	ClausePrefixFormat *string `json:"clause_prefix_format"`
	ClauseDigits       *int    `json:"clause_digits"`
	ClausePrefixID     *string `json:"clause_prefix_id"`
	Tree               struct {
		Sheets []struct {
			ID   string `json:"sheet_id"`
			Name string `json:"name"`
		} `json:"sheets"`
		Columns []struct {
			ID         string  `json:"column_id"`
			Name       string  `json:"name"`
			Type       string  `json:"type"`
			DataFormat int     `json:"data_format"`
			FieldID    *string `json:"field_id"`
		} `json:"columns"`
		Clauses []struct {
			Text   string `json:"text"`
			Fields []struct {
				ColumnID       string  `json:"column_id"`
				Value          string  `json:"value"`
				FormattedValue *string `json:"formatted_value"`
			} `json:"fields"`
		} `json:"clauses"`
	} `json:"tree"`
}

// head reads the branch's head with its content.
func (c *apiClient) head(docID, branch string) gridTree {
	c.t.Helper()
	var h struct {
		Hash string `json:"hash"`
	}
	c.do("GET", "/documents/"+docID+"/branches/"+branch, nil, 200, &h)
	var out gridTree
	c.do("GET", "/documents/"+docID+"/revisions/"+h.Hash+"?tree=true", nil, 200, &out)
	return out
}

func (g gridTree) sheetNames() string {
	var n []string
	for _, s := range g.Tree.Sheets {
		n = append(n, s.Name)
	}
	return strings.Join(n, "|")
}

func (g gridTree) columnNames() string {
	var n []string
	for _, c := range g.Tree.Columns {
		n = append(n, c.Name)
	}
	return strings.Join(n, "|")
}

// sheetTabs and columnHeads are the tab names and column headings as shown.
const sheetTabs = `[...document.querySelectorAll('[role="tab"]')].map(t => t.innerText.trim()).join('|')`
const columnHeads = `[...document.querySelectorAll('.doc-head [role="columnheader"]')].slice(2).map(h => h.innerText.replace('ƒ', '').trim()).join('|')`

// dragBy presses at the middle of the element sel matches, moves in steps
// by (dx, dy) and releases there, as a mouse would.
func (p *page) dragBy(sel string, dx, dy float64) {
	p.t.Helper()
	box := eval[[]float64](p, `(() => { const e = document.querySelector(`+js(sel)+`); e.scrollIntoView({block: 'center', inline: 'nearest'}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`)
	acts := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, box[0], box[1], chromedp.ButtonLeft)}
	for i := 1; i <= 8; i++ {
		acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0]+dx*float64(i)/8, box[1]+dy*float64(i)/8, chromedp.ButtonLeft))
	}
	acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, box[0]+dx, box[1]+dy, chromedp.ButtonLeft))
	p.run(acts...)
}

func TestBrowserDocumentGrid(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Grid " + vp.name
			a := orgWithOwner(t, bctx, base, "Gina", orgName, vp.width, vp.height, vp.mobile)
			email := "gina-" + strings.ReplaceAll(strings.ToLower(orgName), " ", "-") + "@example.com"
			orgID := pollValue(a, `location.pathname.startsWith('/app/orgs/') ? location.pathname.split('/')[3] : ''`, "the organisation's id")
			api := newAPIClient(t, base, email, "Gina password")
			// An enum item field of the organisation (made through the API:
			// the app has no screen for item fields yet).
			var field struct {
				ID     string `json:"id"`
				Values []struct {
					ID    string `json:"id"`
					Value string `json:"value"`
				} `json:"values"`
			}
			api.do("POST", "/organisations/"+orgID+"/document-fields", map[string]any{"name": "Stage", "type": 4,
				"values": []map[string]any{{"value": "Open"}, {"value": "Closed"}}}, 201, &field)
			var prefix struct {
				ID string `json:"id"`
			}
			api.do("POST", "/organisations/"+orgID+"/prefixes", map[string]any{"number_format": "CL-{number}", "number_digits": 2, "description": "Clauses"}, 201, &prefix)
			docID := a.openDocument("Scope of works")
			var doc struct {
				FormattedNumber string `json:"formatted_number"`
			}
			api.do("GET", "/documents/"+docID, nil, 200, &doc)

			a.step = "sheets: add, rename (a refusal shown at the name)"
			a.waitFor(sheetTabs+` === 'Sheet 1'`, "the first sheet")
			for _, n := range []string{"Annex", "Drawings"} {
				a.fill("New sheet", n)
				a.click("Add sheet")
				a.see("Sheet " + n + " added.")
			}
			a.waitFor(sheetTabs+` === 'Sheet 1|Annex|Drawings'`, "three sheets")
			a.click("Annex")
			a.click("Rename sheet")
			a.fill("New name of Annex", "Drawings")
			a.click("Save the name")
			if got := a.fieldError("New name of Annex"); !strings.Contains(got, "another sheet") {
				a.fail("rename error = %q", got)
			}
			a.fill("New name of Annex", "Appendix")
			a.click("Save the name")
			a.see("Sheet Annex renamed to Appendix.")
			a.waitFor(sheetTabs+` === 'Sheet 1|Appendix|Drawings'`, "the renamed sheet")

			a.step = "sheets: move by the buttons and by dragging a tab"
			a.click("Drawings")
			a.click("Move sheet left")
			a.see("Sheet Drawings moved to place 2.")
			a.waitFor(sheetTabs+` === 'Sheet 1|Drawings|Appendix'`, "Drawings second")
			a.waitFor(`document.activeElement && document.activeElement.closest('.toolbar')`, "focus kept on the toolbar")
			width := eval[float64](a, `document.querySelector('[role="tablist"]').getBoundingClientRect().width`)
			a.dragBy(`[role="tab"]:first-child`, width-40, 0)
			a.see("Sheet Sheet 1 moved to place 3.")
			a.waitFor(sheetTabs+` === 'Drawings|Appendix|Sheet 1'`, "Sheet 1 last after dragging it")
			if got := api.head(docID, "main").sheetNames(); got != "Drawings|Appendix|Sheet 1" {
				a.fail("sheets through the API: %s", got)
			}

			a.step = "sheets: delete, asking first; the last one is refused"
			a.click("Drawings")
			a.click("Delete sheet")
			a.see("Delete the sheet Drawings?")
			a.click("Keep it")
			a.notSee("Delete the sheet Drawings?")
			a.click("Delete sheet")
			a.click("Yes, delete Drawings")
			a.see("Sheet Drawings deleted.")
			a.click("Appendix")
			a.click("Delete sheet")
			a.click("Yes, delete Appendix")
			a.see("Sheet Appendix deleted.")
			a.waitFor(sheetTabs+` === 'Sheet 1'`, "one sheet left")
			a.click("Delete sheet")
			a.click("Yes, delete Sheet 1")
			a.see("The last sheet of a document cannot be deleted.")
			if got := api.head(docID, "main").sheetNames(); got != "Sheet 1" {
				a.fail("sheets through the API after deleting: %s", got)
			}
			a.noHorizontalScroll()
			a.axe("the sheet tabs")

			a.step = "columns: add, one bound to an item field"
			for _, c := range []struct{ name, typ string }{{"Qty", "Number"}, {"Rate", "Number"}, {"Status", "Choice from an item field"}} {
				a.click("Add column")
				a.fill("Column name", c.name)
				a.choose("Column type", c.typ)
				if c.name == "Status" {
					a.click("Add the column")
					if got := a.fieldError("Item field"); !strings.Contains(got, "required") {
						a.fail("item field error = %q", got)
					}
					a.choose("Item field", "Stage (2 values)")
					a.noFieldError("Item field") // chosen: the refusal no longer applies
				}
				a.click("Add the column")
				a.see("Column " + c.name + " added.")
			}
			a.waitFor(columnHeads+` === 'Qty|Rate|Status'`, "three columns")

			a.step = "columns: rename and a data format; a taken name refused"
			a.click("Qty: column settings")
			a.fill("Column name", "Rate")
			a.click("Save the column")
			if got := a.fieldError("Column name"); !strings.Contains(got, "another column") {
				a.fail("column name error = %q", got)
			}
			a.fill("Column name", "Quantity")
			a.choose("Data format", "Decimal (0.0000)")
			a.click("Save the column")
			a.see("Column Quantity saved.")
			a.waitFor(columnHeads+` === 'Quantity|Rate|Status'`, "the renamed column")

			a.step = "columns: move and delete"
			a.click("Status: column settings")
			a.click("Move column left")
			a.see("Column Status moved to place 2.")
			a.click("Move column left")
			a.see("Column Status moved to place 1.")
			a.waitFor(columnHeads+` === 'Status|Quantity|Rate'`, "Status first")
			a.click("Close")
			a.click("Rate: column settings")
			a.click("Delete column")
			a.see("Delete the column Rate and its values in every clause?")
			a.click("Yes, delete Rate")
			a.see("Column Rate deleted.")
			a.waitFor(columnHeads+` === 'Status|Quantity'`, "Rate gone")
			g := api.head(docID, "main")
			if g.columnNames() != "Status|Quantity" || g.Tree.Columns[0].Type != "enum" || g.Tree.Columns[0].FieldID == nil ||
				*g.Tree.Columns[0].FieldID != field.ID || g.Tree.Columns[1].DataFormat != 1 {
				a.fail("columns through the API: %+v", g.Tree.Columns)
			}

			a.step = "a choice cell: a select of the field's values, showing the text"
			a.click("Add the first clause")
			a.see("Clause inserted.")
			a.editCell("Quantity of clause 1: empty", "12")
			a.waitFor(`document.querySelector('[aria-label^="Quantity of clause 1:"]').innerText.trim() === '12.0000'`, "the number in its data format")
			a.click("Status of clause 1: empty")
			a.waitFor(`document.activeElement && document.activeElement.id === 'cell-editor' && document.activeElement.tagName === 'SELECT'`, "the select of values")
			a.choose("Status of clause 1", "Closed")
			// leaving the select saves (Enter does too; a synthetic Enter's
			// separate char event can land on the cell button after the save)
			a.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('cell-editor').blur()`))
			a.see("Clause 1: Status saved.")
			a.waitFor(`document.querySelector('[aria-label^="Status of clause 1:"]').innerText.trim() === 'Closed'`, "the value's text in the cell")
			closed := field.Values[1]
			g = api.head(docID, "main")
			if cl := g.Tree.Clauses; len(cl) != 1 || len(cl[0].Fields) != 2 || cl[0].Fields[0].Value != closed.ID || cl[0].Fields[0].FormattedValue == nil ||
				*cl[0].Fields[0].FormattedValue != "Closed" {
				a.fail("the cell through the API: %+v (want the id %s of Closed)", cl, closed.ID)
			}
			a.axe("a choice cell")

			a.step = "clause numbering: a prefix, then a format, shown in the numbers"
			a.see("Clauses are numbered 1, 2")
			a.click("Clause numbering")
			a.choose("Prefix (used when there is no format)", "CL-{number} (Clauses)")
			a.see("Clauses will read CL-01, CL-02, CL-12")
			a.click("Save the numbering")
			a.see("Clause numbering saved.")
			a.see("Clauses are numbered CL-01, CL-02")
			a.seeIn(".doc-spacer", "CL-01")
			if g := api.head(docID, "main"); g.ClausePrefixID == nil || *g.ClausePrefixID != prefix.ID {
				a.fail("the prefix through the API: %v", g.ClausePrefixID)
			}
			a.click("Clause numbering")
			a.fill("Number format", "Clause")
			a.click("Save the numbering")
			if got := a.fieldError("Number format"); !strings.Contains(got, "{number}") {
				a.fail("format error = %q", got)
			}
			a.fill("Number format", "{document}/{number}")
			a.fill("Digits (optional)", "3")
			a.see("Clauses will read " + doc.FormattedNumber + "/001")
			a.click("Save the numbering")
			a.see("Clause numbering saved.")
			a.seeIn(".doc-spacer", doc.FormattedNumber+"/001")
			numbered := `Text of clause ` + doc.FormattedNumber + `/001: empty`
			a.waitFor(`document.querySelector('[aria-label="`+numbered+`"]') !== null`, "the clause named by its number")
			g = api.head(docID, "main")
			if g.ClausePrefixFormat == nil || *g.ClausePrefixFormat != "{document}/{number}" || g.ClauseDigits == nil || *g.ClauseDigits != 3 {
				a.fail("numbering through the API: %v %v", g.ClausePrefixFormat, g.ClauseDigits)
			}
			a.noHorizontalScroll()
			a.axe("the column settings and numbering")
			a.checkCSP()

			a.step = "two editors: a change on an old base is merged"
			b := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			b.openSignedIn("/app/documents/"+docID, email, "Gina password")
			b.seeIn("h1", "Scope of works")
			b.waitFor(columnHeads+` === 'Status|Quantity'`, "the second editor's columns")
			b.click("Rename sheet")
			a.editCell("Quantity of clause "+doc.FormattedNumber+"/001: 12.0000", "15")
			a.see("Clause " + doc.FormattedNumber + "/001: Quantity saved.")
			b.see("Someone changed the document meanwhile")
			b.fill("New name of Sheet 1", "Works")
			b.click("Save the name")
			b.see("Sheet Sheet 1 renamed to Works.")
			b.waitFor(sheetTabs+` === 'Works'`, "the renamed sheet")
			b.waitFor(`document.querySelector('[aria-label^="Quantity of clause `+doc.FormattedNumber+`/001:"]').innerText.trim() === '15.0000'`, "the other editor's value beside the rename")
			a.waitFor(sheetTabs+` === 'Works'`, "the rename on the first editor's page")

			b.step = "two editors: a conflicting column rename is shown and settled"
			b.click("Quantity: column settings")
			a.click("Quantity: column settings")
			a.fill("Column name", "Amount")
			a.click("Save the column")
			a.see("Column Amount saved.")
			b.fill("Column name", "Volume")
			b.click("Save the column")
			b.see("Your change conflicts with a newer one")
			b.seeIn(`ul[aria-label="Conflicts"]`, "yours Volume")
			b.seeIn(`ul[aria-label="Conflicts"]`, "theirs Amount")
			b.axe("a conflict of a column")
			b.click("Keep mine")
			b.see("Column Volume saved.")
			b.waitFor(columnHeads+` === 'Status|Volume'`, "the kept name")
			a.waitFor(columnHeads+` === 'Status|Volume'`, "the kept name on the first editor's page")
			if got := api.head(docID, "main"); got.columnNames() != "Status|Volume" || got.sheetNames() != "Works" {
				a.fail("after both editors, through the API: %s / %s", got.columnNames(), got.sheetNames())
			}
			b.noHorizontalScroll()
			b.checkCSP()
			a.checkCSP()
		})
	}
}
