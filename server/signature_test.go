package server

import (
	"strings"
	"testing"
)

// TestSignatureSanitiser: the corpus. Each input is refused (400 on
// signature) or stored re-serialised without what was unsafe; the stored
// form never holds an external reference.
func TestSignatureSanitiser(t *testing.T) {
	t.Parallel()
	deep := "<svg>" + strings.Repeat("<g>", 50_000) + strings.Repeat("</g>", 50_000) + "</svg>"
	wide := "<svg>" + strings.Repeat("<path d=\"M0 0\"/>", 20_001) + "</svg>"
	tests := []struct {
		name, in string
		refused  bool
		want     string // stored form when accepted
	}{
		{"style with an external url", `<svg><path style="fill:url(https://evil.test/x.svg#p);stroke:red" d="M0 0"/></svg>`, true, ""},
		{"fill with an external url", `<svg><path fill="url(https://evil.test/p)" d="M0 0"/></svg>`, true, ""},
		{"filter reference", `<svg><path filter="url(https://evil.test/f)" d="M0 0"/></svg>`, true, ""},
		{"filter reference, local", `<svg><path filter="url(#f)" d="M0 0"/></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>`},
		{"xml:base", `<svg xml:base="https://evil.test/"><path d="M0 0"/></svg>`, true, ""},
		{"CDATA with markup stays text", `<svg><text><![CDATA[<script>alert(1)</script>]]></text></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg"><text>&lt;script&gt;alert(1)&lt;/script&gt;</text></svg>`},
		{"several root elements", `<svg></svg><svg></svg>`, true, ""},
		{"text after the root", `<svg></svg>x</svg>`, true, ""},
		{"50,000 nested groups", deep, true, ""},
		{"more than 20,000 elements", wide, true, ""},
		{"style with an import", `<svg><path style="@import url(//evil.test/x.css)" d="M0 0"/></svg>`, true, ""},
		{"style with an escape", `<svg><path style="fill:u\72l(//evil.test)" d="M0 0"/></svg>`, true, ""},
		{"local gradient paint kept", `<svg><defs><linearGradient id="g"><stop offset="0" stop-color="#000"/></linearGradient></defs><path fill="url(#g)" d="M0 0"/></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg"><defs><linearGradient id="g"><stop offset="0" stop-color="#000"/></linearGradient></defs><path d="M0 0" fill="url(#g)"/></svg>`},
		{"style kept to presentation properties", `<svg><path style="fill: none; stroke: #000; behavior: x" d="M0 0"/></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0" style="fill:none;stroke:#000"/></svg>`},
		{"unknown attributes and comments dropped", `<svg data-x="1" width="10"><!-- c --><path d="M0 0" data-y="2"/></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg" width="10"><path d="M0 0"/></svg>`},
		{"foreign namespace element", `<svg xmlns:h="http://www.w3.org/1999/xhtml"><h:iframe/></svg>`, true, ""},
		{"xlink href", `<svg xmlns:xlink="http://www.w3.org/1999/xlink"><path xlink:href="https://evil.test" d="M0 0"/></svg>`, true, ""},
		{"a signature pad's output", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100" width="300" height="100"><path d="M 10 10 C 20 20, 40 20, 50 10" stroke-width="2" stroke="rgb(0, 0, 0)" fill="none" stroke-linecap="round"/></svg>`, false,
			`<svg xmlns="http://www.w3.org/2000/svg" height="100" viewBox="0 0 300 100" width="300"><path d="M 10 10 C 20 20, 40 20, 50 10" fill="none" stroke="rgb(0, 0, 0)" stroke-linecap="round" stroke-width="2"/></svg>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sanitizeSignature(tc.in)
			if tc.refused {
				if err == nil {
					t.Fatalf("accepted as %q", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if out != tc.want {
				t.Fatalf("stored\n %s\nwant\n %s", out, tc.want)
			}
		})
	}
}

// TestSignatureStoredSanitised: through HTTP, what is stored and shown is
// the re-serialised form.
func TestSignatureStoredSanitised(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	e.must(200, alice, "PATCH", "/users/@me", map[string]any{"signature": `<svg data-x="1"><!-- c --><path d="M0 0"/></svg>`})
	got := e.must(200, alice, "GET", "/users/@me", nil).obj(t)["signature"]
	if got != `<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>` {
		t.Fatalf("stored %q", got)
	}
	r := e.must(400, alice, "PATCH", "/users/@me", map[string]any{"signature": `<svg><path fill="url(https://evil.test/p)"/></svg>`})
	wantField("signature")(t, r)
}
