package render

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"strconv"
	"strings"
	"unicode"

	"github.com/xuri/excelize/v2"
)

// DOCX and XLSX helpers shared by the document export and the toolbox
// report: text for w:t, right-to-left paragraphs, template elements, the
// page header's logo and embedded images.

const (
	EMUPerPixel    = 9525 // at 96 dpi
	LogoHeightPx   = 48   // the logo's height in the DOCX header, in pixels at 96 dpi
	LogoMaxWidthPx = 240
	LogoDrawingID  = 100 // the header logo's drawing id (wp:docPr); embedded images follow it
)

// XMLText escapes text for a w:t element; line breaks become w:br.
func XMLText(s string) string {
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
func Element(content, tag, marker string) (string, int, int, error) {
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

// isRTL: the text's first strong letter is right to left (Hebrew, Arabic,
// Syriac, Thaana, N'Ko and the like).
func IsRTL(s string) bool {
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
func MarkRTL(x string) string {
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

// Image is one signature to embed: its relationship id and PNG.
type Image struct {
	Rel  string // its relationship id, e.g. rIdSig1
	Name string // its file name under word/media
	PNG  []byte
}

// addImages copies the document, adding the images under word/media and
// their relationships to word/_rels/document.xml.rels.
func AddImages(doc []byte, images []Image) ([]byte, error) {
	zr, err := OpenZip(doc, DocxLimits)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		data, err := ReadZipFile(f, DocxLimits)
		if err != nil {
			return nil, err
		}
		if f.Name == "word/_rels/document.xml.rels" {
			var rels strings.Builder
			for _, img := range images {
				fmt.Fprintf(&rels, `<Relationship Id="%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/%s"/>`, img.Rel, img.Name)
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
		w, err := zw.Create("word/media/" + img.Name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(img.PNG); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withLogo puts the organisation's logo in the header in place of the
// {LOGO} run (or drops the run when there is no logo that decodes); rtl
// marks the header right to left (a Hebrew or Arabic name: the logo then
// stands at the right margin, the name to its left).
func WithLogo(doc []byte, logo []byte, rtl bool) ([]byte, error) {
	var run string
	var media, ext string
	if len(logo) > 0 {
		if cfg, format, err := image.DecodeConfig(bytes.NewReader(logo)); err == nil && cfg.Height > 0 && (format == "png" || format == "jpeg") {
			ext = format
			media = "word/media/logo." + ext
			h := LogoHeightPx
			w := cfg.Width * h / cfg.Height
			if w > LogoMaxWidthPx {
				w, h = LogoMaxWidthPx, cfg.Height*LogoMaxWidthPx/cfg.Width
			}
			cx, cy := max(w, 1)*EMUPerPixel, max(h, 1)*EMUPerPixel
			run = fmt.Sprintf(`<w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="%d" cy="%d"/>`+
				`<wp:docPr id="%d" name="Logo"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">`+
				`<pic:pic><pic:nvPicPr><pic:cNvPr id="%d" name="logo.%s"/><pic:cNvPicPr/></pic:nvPicPr>`+
				`<pic:blipFill><a:blip r:embed="rIdLogo"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>`+
				`<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>`+
				`</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`, cx, cy, LogoDrawingID, LogoDrawingID, ext, cx, cy)
		}
	}
	zr, err := OpenZip(doc, DocxLimits)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		data, err := ReadZipFile(f, DocxLimits)
		if err != nil {
			return nil, err
		}
		switch f.Name {
		case "word/header1.xml":
			s := string(data)
			_, rs, re, err := Element(s, "w:r", "{LOGO}")
			if err != nil {
				return nil, err
			}
			s = s[:rs] + run + s[re:]
			if rtl {
				s = MarkRTL(s)
			}
			data = []byte(s)
		case "word/_rels/header1.xml.rels":
			if media != "" {
				rel := `<Relationship Id="rIdLogo" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/logo.` + ext + `"/>`
				data = []byte(strings.Replace(string(data), "</Relationships>", rel+"</Relationships>", 1))
			}
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if media != "" {
		w, err := zw.Create(media)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(logo); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// xlsxHeaderText escapes & in header text (it starts a code) and bounds it
// (Excel keeps 255 characters of a header).
func XLSXHeaderText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60])
	}
	return strings.ReplaceAll(s, "&", "&&")
}

func AddXLSXLogo(f *excelize.File, sheet string, logo []byte) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(logo))
	if err != nil || cfg.Height == 0 {
		return nil // a logo that does not decode is left out
	}
	ext := ".png"
	if format == "jpeg" {
		ext = ".jpg"
	}
	h := LogoHeightPx
	w := cfg.Width * h / cfg.Height
	if w > LogoMaxWidthPx {
		w, h = LogoMaxWidthPx, cfg.Height*LogoMaxWidthPx/cfg.Width
	}
	return f.AddHeaderFooterImage(sheet, &excelize.HeaderFooterImageOptions{Position: excelize.HeaderFooterImagePositionLeft,
		File: logo, Extension: ext, Width: fmt.Sprintf("%dpt", max(w, 1)*3/4), Height: fmt.Sprintf("%dpt", max(h, 1)*3/4)})
}

// xlsxSheetName makes a sheet name Excel accepts: at most 31 characters,
// none of []:*?/\, not starting or ending with ', unique (case-insensitive).
func XLSXSheetName(name string, used map[string]bool) string {
	clean := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\`, r) || r < 0x20 {
			return '_'
		}
		return r
	}, name)
	clean = strings.Trim(clean, "'")
	if r := []rune(clean); len(r) > 31 {
		clean = string(r[:31])
	}
	if clean == "" {
		clean = "Sheet"
	}
	out := clean
	for i := 2; used[strings.ToLower(out)]; i++ {
		suffix := " (" + strconv.Itoa(i) + ")"
		r := []rune(clean)
		if len(r)+len([]rune(suffix)) > 31 {
			r = r[:31-len([]rune(suffix))]
		}
		out = string(r) + suffix
	}
	used[strings.ToLower(out)] = true
	return out
}
