package server

import (
	"bytes"
	"image/png"
	"regexp"
	"strings"
	"testing"
)

// TestExportsInLibreOffice converts every export kind to PDF with
// LibreOffice and reads the text back (pdftotext): the content is there,
// no #ERROR, no visible apostrophe in XLSX and DOCX, CSV decoded as UTF-8
// (its byte-order mark), and the document XLSX's first page holds its first
// columns side by side (fitted to the page width). With -update it renders
// page 1 of the document exports to docs/screenshots/.
func TestExportsInLibreOffice(t *testing.T) {
	t.Parallel()
	noError := func(t *testing.T, kind string, pages []string) {
		t.Helper()
		all := strings.Join(pages, "\n")
		if strings.Contains(all, "#ERROR") {
			t.Errorf("%s shows #ERROR:\n%s", kind, all)
		}
	}
	noApostrophe := func(t *testing.T, kind string, pages []string, texts ...string) {
		t.Helper()
		all := strings.Join(pages, "\n")
		for _, s := range texts {
			if !strings.Contains(all, s) {
				t.Errorf("%s lacks %q:\n%s", kind, s, all)
			}
			if strings.Contains(all, "'"+s) {
				t.Errorf("%s shows an apostrophe before %q:\n%s", kind, s, all)
			}
		}
	}
	// The exports are made first and converted together (officeBatch): two
	// LibreOffice starts instead of eight.
	var b officeBatch
	t.Run("document", func(t *testing.T) {
		f := newExportFixture(t)
		rev := f.c.rev(f.hash)
		b.add("document XLSX", f.e.must(200, f.bob, "GET", rev+"/export.xlsx", nil).Body, "xlsx", func(t *testing.T, pdf string, pages []string) {
			noError(t, "document XLSX", pages)
			noApostrophe(t, "document XLSX", pages, "Supply & fix <pipes>", "=1+1", `=HYPERLINK("http://evil")`)
			if !regexp.MustCompile(`No\.\s+Clause\s+Qty\s+Rate\s+Total`).MatchString(pages[0]) {
				t.Errorf("page 1 does not hold the first columns side by side:\n%s", pages[0])
			}
			screenshot(t, pdf, "document-export-xlsx")
		})
		b.add("document DOCX", f.e.must(200, f.bob, "GET", rev+"/export.docx", nil).Body, "docx", func(t *testing.T, pdf string, pages []string) {
			noError(t, "document DOCX", pages)
			noApostrophe(t, "document DOCX", pages, "Supply & fix <pipes>", "=1+1")
			screenshot(t, pdf, "document-export-docx")
		})
	})
	t.Run("assets", func(t *testing.T) {
		f := newAssetFixture(t)
		e, acme := f.e, "/organisations/"+f.acme
		e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "Siobhán's crane"})
		e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "=SUM(A1)"})
		b.add("asset XLSX", e.must(200, f.alice, "GET", acme+"/assets/export.xlsx", nil).Body, "xlsx", func(t *testing.T, _ string, pages []string) {
			noApostrophe(t, "asset XLSX", pages, "Siobhán's crane", "=SUM(A1)", "TR-001")
		})
		b.add("asset CSV", e.must(200, f.alice, "GET", acme+"/assets/export.csv", nil).Body, "csv", func(t *testing.T, _ string, pages []string) {
			if all := strings.Join(pages, "\n"); !strings.Contains(all, "Siobhán's crane") || strings.Contains(all, "SiobhÃ") {
				t.Errorf("asset CSV not read as UTF-8:\n%s", all)
			}
		})
	})
	t.Run("induction records", func(t *testing.T) {
		f := newOrgFixture(t)
		e := f.e
		ind := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/inductions", map[string]any{"name": "Site", "valid_for": 3600}).obj(t)
		path := "/inductions/" + ind["id"].(string)
		hash := ind["revision_hash"].(string)
		e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"first_name": "Siobhán", "last_name": "Ó Briain", "company": "=Acme Ltd", "position": "+Rigger"})
		e.must(201, f.alice, "POST", path+"/users/"+f.bob.ID, nil)
		e.must(201, f.bob, "POST", "/users/@me/inductions/"+ind["id"].(string)+"/records", map[string]any{"answers": []any{}})
		records := path + "/revisions/" + hash + "/records"
		e.run(t, []scenario{
			{"other organisation cannot export", f.mallory, "GET", records + "/export-xlsx", nil, 403, nil},
		})
		b.add("induction XLSX", e.must(200, f.alice, "GET", records+"/export-xlsx", nil).Body, "xlsx", func(t *testing.T, _ string, pages []string) {
			noError(t, "induction XLSX", pages)
			// dates as dates (not day numbers), text without an apostrophe
			noApostrophe(t, "induction XLSX", pages, "first name", "Siobhán", "Ó Briain", "=Acme Ltd", "+Rigger", "2026-11-21 09:30", "2026-11-21 10:30")
			// every column on page 1 (the last one printed on a page of its own)
			if !regexp.MustCompile(`first name\s+last name\s+position\s+company\s+inducted at\s+expires at`).MatchString(pages[0]) {
				t.Errorf("page 1 does not hold every column side by side:\n%s", pages[0])
			}
		})
		b.add("induction CSV", e.must(200, f.alice, "GET", records+"/export-csv", nil).Body, "csv", func(t *testing.T, _ string, pages []string) {
			if all := strings.Join(pages, "\n"); !strings.Contains(all, "Siobhán") || !strings.Contains(all, "Ó Briain") || strings.Contains(all, "SiobhÃ") ||
				!strings.Contains(all, "2026-11-21 09:30") {
				t.Errorf("induction CSV not read as UTF-8:\n%s", all)
			}
		})
	})
	t.Run("work items", func(t *testing.T) {
		f := newWIFixture(t)
		e, acme := f.e, "/organisations/"+f.acme
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "=Fix the pump", "project_id": f.project})
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Öl wechseln"})
		b.add("work item XLSX", e.must(200, f.alice, "GET", acme+"/workitems/export.xlsx", nil).Body, "xlsx", func(t *testing.T, _ string, pages []string) {
			noApostrophe(t, "work item XLSX", pages, "=Fix the pump", "Öl wechseln", "Plant")
		})
		b.add("work item CSV", e.must(200, f.alice, "GET", acme+"/workitems/export.csv", nil).Body, "csv", func(t *testing.T, _ string, pages []string) {
			if all := strings.Join(pages, "\n"); !strings.Contains(all, "Öl wechseln") {
				t.Errorf("work item CSV not read as UTF-8:\n%s", all)
			}
		})
	})
	b.run(t)
}

// TestSignatureTransparent: a signature image leaves its background
// transparent (a white one covered the attendance table's grid lines).
func TestSignatureTransparent(t *testing.T) {
	t.Parallel()
	b, err := rasteriseSignature(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"><path d="M5 20 C30 0 60 40 95 20" stroke="black" fill="none" stroke-width="2"/></svg>`)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Errorf("corner alpha %d, want transparent", a)
	}
	ink := false
	for x := 0; x < img.Bounds().Dx() && !ink; x++ {
		for y := 0; y < img.Bounds().Dy(); y++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0 {
				ink = true
				break
			}
		}
	}
	if !ink {
		t.Error("the signature drew nothing")
	}
}
