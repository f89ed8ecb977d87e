package server

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestToolboxReport(t *testing.T) {
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(200, f.alice, "PATCH", "/locations/"+f.depot, map[string]any{"timezone_code": "Australia/Sydney"})
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Cranes & <rigging>", "location_id": f.depot}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	sec := e.must(201, f.alice, "POST", tp+"/sections", map[string]any{"title": "Exclusion zones"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"section_id": sec, "body": "Barriers at 10 m\nSpotter on duty", "comments": "Agreed", "review_response": true})
	e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": "Weather: wind limit 38 km/h"})
	e.run(t, []scenario{
		{"report before anyone signs", f.bob, "GET", tp + "/report", nil, 200, nil},
	})
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.alice, "POST", tp+"/sign", map[string]any{"first_name": "Sig", "last_name": "Ner", "company": "Lift Co",
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
	if err := wellFormed(doc); err != nil {
		t.Fatalf("document.xml is not well-formed XML: %v", err)
	}
	for _, want := range []string{"Cranes &amp; &lt;rigging&gt;", "Depot", "Exclusion zones", "Barriers at 10 m</w:t><w:br/>",
		"Spotter on duty", "Review response: Yes", "Comments: Agreed", "Weather: wind limit 38 km/h", "Sig Ner", "Lift Co",
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
	convertWithLibreOffice(t, r.Body)
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
func convertWithLibreOffice(t *testing.T, docx []byte) {
	t.Helper()
	bin, err := exec.LookPath("soffice")
	if err != nil {
		if bin, err = exec.LookPath("libreoffice"); err != nil {
			t.Skip("LibreOffice is not installed (apt-get install libreoffice-writer-nogui): the DOCX was checked as a ZIP only")
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "report.docx")
	if err := os.WriteFile(in, docx, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--norestore", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"),
		"--convert-to", "pdf", "--outdir", dir, in)
	done := make(chan error, 1)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("LibreOffice failed: %v\n%s", err, out.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("LibreOffice did not finish converting\n%s", out.String())
	}
	pdf, err := os.ReadFile(filepath.Join(dir, "report.pdf"))
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Fatalf("no PDF from LibreOffice (%v): %s", err, out.String())
	}
}
