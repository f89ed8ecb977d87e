package server

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"workspace/server/render"
)

func TestToolboxReport(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(200, f.alice, "PATCH", "/locations/"+f.depot, map[string]any{"timezone_code": "Australia/Sydney"})
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Cranes & <rigging>", "location_id": f.depot}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	sec := e.must(201, f.alice, "POST", tp+"/sections", map[string]any{"title": "Exclusion zones"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"section_id": sec, "body": "Barriers at 10 m\nSpotter on duty", "comments": "Agreed", "review_response": true})
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": "Weather: wind limit 38 km/h"})
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": "שימו לב: קסדה חובה"})
	e.run(t, []scenario{
		{"report before anyone signs", f.bob, "GET", tp + "/report", nil, 200, nil},
	})
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.alice, "POST", tp+"/sign", map[string]any{"first_name": "Sig", "last_name": "Ner", "company": "Lift Co", "position": "Rigger",
		"signature": `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"><path d="M5 30 C 20 5, 40 5, 50 20 S 80 35, 95 10" stroke="black" stroke-width="2" fill="none"/></svg>`})
	e.must(200, f.alice, "POST", tp+"/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor", "declaration": true})
	e.must(200, f.bob, "POST", tp+"/sign", map[string]any{"user_id": f.bob.ID, "declaration": true}) // his own
	e.run(t, []scenario{
		{"other organisation cannot read the report", f.mallory, "GET", tp + "/report", nil, 403, nil},
		{"absent toolbox", f.bob, "GET", "/toolboxes/123456789/report", nil, 404, nil},
		{"not an id", f.bob, "GET", "/toolboxes/x/report", nil, 400, nil},
	})
	r := e.must(200, f.bob, "GET", tp+"/report", nil)
	if ct := r.Header.Get("Content-Type"); ct != docxType {
		t.Fatalf("Content-Type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "report.docx") {
		t.Errorf("Content-Disposition %q", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	files := map[string]string{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[zf.Name] = string(b)
	}
	doc := files["word/document.xml"]
	// a styles part with real heading styles, used by the headings; page
	// numbers in the footer (golden: go test -update rewrites them)
	goldenFile(t, "toolbox-report-styles.xml", []byte(files["word/styles.xml"]))
	goldenFile(t, "toolbox-report-footer.xml", []byte(files["word/footer1.xml"]))
	attendance, _, _, err := render.Element(doc, "w:tbl", "How they signed")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "toolbox-report-attendance.xml", []byte(attendance))
	if !strings.Contains(files["word/_rels/document.xml.rels"], `Target="styles.xml"`) ||
		!strings.Contains(files["[Content_Types].xml"], "styles+xml") ||
		strings.Count(doc, `<w:pStyle w:val="Heading1"/>`) != 1 || strings.Count(doc, `<w:pStyle w:val="Heading2"/>`) < 2 ||
		!strings.Contains(doc, `<w:footerReference w:type="default" r:id="rIdFooter1"/>`) {
		t.Errorf("headings without their styles or no footer:\n%s", doc)
	}
	// the right-to-left line is marked so (paragraph and run), the others not
	if !regexp.MustCompile(`<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t[^>]*>[^<]*שימו לב`).MatchString(doc) || strings.Count(doc, "<w:bidi/>") != 1 {
		t.Errorf("the Hebrew line is not marked right to left:\n%s", doc)
	}
	if err := wellFormed(doc); err != nil {
		t.Fatalf("document.xml is not well-formed XML: %v", err)
	}
	for _, want := range []string{"Cranes &amp; &lt;rigging&gt;", "Depot", "Exclusion zones", "Barriers at 10 m</w:t><w:br/>",
		"Spotter on duty", "Review response: Yes", "Comments: Agreed", "Weather: wind limit 38 km/h", "Sig Ner", "Lift Co", "Rigger", "Position", "How they signed",
		"Vi Sitor", "Declaration, recorded by alice Tester", "Signature, recorded by alice Tester", "bob Tester", "alice Tester", "AEDT", `r:embed="rIdSig1"`, "51.500000, -0.120000"} {
		if !strings.Contains(doc, want) {
			t.Errorf("document.xml lacks %q", want)
		}
	}
	if strings.Contains(doc, "{") {
		t.Errorf("a placeholder is left: %s", doc[strings.Index(doc, "{"):min(len(doc), strings.Index(doc, "{")+40)])
	}
	if !strings.Contains(files["word/_rels/document.xml.rels"], `Id="rIdSig1"`) || !strings.HasPrefix(files["word/media/signature1.png"], "\x89PNG") {
		t.Errorf("signature image missing: rels %q", files["word/_rels/document.xml.rels"])
	}
	if strings.Count(doc, "recorded by") != 2 {
		t.Errorf("bob's own declaration reads as recorded by someone: %d recorded rows", strings.Count(doc, "recorded by"))
	}
	if strings.Contains(doc, "rIdSig2") {
		t.Errorf("a declaration got a signature image")
	}
	screenshot(t, convertWithLibreOffice(t, r.Body), "toolbox-report")
}

func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// convertWithLibreOffice opens the document in LibreOffice and converts it
// to PDF: the proof that a real word processor reads it. .ci/run installs it.
// It answers the PDF's path.
func convertWithLibreOffice(t *testing.T, docx []byte) string {
	t.Helper()
	pdf, _ := officePDF(t, docx, "docx")
	return pdf
}

// officePDF converts a file (docx, xlsx, csv) to PDF with LibreOffice
// headless (a profile of its own, so parallel runs do not collide) and
// reads its text with pdftotext -layout: the PDF's path and its pages'
// text. It skips only when LibreOffice is absent.
func officePDF(t *testing.T, data []byte, ext string) (string, []string) {
	t.Helper()
	pdfs, pages, err := officeConvert(officeBin(t), t.TempDir(), ext == "csv", []officeFile{{data: data, ext: ext}})
	if err != nil {
		t.Fatal(err)
	}
	return pdfs[0], pages[0]
}

// officeBin is LibreOffice's command; the test skips when it is absent.
func officeBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("soffice")
	if err != nil {
		if bin, err = exec.LookPath("libreoffice"); err != nil {
			t.Skip("LibreOffice is not installed (apt-get install libreoffice-writer-nogui libreoffice-calc-nogui): the file was checked as a ZIP only")
		}
	}
	return bin
}

// officeFile is one file to convert and, in an officeBatch, what to check
// of its PDF (pdf is its path, pages its pages' text).
type officeFile struct {
	name  string
	data  []byte
	ext   string
	check func(t *testing.T, pdf string, pages []string)
}

// officeConvert converts files in one LibreOffice start, in dir: a start
// costs more than a conversion (about 1.5 s against 0.2 s here). csv
// selects the CSV import filter, which applies to every file of a start.
func officeConvert(bin, dir string, csv bool, files []officeFile) (pdfs []string, pages [][]string, err error) {
	args := []string{"--headless", "--norestore", "-env:UserInstallation=file://" + filepath.Join(dir, "profile")}
	if csv {
		// comma, double quote, UTF-8 (76): the headless converter does not
		// detect the byte-order mark as the import dialog (and Excel) do
		args = append(args, "--infilter=CSV:44,34,76,1")
	}
	args = append(args, "--convert-to", "pdf", "--outdir", dir)
	for i, f := range files {
		in := filepath.Join(dir, fmt.Sprintf("export%d.%s", i, f.ext))
		if err := os.WriteFile(in, f.data, 0o600); err != nil {
			return nil, nil, err
		}
		args = append(args, in)
	}
	cmd := exec.Command(bin, args...)
	done := make(chan error, 1)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, nil, fmt.Errorf("LibreOffice failed: %v\n%s", err, out.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		return nil, nil, fmt.Errorf("LibreOffice did not finish converting\n%s", out.String())
	}
	for i := range files {
		pdfPath := filepath.Join(dir, fmt.Sprintf("export%d.pdf", i))
		pdf, err := os.ReadFile(pdfPath)
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) {
			return nil, nil, fmt.Errorf("no PDF from LibreOffice for file %d (%v): %s", i, err, out.String())
		}
		text, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", pdfPath, "-").Output()
		if err != nil {
			return nil, nil, fmt.Errorf("pdftotext (poppler-utils): %v", err)
		}
		pdfs, pages = append(pdfs, pdfPath), append(pages, strings.Split(string(text), "\f"))
	}
	return pdfs, pages, nil
}

// officeBatch gathers files to convert with their checks, so a test that
// reads many exports starts LibreOffice twice (CSV and the rest, side by
// side) instead of once per file.
type officeBatch struct{ files []officeFile }

func (b *officeBatch) add(name string, data []byte, ext string, check func(t *testing.T, pdf string, pages []string)) {
	b.files = append(b.files, officeFile{name: name, data: bytes.Clone(data), ext: ext, check: check})
}

// run converts every file added and runs each file's check as a subtest
// named by the file.
func (b *officeBatch) run(t *testing.T) {
	t.Helper()
	bin := officeBin(t)
	var groups [2][]officeFile // [0] other, [1] CSV
	for _, f := range b.files {
		csv := 0
		if f.ext == "csv" {
			csv = 1
		}
		groups[csv] = append(groups[csv], f)
	}
	type result struct {
		pdfs  []string
		pages [][]string
		err   error
	}
	var res [2]result
	var wg sync.WaitGroup
	for g := range groups {
		if len(groups[g]) == 0 {
			continue
		}
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[g].pdfs, res[g].pages, res[g].err = officeConvert(bin, dir, g == 1, groups[g])
		}()
	}
	wg.Wait()
	for g := range groups {
		if res[g].err != nil {
			t.Fatal(res[g].err)
		}
		for i, f := range groups[g] {
			t.Run(f.name, func(t *testing.T) { f.check(t, res[g].pdfs[i], res[g].pages[i]) })
		}
	}
}

// screenshot renders page 1 of a PDF to docs/screenshots/<name>.png with
// pdftoppm when the golden files are rewritten (go test -update).
func screenshot(t *testing.T, pdf, name string) {
	t.Helper()
	if !*update {
		return
	}
	out := filepath.Join("..", "docs", "screenshots", name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("pdftoppm", "-png", "-r", "70", "-f", "1", "-l", "1", "-singlefile", pdf, out).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, b)
	}
}

// TestToolboxReportHeader: every page of the toolbox report is headed by
// the toolbox's organisation, its name and (when it has one) its logo, as
// its mails are; another organisation's logo never appears, and its members
// still cannot read the report. LibreOffice shows the name and the logo on
// each page of a report two pages long.
func TestToolboxReportHeader(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	logo := func(u *testUser, org string, png []byte) {
		t.Helper()
		if r := e.serve(multipartReq(t, u, "PUT", "/organisations/"+org+"/logo", nil, map[string][]byte{"file": png})); r.Status != 200 {
			t.Fatalf("logo: %d %s", r.Status, r.Body)
		}
	}
	logo(f.mallory, f.evil, pngBytes(t, 40, 40)) // never in Acme's report
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Long briefing", "location_id": f.depot}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	// enough lines for a second page
	for i := range 4 {
		e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": fmt.Sprintf("Topic %d", i) + strings.Repeat("\nA line of the briefing", 20)})
	}
	e.run(t, []scenario{
		{"other organisation cannot read the report", f.mallory, "GET", tp + "/report", nil, 403, nil},
		{"pending member cannot read the report", f.pen, "GET", tp + "/report", nil, 403, nil},
	})
	headed := func(t *testing.T, files map[string]string) string {
		t.Helper()
		doc, hdr := files["word/document.xml"], files["word/header1.xml"]
		// one default header for the section and no first-page variant: every page
		if !strings.Contains(doc, `<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader1"/>`) || strings.Contains(doc, "<w:titlePg") ||
			!strings.Contains(files["word/_rels/document.xml.rels"], `Id="rIdHeader1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"`) ||
			!strings.Contains(files["[Content_Types].xml"], `<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>`) {
			t.Errorf("no page header on every page:\n%s", doc)
		}
		if !strings.Contains(hdr, ">Acme</w:t>") || strings.Contains(hdr, "{") || strings.Contains(hdr, "Evil") {
			t.Errorf("header does not name Acme alone: %s", hdr)
		}
		if err := wellFormed(hdr); err != nil {
			t.Errorf("header1.xml is not well-formed: %v", err)
		}
		return hdr
	}

	// Without a logo: the name only, no image part.
	r := e.must(200, f.bob, "GET", tp+"/report", nil)
	files := unzipped(t, r.Body)
	if hdr := headed(t, files); strings.Contains(hdr, "<w:drawing>") || strings.Contains(files["word/_rels/header1.xml.rels"], "rIdLogo") {
		t.Errorf("an image in the header of an organisation without a logo: %s", hdr)
	}
	for name := range files {
		if strings.HasPrefix(name, "word/media/") {
			t.Errorf("image part %s without a logo or a signature", name)
		}
	}
	// both reports are converted in one LibreOffice start, at the end
	var b officeBatch
	b.add("without a logo", r.Body, "docx", func(t *testing.T, _ string, pages []string) { pageHeads(t, pages, "Acme") })

	// With a logo: the name and the logo, an image part the header refers to.
	logo(f.alice, f.acme, pngBytes(t, 64, 32))
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.alice, "POST", tp+"/sign", map[string]any{"first_name": "Sig", "last_name": "Ner",
		"signature": `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"><path d="M5 30 C 20 5, 40 5, 50 20" stroke="black" fill="none"/></svg>`})
	r = e.must(200, f.bob, "GET", tp+"/report", nil)
	files = unzipped(t, r.Body)
	hdr := headed(t, files)
	// drawing ids unique across the document and its header (logo, signature)
	ids := regexp.MustCompile(`<wp:docPr id="(\d+)"`).FindAllStringSubmatch(files["word/document.xml"]+hdr, -1)
	if len(ids) != 2 || ids[0][1] == ids[1][1] {
		t.Errorf("drawing ids %v, want two distinct", ids)
	}
	goldenFile(t, "toolbox-report-header.xml", []byte(hdr))
	if !strings.Contains(hdr, `<a:blip r:embed="rIdLogo"/>`) ||
		!strings.Contains(files["word/_rels/header1.xml.rels"], `Id="rIdLogo" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/logo.png"`) {
		t.Errorf("header without its logo: %s\nrels %s", hdr, files["word/_rels/header1.xml.rels"])
	}
	cfg, err := png.DecodeConfig(strings.NewReader(files["word/media/logo.png"]))
	if err != nil || cfg.Width != 64 || cfg.Height != 32 {
		t.Errorf("word/media/logo.png is not Acme's logo: %+v %v", cfg, err)
	}
	b.add("with a logo", r.Body, "docx", func(t *testing.T, pdf string, pages []string) {
		n := pageHeads(t, pages, "Acme")
		// the logo is drawn on every page (pdfimages lists the images per page)
		list, err := exec.Command("pdfimages", "-list", pdf).Output()
		if err != nil {
			t.Fatalf("pdfimages (poppler-utils): %v", err)
		}
		perPage := map[string]int{}
		for _, line := range strings.Split(string(list), "\n")[2:] {
			if fs := strings.Fields(line); len(fs) > 4 && fs[3] == "64" && fs[4] == "32" {
				perPage[fs[0]]++
			}
		}
		if len(perPage) != n {
			t.Errorf("the logo is not on each of the %d pages: %v\n%s", n, perPage, list)
		}
	})
	b.run(t)
}

// pageHeads: every page of the PDF text (pdftotext's pages, the last one
// empty after the final form feed) begins with the organisation's name, and
// there are at least two pages. It answers the number of pages.
func pageHeads(t *testing.T, pages []string, name string) int {
	t.Helper()
	if len(pages) > 0 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	if len(pages) < 2 {
		t.Fatalf("want a report of two pages or more, got %d", len(pages))
	}
	for i, p := range pages {
		if first := strings.Fields(p); len(first) == 0 || first[0] != name {
			t.Errorf("page %d does not start with %q:\n%s", i+1, name, p)
		}
	}
	return len(pages)
}

// TestToolboxReportRTL: a right-to-left organisation name marks the page
// header right to left (logo and name at the right margin), a Hebrew
// signer's name cell is marked as the content lines are, left-to-right
// cells are not; the document export's header follows the same rule.
func TestToolboxReportRTL(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(200, f.alice, "PATCH", acme, map[string]any{"name": "בונים בע״מ"})
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Lifting"}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": "Check the slings"})
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.alice, "POST", tp+"/sign", map[string]any{"first_name": "דנה", "last_name": "כהן", "company": "Lift Co", "position": "מנופאית", "declaration": true})
	e.run(t, []scenario{
		{"other organisation cannot read the report", f.mallory, "GET", tp + "/report", nil, 403, nil},
	})
	r := e.must(200, f.bob, "GET", tp+"/report", nil)
	files := unzipped(t, r.Body)
	doc, hdr := files["word/document.xml"], files["word/header1.xml"]
	if want := `<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:color w:val="666666"/><w:sz w:val="18"/><w:rtl/></w:rPr><w:t xml:space="preserve">בונים בע״מ</w:t>`; !strings.Contains(hdr, want) {
		t.Errorf("header not marked right to left: %s", hdr)
	}
	for _, want := range []string{
		`<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t xml:space="preserve">דנה כהן</w:t></w:r></w:p>`,
		`<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t xml:space="preserve">מנופאית</w:t></w:r></w:p>`,
		`<w:p><w:r><w:t xml:space="preserve">Lift Co</w:t></w:r></w:p>`,
		`<w:p><w:r><w:t xml:space="preserve">• Check the slings</w:t></w:r></w:p>`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document.xml lacks %s", want)
		}
	}
	if n := strings.Count(doc, "<w:bidi/>"); n != 2 {
		t.Errorf("%d paragraphs marked right to left, want the name and the position", n)
	}
	// LibreOffice puts the header at the right margin
	_, pages := officePDF(t, r.Body, "docx")
	if first := strings.SplitN(pages[0], "\n", 2)[0]; !strings.Contains(first, "בע״מ") || len(first)-len(strings.TrimLeft(first, " ")) < 40 {
		t.Errorf("header not at the right margin: %q", first)
	}
	// the document export's header: the same rule
	d := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Spec"}).obj(t)["id"].(string)
	h := e.must(200, f.alice, "GET", "/documents/"+d+"/branches/main", nil).obj(t)["hash"].(string)
	hdr = unzipped(t, e.must(200, f.bob, "GET", "/documents/"+d+"/revisions/"+h+"/export.docx", nil).Body)["word/header1.xml"]
	if !strings.Contains(hdr, `<w:p><w:pPr><w:bidi/></w:pPr>`) || !strings.Contains(hdr, `<w:rtl/></w:rPr><w:t xml:space="preserve">בונים בע״מ</w:t>`) {
		t.Errorf("document export header not marked right to left: %s", hdr)
	}
}
