package server

import (
	"encoding/xml"
	"io"
	"strings"
)

// signatureElements are the SVG elements a drawn signature needs. An
// allow-list, not a deny-list: links (<a href="javascript:...">), <use>,
// <image>, <style> and animations that rewrite attributes all run or fetch
// something when the signature is drawn.
var signatureElements = map[string]bool{
	"svg": true, "g": true, "defs": true, "title": true, "desc": true, "path": true, "line": true,
	"polyline": true, "polygon": true, "rect": true, "circle": true, "ellipse": true, "text": true, "tspan": true,
}

// checkSignature: SVG text from <svg to </svg>, well-formed XML, only the
// elements of a drawing, no event handlers or links, since it is drawn in
// reports.
func checkSignature(sig string) error {
	if sig == "" {
		return nil
	}
	if len(sig) > maxSignature {
		return fieldError("signature", "must be at most 512 KiB")
	}
	if !strings.HasPrefix(sig, "<svg") || !strings.HasSuffix(sig, "</svg>") {
		return fieldError("signature", "must be SVG text starting with <svg and ending with </svg>")
	}
	d := xml.NewDecoder(strings.NewReader(sig))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fieldError("signature", "must be well-formed SVG")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !signatureElements[t.Name.Local] {
				return fieldError("signature", "must not contain "+t.Name.Local+" elements")
			}
			for _, a := range t.Attr {
				if n := strings.ToLower(a.Name.Local); strings.HasPrefix(n, "on") || n == "href" {
					return fieldError("signature", "must not contain event handler or link attributes")
				}
			}
		case xml.ProcInst, xml.Directive:
			return fieldError("signature", "must not contain processing instructions or DTDs")
		}
	}
}
