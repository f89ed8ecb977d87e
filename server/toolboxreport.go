package server

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nguyenthenguyen/docx"
	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"

	"workspace/db"
	"workspace/server/render"
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
	if err := render.CheckDocx(tmpl); err != nil {
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
	para, start, end, err := render.Element(content, "w:p", "{LINE}")
	if err != nil {
		return nil, err
	}
	var lines strings.Builder
	for _, l := range contentLines(t) {
		p := strings.Replace(para, "{LINE}", render.XMLText(l.text), 1)
		if l.bold {
			p = strings.Replace(p, "<w:r>", "<w:r><w:rPr><w:b/></w:rPr>", 1)
		}
		if render.IsRTL(l.text) {
			p = render.MarkRTL(p)
		}
		lines.WriteString(p)
	}
	content = content[:start] + lines.String() + content[end:]

	// Attendance: clone the {SIGNER_NAME} row once per signer.
	row, start, end, err := render.Element(content, "w:tr", "{SIGNER_NAME}")
	if err != nil {
		return nil, err
	}
	var rows strings.Builder
	var images []render.Image
	for _, u := range t.Users {
		// a right-to-left name, company or position: its cell's paragraph
		// marked so, as the content lines are
		marked := row
		for marker, text := range map[string]string{"{SIGNER_NAME}": u.FirstName + " " + u.LastName, "{SIGNER_COMPANY}": u.Company, "{SIGNER_POSITION}": u.Position} {
			if render.IsRTL(text) {
				p, _, _, err := render.Element(marked, "w:p", marker)
				if err != nil {
					return nil, err
				}
				marked = strings.Replace(marked, p, render.MarkRTL(p), 1)
			}
		}
		cells := strings.NewReplacer(
			"{SIGNER_NAME}", render.XMLText(strings.TrimSpace(u.FirstName+" "+u.LastName)),
			"{SIGNER_COMPANY}", render.XMLText(u.Company),
			"{SIGNER_POSITION}", render.XMLText(u.Position),
			"{SIGNED_AT}", render.XMLText(reportTime(&u.SignedAt, tz)),
			"{SIGNED_METHOD}", render.XMLText(signedHow(u)),
		).Replace(marked)
		if img, ok := signaturePNG(u.Signature); ok {
			n := len(images) + 1
			images = append(images, render.Image{Rel: fmt.Sprintf("rIdSig%d", n), Name: fmt.Sprintf("signature%d.png", n), PNG: img})
			// The drawing replaces the whole run holding {SIGNATURE}.
			_, rs, re, err := render.Element(cells, "w:r", "{SIGNATURE}")
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
	out, err := render.WithLogo(buf.Bytes(), blobData(org.logo), render.IsRTL(org.name))
	if err != nil || len(images) == 0 {
		return out, err
	}
	return render.AddImages(out, images)
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
func inlineDrawing(img render.Image) string {
	// 1.05 x 0.42 inch: inside the 1838-twip signature cell less its margins
	cx, cy := signatureShownEMU, signatureShownEMU*signatureHeight/signatureWidth
	// drawing ids are unique across the document and its header: after the
	// header logo's (Word may call a file with repeated ids damaged)
	n, _ := strconv.Atoi(strings.TrimPrefix(img.Rel, "rIdSig"))
	id := strconv.Itoa(render.LogoDrawingID + n)
	return fmt.Sprintf(`<w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="%d" cy="%d"/>`+
		`<wp:docPr id="%s" name="Signature %d"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">`+
		`<pic:pic><pic:nvPicPr><pic:cNvPr id="%s" name="%s"/><pic:cNvPicPr/></pic:nvPicPr>`+
		`<pic:blipFill><a:blip r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>`+
		`<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>`+
		`</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`, cx, cy, id, n, id, img.Name, img.Rel, cx, cy)
}
