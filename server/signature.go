package server

import (
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"
)

// A drawn signature is stored as SVG and drawn in reports and browsers, so
// it is parsed and re-serialised from allow-lists, never stored as sent:
// only the elements and attributes of a drawing survive, a paint may refer
// only to an element of the same drawing (url(#id)), and depth and size are
// bounded. What cannot be made safe by leaving it out (scripts, links,
// event handlers, external references) is refused with 400 so the client
// learns why.

// signatureElements are the SVG elements a drawn signature needs. Links
// (<a href="javascript:...">), <use>, <image>, <style>, <foreignObject>,
// filters and animations that rewrite attributes all run or fetch something
// when the signature is drawn.
var signatureElements = map[string]bool{
	"svg": true, "g": true, "defs": true, "title": true, "desc": true, "path": true, "line": true,
	"polyline": true, "polygon": true, "rect": true, "circle": true, "ellipse": true, "text": true, "tspan": true,
	"linearGradient": true, "radialGradient": true, "stop": true,
}

// textElements may hold character data; elsewhere only whitespace is
// allowed (and dropped).
var textElements = map[string]bool{"text": true, "tspan": true, "title": true, "desc": true}

// signatureAttrs are the attributes kept; any other is dropped. Paint
// attributes (paintAttrs) are checked for references.
var signatureAttrs = map[string]bool{
	"id": true, "viewBox": true, "preserveAspectRatio": true, "version": true, "width": true, "height": true,
	"x": true, "y": true, "x1": true, "y1": true, "x2": true, "y2": true, "cx": true, "cy": true, "r": true,
	"rx": true, "ry": true, "fx": true, "fy": true, "d": true, "points": true, "transform": true, "offset": true,
	"dx": true, "dy": true, "gradientUnits": true, "gradientTransform": true, "spreadMethod": true,
	"opacity": true, "font-family": true, "font-size": true, "font-weight": true, "font-style": true,
	"text-anchor": true, "dominant-baseline": true, "vector-effect": true, "shape-rendering": true,
	"style": true,
}

// paintAttrs are presentation properties, allowed as attributes and in
// style; their values may name a colour or a local url(#id).
var paintAttrs = map[string]bool{
	"fill": true, "fill-opacity": true, "fill-rule": true, "clip-rule": true, "stroke": true,
	"stroke-width": true, "stroke-opacity": true, "stroke-linecap": true, "stroke-linejoin": true,
	"stroke-miterlimit": true, "stroke-dasharray": true, "stroke-dashoffset": true, "stop-color": true,
	"stop-opacity": true, "opacity": true, "font-family": true, "font-size": true, "font-weight": true,
	"font-style": true, "text-anchor": true, "color": true, "visibility": true, "display": true,
}

const (
	svgNamespace      = "http://www.w3.org/2000/svg"
	maxSignatureDepth = 64
	maxSignatureNodes = 20_000
)

var (
	localURL = regexp.MustCompile(`^url\(\s*#[A-Za-z_][A-Za-z0-9_.-]*\s*\)$`)
	anyURL   = regexp.MustCompile(`(?i)url\s*\(`)
)

// checkSignature validates a signature without keeping the result.
func checkSignature(sig string) error {
	_, err := sanitizeSignature(sig)
	return err
}

func signatureProblem(problem string) error { return fieldError("signature", problem) }

// sanitizeSignature parses an SVG signature and returns it re-serialised
// from the allow-lists, or a 400 naming what is refused. "" stays "".
func sanitizeSignature(sig string) (string, error) {
	if sig == "" {
		return "", nil
	}
	if len(sig) > maxSignature {
		return "", signatureProblem("must be at most 512 KiB")
	}
	if !strings.HasPrefix(sig, "<svg") || !strings.HasSuffix(sig, "</svg>") {
		return "", signatureProblem("must be SVG text starting with <svg and ending with </svg>")
	}
	d := xml.NewDecoder(strings.NewReader(sig))
	var out strings.Builder
	var open []string // element names from the root down
	nodes, roots := 0, 0
	pendingClose := false // the last start tag may still become self-closing
	closeStart := func() {
		if pendingClose {
			out.WriteByte('>')
			pendingClose = false
		}
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", signatureProblem("must be well-formed SVG")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if t.Name.Space != "" && t.Name.Space != svgNamespace {
				return "", signatureProblem("must not contain elements of other namespaces")
			}
			if !signatureElements[name] {
				return "", signatureProblem("must not contain " + name + " elements")
			}
			if len(open) == 0 {
				if roots++; roots > 1 || name != "svg" {
					return "", signatureProblem("must have exactly one root svg element")
				}
			}
			if len(open) >= maxSignatureDepth {
				return "", signatureProblem("must not nest elements more than 64 deep")
			}
			if nodes++; nodes > maxSignatureNodes {
				return "", signatureProblem("must have at most 20000 elements")
			}
			closeStart()
			attrs, err := signatureAttributes(t.Attr)
			if err != nil {
				return "", err
			}
			out.WriteByte('<')
			out.WriteString(name)
			if len(open) == 0 {
				out.WriteString(` xmlns="` + svgNamespace + `"`)
			}
			for _, a := range attrs {
				out.WriteString(" " + a[0] + `="`)
				_ = xml.EscapeText(&out, []byte(a[1]))
				out.WriteByte('"')
			}
			open = append(open, name)
			pendingClose = true
		case xml.EndElement:
			name := open[len(open)-1]
			open = open[:len(open)-1]
			if pendingClose && len(open) > 0 { // the root keeps </svg>, as the spec's shape asks
				out.WriteString("/>")
				pendingClose = false
			} else {
				closeStart()
				out.WriteString("</" + name + ">")
			}
		case xml.CharData:
			if len(open) == 0 {
				if strings.TrimSpace(string(t)) != "" {
					return "", signatureProblem("must have exactly one root svg element")
				}
				continue
			}
			if !textElements[open[len(open)-1]] {
				continue // whitespace between elements (or stray text) is dropped
			}
			closeStart()
			// Escaped on output: CDATA holding markup stays text.
			_ = xml.EscapeText(&out, t)
		case xml.Comment:
			// Dropped.
		case xml.ProcInst, xml.Directive:
			return "", signatureProblem("must not contain processing instructions or DTDs")
		}
	}
	if roots != 1 {
		return "", signatureProblem("must have exactly one root svg element")
	}
	if out.Len() > maxSignature {
		return "", signatureProblem("must be at most 512 KiB")
	}
	return out.String(), nil
}

// signatureAttributes keeps the allowed attributes in a fixed order (so
// the same drawing always serialises alike), refusing event handlers,
// links, xml:base and references outside the drawing.
func signatureAttributes(in []xml.Attr) ([][2]string, error) {
	var out [][2]string
	for _, a := range in {
		name := a.Name.Local
		lower := strings.ToLower(name)
		switch {
		case strings.HasPrefix(lower, "on"):
			return nil, signatureProblem("must not contain event handler attributes")
		case lower == "href" || a.Name.Space == "http://www.w3.org/1999/xlink":
			return nil, signatureProblem("must not contain links")
		case a.Name.Space == "xmlns" || (a.Name.Space == "" && name == "xmlns"):
			continue // namespace declarations: the root gets the SVG one
		case a.Name.Space == "http://www.w3.org/XML/1998/namespace" || a.Name.Space == "xml":
			if name == "base" {
				return nil, signatureProblem("must not contain xml:base")
			}
			continue
		case a.Name.Space != "":
			continue
		}
		if name != "style" && checkPaint(a.Value) != nil {
			// Refused even on attributes that would be dropped, so the
			// client learns the drawing pointed outside itself.
			return nil, signatureProblem("may refer only to elements of the drawing itself (url(#id))")
		}
		switch {
		case name == "style":
			style, err := signatureStyle(a.Value)
			if err != nil {
				return nil, err
			}
			if style != "" {
				out = append(out, [2]string{"style", style})
			}
		case paintAttrs[name]:
			out = append(out, [2]string{name, a.Value})
		case signatureAttrs[name]:
			out = append(out, [2]string{name, a.Value})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, nil
}

// checkPaint allows a url() only as a reference inside the drawing.
func checkPaint(v string) error {
	if !anyURL.MatchString(v) {
		return nil
	}
	ref, _, _ := strings.Cut(strings.TrimSpace(v), ")")
	if !localURL.MatchString(ref+")") || strings.Count(strings.ToLower(v), "url") > 1 {
		return signatureProblem("may refer only to elements of the drawing itself (url(#id))")
	}
	return nil
}

// signatureStyle re-serialises a style attribute from its presentation
// declarations; anything that is not one (at-rules, comments, escapes,
// unknown properties) is refused or dropped.
func signatureStyle(v string) (string, error) {
	if strings.ContainsAny(v, `\@<>{}`) || strings.Contains(v, "/*") {
		return "", signatureProblem("style may hold only presentation properties")
	}
	var decls []string
	for _, decl := range strings.Split(v, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		prop, val = strings.ToLower(strings.TrimSpace(prop)), strings.TrimSpace(val)
		if !ok || prop == "" || val == "" {
			continue
		}
		if !paintAttrs[prop] {
			if anyURL.MatchString(val) {
				return "", signatureProblem("must not refer to anything outside the drawing")
			}
			continue // unknown property: dropped
		}
		if err := checkPaint(val); err != nil {
			return "", err
		}
		decls = append(decls, prop+":"+val)
	}
	return strings.Join(decls, ";"), nil
}
