package server

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nguyenthenguyen/docx"
	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"

	"workspace/db"
	"workspace/web"
)

// The toolbox report (GET /toolboxes/{id}/report): the template
// web/templates/toolbox-report.docx filled with nguyenthenguyen/docx. That
// library only replaces text, so (as libraries.md found) the content lines
// and attendance rows are cloned from the template's own XML, and a last zip
// pass adds the signatures as PNG images rasterised from the sanitised SVG.

const (
	docxType        = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	signatureWidth  = 240 // pixels of the rasterised signature
	signatureHeight = 96
	emuPerPixel     = 9525 // at 96 dpi
	// signatureShownEMU is the width a signature is shown at (1.05 inch,
	// 1512 twips): the attendance table's signature cell is 1838 twips,
	// 1622 inside its margins, so the image never reaches the grid lines.
	signatureShownEMU = 960_120
)

func (s *Server) toolboxReport(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var p toolboxParts
	var org reportOrg
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		if p, err = loadToolboxParts(rq.ctx, q, t); err != nil {
			return err
		}
		// the toolbox's own organisation heads every page, as in its mails
		o, err := q.OrganisationGet(rq.ctx, t.OrganisationID)
		if err != nil {
			return err
		}
		org.name = o.Name
		org.logo, err = orgLogo(rq.ctx, q, o)
		return err
	})
	if err != nil {
		return err
	}
	tz := time.UTC
	if p.location != nil && p.location.TimezoneCode != nil {
		if loc, err := time.LoadLocation(*p.location.TimezoneCode); err == nil {
			tz = loc
		}
	}
	out, err := renderToolboxReport(p.json(), org, tz, s.now())
	if err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", docxType)
	rq.w.Header().Set("Content-Disposition", contentDisposition(reportFileName(p.t.Title)))
	rq.w.WriteHeader(http.StatusOK)
	_, err = rq.w.Write(out)
	return err
}

// reportFileName is the toolbox title made safe as a file name.
func reportFileName(title string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < 0x20 {
			return '_'
		}
		return r
	}, title)
	return name + " report.docx"
}

// reportTime shows a stored time in the location's zone.
func reportTime(v *string, tz *time.Location) string {
	if v == nil {
		return "not conducted"
	}
	t, err := db.ParseTime(*v)
	if err != nil {
		return *v
	}
	return t.In(tz).Format("2 Jan 2006 15:04 MST")
}

func userName(u *userJSON) string {
	if u == nil {
		return ""
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		return u.Email
	}
	return name
}

// xmlText escapes text for a w:t element; line breaks become w:br.
func xmlText(s string) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if i > 0 {
			b.WriteString(`</w:t><w:br/><w:t xml:space="preserve">`)
		}
		_ = xml.EscapeText(&b, []byte(line))
	}
	return b.String()
}

// element returns the smallest <tag ...>...</tag> of content holding marker,
// with its start and end offsets.
func element(content, tag, marker string) (string, int, int, error) {
	at := strings.Index(content, marker)
	if at < 0 {
		return "", 0, 0, fmt.Errorf("report template: no %s", marker)
	}
	start := strings.LastIndex(content[:at], "<"+tag+">")
	if s2 := strings.LastIndex(content[:at], "<"+tag+" "); s2 > start {
		start = s2
	}
	end := strings.Index(content[at:], "</"+tag+">")
	if start < 0 || end < 0 {
		return "", 0, 0, fmt.Errorf("report template: %s is not inside <%s>", marker, tag)
	}
	end += at + len("</"+tag+">")
	return content[start:end], start, end, nil
}

// reportLine is one paragraph of the content: a heading or a topic.
type reportLine struct {
	text string
	bold bool
}

func contentLines(t toolboxJSON) []reportLine {
	var lines []reportLine
	topic := func(tp toolboxTopicJSON) {
		text := "• " + tp.Body
		if tp.ReviewResponse != nil {
			answer := "No"
			if *tp.ReviewResponse {
				answer = "Yes"
			}
			text += "\nReview response: " + answer
		}
		if tp.Comments != "" {
			text += "\nComments: " + tp.Comments
		}
		lines = append(lines, reportLine{text: text})
	}
	for _, tp := range t.Topics {
		topic(tp)
	}
	for _, sec := range t.Sections {
		lines = append(lines, reportLine{text: sec.Title, bold: true})
		for _, tp := range sec.Topics {
			topic(tp)
		}
	}
	if len(lines) == 0 {
		lines = append(lines, reportLine{text: "No topics."})
	}
	return lines
}

var signedMethodNames = map[string]string{
	methodDeclaration: "Declaration", methodSignature: "Signature", methodToolboxQR: "Toolbox QR code",
	methodUserQR: "User QR code", methodApp: "App",
}

// signedHow is how a person signed, in words, naming who recorded a
// signature that is not the signer's own (docs/toolboxes.md).
func signedHow(u toolboxUserJSON) string {
	text := signedMethodNames[u.SignedMethod]
	if u.RecordedBy != nil {
		text += ", recorded by " + strings.TrimSpace(u.RecordedBy.FirstName+" "+u.RecordedBy.LastName)
	}
	return text
}

// isRTL: the text's first strong letter is right to left (Hebrew, Arabic,
// Syriac, Thaana, N'Ko and the like).
func isRTL(s string) bool {
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko, unicode.Samaritan, unicode.Mandaic):
			return true
		case unicode.IsLetter(r):
			return false
		}
	}
	return false
}

// markRTL marks the paragraphs of a fragment (a paragraph, a table cell)
// right to left: Word and LibreOffice lay out a paragraph so only when it
// says so, w:bidi in its properties and w:rtl in its runs' properties.
// w:bidi goes after a w:pStyle and w:rtl last in w:rPr, where the schema
// wants them among the properties the templates use (style; bold, colour,
// size).
func markRTL(x string) string {
	x = insertAfter(x, "<w:r>", func(rest string) (string, int) {
		if strings.HasPrefix(rest, "<w:rPr>") {
			return "<w:rtl/>", strings.Index(rest, "</w:rPr>")
		}
		return "<w:rPr><w:rtl/></w:rPr>", 0
	})
	return insertAfter(x, "<w:p>", func(rest string) (string, int) {
		if !strings.HasPrefix(rest, "<w:pPr>") {
			return "<w:pPr><w:bidi/></w:pPr>", 0
		}
		at := len("<w:pPr>")
		if strings.HasPrefix(rest[at:], "<w:pStyle ") {
			at += strings.Index(rest[at:], "/>") + len("/>")
		}
		return "<w:bidi/>", at
	})
}

// insertAfter finds each start tag in x and inserts what at answers, at
// the offset it answers into the text after the tag.
func insertAfter(x, tag string, at func(rest string) (string, int)) string {
	var b strings.Builder
	for {
		i := strings.Index(x, tag)
		if i < 0 {
			b.WriteString(x)
			return b.String()
		}
		b.WriteString(x[:i+len(tag)])
		x = x[i+len(tag):]
		ins, off := at(x)
		b.WriteString(x[:off])
		b.WriteString(ins)
		x = x[off:]
	}
}

// signatureImage is one signature to embed: its relationship id and PNG.
type signatureImage struct {
	rel  string
	name string
	png  []byte
}

// reportOrg is the organisation a report's page header names: its name
// and its logo (nil without one).
type reportOrg struct {
	name string
	logo *db.Blob
}

func renderToolboxReport(t toolboxJSON, org reportOrg, tz *time.Location, now time.Time) ([]byte, error) {
	tmpl, err := web.Templates.ReadFile("templates/toolbox-report.docx")
	if err != nil {
		return nil, err
	}
	if err := checkDocx(tmpl); err != nil {
		return nil, fmt.Errorf("%s: %w", "report template", err)
	}
	r, err := docx.ReadDocxFromMemory(bytes.NewReader(tmpl), int64(len(tmpl)))
	if err != nil {
		return nil, fmt.Errorf("report template: %w", err)
	}
	defer r.Close()
	d := r.Editable()
	content := d.GetContent()

	// Content lines: clone the {LINE} paragraph once per line.
	para, start, end, err := element(content, "w:p", "{LINE}")
	if err != nil {
		return nil, err
	}
	var lines strings.Builder
	for _, l := range contentLines(t) {
		p := strings.Replace(para, "{LINE}", xmlText(l.text), 1)
		if l.bold {
			p = strings.Replace(p, "<w:r>", "<w:r><w:rPr><w:b/></w:rPr>", 1)
		}
		if isRTL(l.text) {
			p = markRTL(p)
		}
		lines.WriteString(p)
	}
	content = content[:start] + lines.String() + content[end:]

	// Attendance: clone the {SIGNER_NAME} row once per signer.
	row, start, end, err := element(content, "w:tr", "{SIGNER_NAME}")
	if err != nil {
		return nil, err
	}
	var rows strings.Builder
	var images []signatureImage
	for _, u := range t.Users {
		// a right-to-left name, company or position: its cell's paragraph
		// marked so, as the content lines are
		marked := row
		for marker, text := range map[string]string{"{SIGNER_NAME}": u.FirstName + " " + u.LastName, "{SIGNER_COMPANY}": u.Company, "{SIGNER_POSITION}": u.Position} {
			if isRTL(text) {
				p, _, _, err := element(marked, "w:p", marker)
				if err != nil {
					return nil, err
				}
				marked = strings.Replace(marked, p, markRTL(p), 1)
			}
		}
		cells := strings.NewReplacer(
			"{SIGNER_NAME}", xmlText(strings.TrimSpace(u.FirstName+" "+u.LastName)),
			"{SIGNER_COMPANY}", xmlText(u.Company),
			"{SIGNER_POSITION}", xmlText(u.Position),
			"{SIGNED_AT}", xmlText(reportTime(&u.SignedAt, tz)),
			"{SIGNED_METHOD}", xmlText(signedHow(u)),
		).Replace(marked)
		if img, ok := signaturePNG(u.Signature); ok {
			n := len(images) + 1
			images = append(images, signatureImage{rel: fmt.Sprintf("rIdSig%d", n), name: fmt.Sprintf("signature%d.png", n), png: img})
			// The drawing replaces the whole run holding {SIGNATURE}.
			_, rs, re, err := element(cells, "w:r", "{SIGNATURE}")
			if err != nil {
				return nil, err
			}
			cells = cells[:rs] + inlineDrawing(images[n-1]) + cells[re:]
		} else {
			cells = strings.Replace(cells, "{SIGNATURE}", "", 1)
		}
		rows.WriteString(cells)
	}
	if len(t.Users) == 0 {
		rows.WriteString(strings.NewReplacer("{SIGNER_NAME}", "No signatures.", "{SIGNER_COMPANY}", "", "{SIGNER_POSITION}", "", "{SIGNED_AT}", "",
			"{SIGNED_METHOD}", "", "{SIGNATURE}", "").Replace(row))
	}
	content = content[:start] + rows.String() + content[end:]
	d.SetContent(content)

	// Header fields through the library's escaping replace (one line each:
	// the library turns newlines into invalid XML).
	location := "none"
	if t.Location != nil {
		location = t.Location.Name
	}
	workgroup := "none"
	if t.Workgroup != nil {
		workgroup = t.Workgroup.Name
	}
	position := "not recorded"
	if t.Latitude != nil && t.Longitude != nil {
		position = fmt.Sprintf("%.6f, %.6f", *t.Latitude, *t.Longitude)
		if t.WithinGeofence != nil && *t.WithinGeofence {
			position += " (within the location's geofence)"
		} else if t.WithinGeofence != nil {
			position += " (outside the location's geofence)"
		}
	}
	conductor := userName(t.ConductedBy)
	if conductor == "" {
		conductor = "not conducted"
	}
	for k, v := range map[string]string{
		"{TITLE}": t.Title, "{LOCATION}": location, "{WORKGROUP}": workgroup, "{CONDUCTOR}": conductor,
		"{CONDUCTED_AT}": reportTime(t.ConductedAt, tz), "{POSITION}": position,
		"{GENERATED}": "Generated " + now.In(tz).Format("2 Jan 2006 15:04 MST") + " from toolbox " + t.ID.String(),
	} {
		if err := d.Replace(k, strings.Join(strings.Fields(v), " "), -1); err != nil {
			return nil, err
		}
	}
	// The page header (every page: one default header, no first-page
	// variant) as in the document export: the logo, then the name.
	if err := d.ReplaceHeader("{ORGANISATION}", strings.Join(strings.Fields(org.name), " ")); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		return nil, err
	}
	out, err := withLogo(buf.Bytes(), org.logo, isRTL(org.name))
	if err != nil || len(images) == 0 {
		return out, err
	}
	return addImages(out, images)
}

// signaturePNG is a signer's signature rasterised, when there is one that
// draws; a signature that cannot be drawn leaves the cell empty rather than
// failing the report.
func signaturePNG(svg *string) ([]byte, bool) {
	if svg == nil || *svg == "" {
		return nil, false
	}
	img, err := rasteriseSignature(*svg)
	return img, err == nil
}

// rasteriseSignature draws a sanitised SVG signature as a PNG on a
// transparent background, so that it never covers the table's grid lines
// (shown at signatureShownEMU wide it fits inside its cell).
func rasteriseSignature(svg string) ([]byte, error) {
	icon, err := oksvg.ReadIconStream(strings.NewReader(svg))
	if err != nil {
		return nil, err
	}
	icon.SetTarget(0, 0, signatureWidth, signatureHeight)
	img := image.NewRGBA(image.Rect(0, 0, signatureWidth, signatureHeight))
	scanner := rasterx.NewScannerGV(signatureWidth, signatureHeight, img, img.Bounds())
	icon.Draw(rasterx.NewDasher(signatureWidth, signatureHeight, scanner), 1)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inlineDrawing is the run showing one embedded image (DrawingML inline).
func inlineDrawing(img signatureImage) string {
	// 1.05 x 0.42 inch: inside the 1838-twip signature cell less its margins
	cx, cy := signatureShownEMU, signatureShownEMU*signatureHeight/signatureWidth
	// drawing ids are unique across the document and its header: after the
	// header logo's (Word may call a file with repeated ids damaged)
	n, _ := strconv.Atoi(strings.TrimPrefix(img.rel, "rIdSig"))
	id := strconv.Itoa(logoDrawingID + n)
	return fmt.Sprintf(`<w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="%d" cy="%d"/>`+
		`<wp:docPr id="%s" name="Signature %d"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">`+
		`<pic:pic><pic:nvPicPr><pic:cNvPr id="%s" name="%s"/><pic:cNvPicPr/></pic:nvPicPr>`+
		`<pic:blipFill><a:blip r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>`+
		`<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>`+
		`</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`, cx, cy, id, n, id, img.name, img.rel, cx, cy)
}

// addImages copies the document, adding the images under word/media and
// their relationships to word/_rels/document.xml.rels.
func addImages(doc []byte, images []signatureImage) ([]byte, error) {
	zr, err := openZip(doc, docxLimits)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		data, err := readZipFile(f, docxLimits)
		if err != nil {
			return nil, err
		}
		if f.Name == "word/_rels/document.xml.rels" {
			var rels strings.Builder
			for _, img := range images {
				fmt.Fprintf(&rels, `<Relationship Id="%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/%s"/>`, img.rel, img.name)
			}
			data = []byte(strings.Replace(string(data), "</Relationships>", rels.String()+"</Relationships>", 1))
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	for _, img := range images {
		w, err := zw.Create("word/media/" + img.name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(img.png); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
