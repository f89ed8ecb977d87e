package render

import "testing"

// TestDocxMarkRTL: MarkRTL adds w:bidi to each paragraph's properties
// (after a style) and w:rtl last in each run's properties.
func TestDocxMarkRTL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`<w:p><w:r><w:t>א</w:t></w:r></w:p>`, `<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t>א</w:t></w:r></w:p>`},
		{`<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>א</w:t></w:r></w:p>`,
			`<w:p><w:pPr><w:pStyle w:val="Heading2"/><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t>א</w:t></w:r></w:p>`},
		{`<w:p><w:pPr><w:jc w:val="left"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val="20"/></w:rPr><w:t>א</w:t></w:r><w:r><w:rPr></w:rPr><w:t>ب</w:t></w:r></w:p>`,
			`<w:p><w:pPr><w:bidi/><w:jc w:val="left"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val="20"/><w:rtl/></w:rPr><w:t>א</w:t></w:r><w:r><w:rPr><w:rtl/></w:rPr><w:t>ب</w:t></w:r></w:p>`},
		{`<w:tc><w:tcPr></w:tcPr><w:p><w:r><w:t>א</w:t></w:r></w:p></w:tc>`,
			`<w:tc><w:tcPr></w:tcPr><w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t>א</w:t></w:r></w:p></w:tc>`},
	} {
		if got := MarkRTL(c.in); got != c.want {
			t.Errorf("MarkRTL(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
