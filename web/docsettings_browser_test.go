package web_test

// Browser tests of the organisation's document settings (issue 17): item
// fields and document types, at 375 px and on a desktop. The document
// grid's choice column points an organisation without choice fields to the
// screen; the owner creates a choice field and a text field (refusals of a
// short name, a repeated value and a zero length shown at their inputs),
// edits the choice field (a value moved, one renamed, one retired; no longer
// required), disables the text field, creates, renames and deletes types (a
// number format without {number} refused at its input, the 400 of a type a
// document has shown in that type's row); a reload shows what the server
// holds, and a member reads the screen without its controls. Defaults: the
// choice field's default is picked among its rows (and follows its value's
// rename), a text default longer than the field allows is refused at its
// input, and a clause inserted in the grid starts with the choice default;
// then the choice field's type change is refused at its type (a column is
// bound to it). Each step is
// read back through the API with the person's own token.

import (
	"fmt"
	"strings"
	"testing"
)

func TestBrowserDocumentSettings(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "DocSettings " + vp.name
			p := orgWithOwner(t, bctx, base, "Di", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "di-docsettings-"+vp.name+"@example.com", "Di password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]
			fieldsPath, typesPath := "/organisations/"+orgID+"/document-fields", "/organisations/"+orgID+"/document-types"
			// byName reads a list through the API and answers its rows by name.
			byName := func(path string) map[string]map[string]any {
				_, out := owner.call("GET", path, nil)
				rows := map[string]map[string]any{}
				for _, r := range out.([]any) {
					r := r.(map[string]any)
					rows[r["name"].(string)] = r
				}
				return rows
			}
			values := func(f map[string]any) (texts, ids []string) {
				for _, v := range f["values"].([]any) {
					v := v.(map[string]any)
					texts = append(texts, v["value"].(string))
					ids = append(ids, v["id"].(string))
				}
				return
			}

			p.step = "the grid's choice column points to the settings when there is no choice field"
			docID := owner.id("POST", "/documents", map[string]any{"organisation_id": orgID, "title": "Site spec"})
			p.open("/app/documents/" + docID)
			p.seeIn("h1", "Site spec")
			p.click("Add column")
			p.choose("Column type", "Choice from an item field")
			p.see("The organisation has no item fields with a list of values yet")
			p.click("Document types and fields")
			p.waitFor(`location.pathname === '/app/orgs/`+orgID+`/document-fields'`, "the document settings")
			p.seeIn("h2", "Document types and fields")
			p.see("No item fields yet.")
			p.see("No document types yet.")

			p.step = "a choice field: a short name and a repeated value refused at their inputs"
			p.click("New item field")
			p.fill("Field name", "x")
			p.click("Create item field")
			if got := p.fieldError("Field name"); !strings.Contains(got, "2 to 200") {
				p.fail("short name error = %q", got)
			}
			p.fill("Field name", "Status")
			p.choose("Field type", "Choice (a list of values)")
			p.fill("Value 1", "Draft")
			p.click("Add a value")
			p.fill("Value 2", "Draft")
			p.click("Create item field")
			if got := p.fieldError("Value 2"); !strings.Contains(got, "repeats") {
				p.fail("repeated value error = %q", got)
			}
			if len(byName(fieldsPath)) != 0 {
				p.fail("a refused field was created")
			}
			p.fill("Value 2", "Final")
			p.click("Add a value")
			p.fill("Value 3", "Void")
			p.choose("Default value", "Final") // a value not saved yet: sent by its text
			p.click("Required")
			p.noHorizontalScroll()
			p.axe("a new item field")
			p.click("Create item field")
			p.see("Item field Status created.")
			p.seeIn(`ul[aria-label="Item fields"]`, "Draft, Final, Void")
			status := byName(fieldsPath)["Status"]
			texts, ids := values(status)
			if status["type"] != float64(4) || status["required"] != true || strings.Join(texts, "|") != "Draft|Final|Void" || status["default_value"] != ids[1] {
				p.fail("Status through the API: %v", status)
			}
			p.seeIn(`ul[aria-label="Item fields"]`, "default Final")
			draftID := ids[0]

			p.step = "a text field: a zero length refused at its input"
			p.click("New item field")
			p.fill("Field name", "Note")
			p.fill("Longest text (characters)", "0")
			p.click("Create item field")
			if got := p.fieldError("Longest text (characters)"); !strings.Contains(got, "at least 1") {
				p.fail("max length error = %q", got)
			}
			p.fill("Longest text (characters)", "40")
			p.fill("Default value", strings.Repeat("n", 41))
			p.click("Several lines")
			p.fill("Units", "words")
			p.click("Create item field")
			if got := p.fieldError("Default value"); !strings.Contains(got, "at most 40") {
				p.fail("default error = %q", got)
			}
			p.fill("Default value", "to be written")
			p.click("Create item field")
			p.see("Item field Note created.")
			p.seeIn(`ul[aria-label="Item fields"]`, "default to be written")
			p.seeIn(`ul[aria-label="Item fields"]`, "several lines, at most 40 characters")
			note := byName(fieldsPath)["Note"]
			if note["type"] != float64(0) || note["max_length"] != float64(40) || note["multi_line"] != true || note["units"] != "words" || note["default_value"] != "to be written" {
				p.fail("Note through the API: %v", note)
			}

			p.step = "edit the choice field: move, rename and retire values; not required"
			p.click("Edit Status")
			p.click("Move Final up")
			p.waitFor(`document.getElementById('field-value-0').value === 'Final'`, "Final first")
			p.fill("Value 1", "Issued") // Final renamed: the default goes with it
			p.click("Retire Void")
			p.see("Retired when saved")
			p.click("Required")
			p.noHorizontalScroll()
			p.axe("an item field being edited")
			p.shot("document-settings-edit-" + vp.name)
			p.click("Save item field")
			p.see("Item field Status saved.")
			p.seeIn(`ul[aria-label="Item fields"]`, "Issued, Draft")
			status = byName(fieldsPath)["Status"]
			texts, ids = values(status)
			if strings.Join(texts, "|") != "Issued|Draft" || ids[1] != draftID || status["required"] != false || status["default_value"] != ids[0] {
				p.fail("Status through the API after editing: %v (Draft was %s)", status, draftID)
			}
			issuedID := ids[0]
			p.seeIn(`ul[aria-label="Item fields"]`, "default Issued")

			p.step = "disable the text field"
			p.click("Disable Note")
			p.see("Item field Note disabled.")
			p.click("Enable Note") // the row offers the way back
			p.see("Item field Note enabled.")
			p.click("Disable Note")
			p.see("Item field Note disabled.")
			p.seeIn(`ul[aria-label="Item fields"]`, "disabled")
			if note = byName(fieldsPath)["Note"]; note["enabled"] != false {
				p.fail("Note through the API: %v", note)
			}

			p.step = "document types: a number format without {number} refused at its input"
			p.click("New document type")
			p.fill("Type name", "Spec")
			p.fill("Number format", "SP-")
			p.click("Create document type")
			if got := p.fieldError("Number format"); !strings.Contains(got, "{number}") {
				p.fail("number format error = %q", got)
			}
			p.fill("Number format", "SP-{number}")
			p.choose("Revision format", "major.minor: 0.1, 0.2, 1.0…")
			p.click("Create document type")
			p.see("Document type Spec created.")
			p.click("New document type")
			p.fill("Type name", "Memo")
			p.fill("Description of the type", "Short notes")
			p.click("Create document type")
			p.see("Document type Memo created.")
			spec := byName(typesPath)["Spec"]
			if spec["number_format"] != "SP-{number}" || spec["revision_format"] != float64(3) {
				p.fail("Spec through the API: %v", spec)
			}

			p.step = "rename a type"
			p.click("Edit Memo")
			p.fill("Type name", "Memos")
			p.click("Save document type")
			p.see("Document type Memos saved.")
			p.seeIn(`ul[aria-label="Document types"]`, "Memos")
			if _, ok := byName(typesPath)["Memos"]; !ok {
				p.fail("the renamed type is not in the API")
			}

			p.step = "a type a document has is refused in its row; another is deleted"
			owner.id("POST", "/documents", map[string]any{"organisation_id": orgID, "title": "Typed spec", "type_id": spec["id"]})
			p.click("Delete Spec")
			p.click("Yes, delete Spec")
			p.waitFor(`[...document.querySelectorAll('ul[aria-label="Document types"] li')].some(li => li.innerText.includes('Spec') &&
				li.querySelector('[role=alert]')?.innerText.includes('Documents have the type Spec'))`, "the refusal in Spec's row")
			if _, ok := byName(typesPath)["Spec"]; !ok {
				p.fail("the refused type is gone from the API")
			}
			p.click("Delete Memos")
			p.click("Yes, delete Memos")
			p.see("Document type Memos deleted.")
			p.waitFor(`!document.querySelector('ul[aria-label="Document types"]').innerText.includes('Memos')`, "Memos gone from the list")
			if st, _ := owner.call("GET", "/document-types/"+byNameID(t, owner, typesPath, "Spec"), nil); st != 200 {
				p.fail("Spec answers %d", st)
			}
			if rows := byName(typesPath); len(rows) != 1 {
				p.fail("types through the API after deleting: %v", rows)
			}
			p.noHorizontalScroll()
			p.axe("the document settings")
			p.shot("document-settings-" + vp.name)
			p.checkCSP()

			p.step = "after a reload the page shows what the server holds"
			p.open("/app/orgs/" + orgID + "/document-fields")
			p.seeIn(`ul[aria-label="Item fields"]`, "Issued, Draft")
			p.waitFor(`[...document.querySelectorAll('ul[aria-label="Item fields"] li')].some(li => li.innerText.includes('Note') && li.innerText.includes('disabled'))`, "Note disabled")
			p.seeIn(`ul[aria-label="Document types"]`, "SP-{number}")
			p.waitFor(`!document.querySelector('ul[aria-label="Document types"]').innerText.includes('Memos')`, "no Memos")
			p.checkCSP()

			p.step = "the grid offers the new choice field"
			p.open("/app/documents/" + docID)
			p.seeIn("h1", "Site spec")
			p.click("Add column")
			p.fill("Column name", "State")
			p.choose("Column type", "Choice from an item field")
			p.choose("Item field", "Status (2 values)")
			p.click("Add the column")
			p.see("Column State added.")

			p.step = "a clause inserted in the grid starts with the field's default"
			p.click("Add the first clause")
			p.see("Clause inserted.")
			p.waitFor(`[...document.querySelectorAll('[aria-label^="State of clause 1:"]')].some(b => b.innerText.trim() === 'Issued')`, "Issued in the new clause's State")
			head := owner.must(200, "GET", "/documents/"+docID+"/branches/main", nil)["hash"].(string)
			_, cls := owner.call("GET", "/documents/"+docID+"/revisions/"+head+"/clauses", nil)
			if cells := fmt.Sprint(cls); len(cls.([]any)) != 1 || !strings.Contains(cells, "value:"+issuedID) {
				p.fail("the new clause through the API: %v (Issued is %s)", cells, issuedID)
			}

			p.step = "the type of a field a column is bound to is refused at the type"
			p.open("/app/orgs/" + orgID + "/document-fields")
			p.click("Edit Status")
			p.choose("Field type", "Text")
			p.click("Save item field")
			if got := p.fieldError("Field type"); !strings.Contains(got, "bound") {
				p.fail("type change error = %q", got)
			}
			if st := byName(fieldsPath)["Status"]; st["type"] != float64(4) || st["default_value"] != issuedID {
				p.fail("Status after the refused type change: %v", st)
			}
			p.click("Cancel")

			p.step = "a member reads the settings without their controls"
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mai", "mai-docsettings-"+vp.name+"@example.com", "Mai password", vp.width, vp.height, vp.mobile)
			m.open("/app/orgs/" + orgID + "/document-fields")
			m.seeIn(`ul[aria-label="Item fields"]`, "Issued, Draft")
			m.seeIn(`ul[aria-label="Document types"]`, "Spec")
			m.see("changing them needs the Manage organisation permission")
			if n := eval[int](m, `document.querySelectorAll('main .org-main button').length`); n != 0 {
				m.fail("the member sees %d buttons", n)
			}
			m.notSee("New item field")
			m.axe("the document settings read-only")
			m.checkCSP()
			mai := awLogin(t, base, "mai-docsettings-"+vp.name+"@example.com", "Mai password")
			if st, _ := mai.call("PATCH", "/document-fields/"+status["id"].(string), map[string]any{"name": "Mine"}); st != 403 {
				m.fail("the member's change answered %d", st)
			}
		})
	}
}

// byNameID is the id of the row named name in the list at path.
func byNameID(t *testing.T, a *awAPI, path, name string) string {
	t.Helper()
	_, out := a.call("GET", path, nil)
	for _, r := range out.([]any) {
		if r := r.(map[string]any); r["name"] == name {
			return r["id"].(string)
		}
	}
	t.Fatalf("no %s in %s", name, path)
	return ""
}
