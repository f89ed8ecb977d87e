package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestReleaseLabelSequences: the labels each Revision Format gives, in
// order, with bumps where the format takes them.
func TestReleaseLabelSequences(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name   string
		format int64
		bumps  []string // one per release ("" none)
		given  []string // format none only
		want   []string
	}{
		{name: "none: given", format: revisionFormatNone, given: []string{"Issue 1", "Rev B"}, want: []string{"Issue 1", "Rev B"}},
		{name: "zero", format: revisionFormatZero, want: []string{"0", "1", "2", "3"}},
		{name: "one", format: revisionFormatOne, want: []string{"1", "2", "3"}},
		{name: "major_minor", format: revisionFormatMajorMinor, bumps: []string{"", "minor", "major", "", "minor", "major", "major"},
			want: []string{"0.1", "0.2", "1.0", "1.1", "1.2", "2.0", "3.0"}},
		{name: "major_minor from a major", format: revisionFormatMajorMinor, bumps: []string{"major", ""}, want: []string{"1.0", "1.1"}},
		{name: "major_minor_revision: the revision always increments", format: revisionFormatMajorMinorRevision,
			bumps: []string{"", "", "minor", "", "major", "minor"}, want: []string{"0.0.1", "0.0.2", "0.1.3", "0.1.4", "1.0.5", "1.1.6"}},
		{name: "alphabet: a dash, then letters without I O Q S X Z", format: revisionFormatAlphabet,
			want: strings.Fields("- A B C D E F G H J K L M N P R T U V W Y AA AB AC")},
		{name: "alphabet_all: a dash, then every letter", format: revisionFormatAlphabetAll,
			want: strings.Fields("- A B C D E F G H I J K L M N O P Q R S T U V W X Y Z AA AB")},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var prev *release
			var got []string
			for i := range r.want {
				bump, given := "", ""
				if i < len(r.bumps) {
					bump = r.bumps[i]
				}
				if i < len(r.given) {
					given = r.given[i]
				}
				label, next := nextRelease(r.format, prev, bump, given)
				if next.Index != int64(i) {
					t.Fatalf("release %d has index %d", i, next.Index)
				}
				got = append(got, label)
				prev = &next
			}
			if fmt.Sprint(got) != fmt.Sprint(r.want) {
				t.Fatalf("labels %v, want %v", got, r.want)
			}
		})
	}
	for _, c := range []struct {
		letters string
		n       int64
		want    string
	}{
		{alphabetLetters, 20, "Y"}, {alphabetLetters, 21, "AA"}, {alphabetLetters, 40, "AY"}, {alphabetLetters, 41, "BA"},
		{alphabetLetters, 420, "YY"}, {alphabetLetters, 421, "AAA"},
		{allLetters, 26, "Z"}, {allLetters, 27, "AA"}, {allLetters, 52, "AZ"}, {allLetters, 53, "BA"}, {allLetters, 702, "ZZ"}, {allLetters, 703, "AAA"},
	} {
		if got := lettersLabel(c.letters, c.n); got != c.want {
			t.Errorf("label %d of %d letters = %q, want %q", c.n, len(c.letters), got, c.want)
		}
	}
	for _, l := range []string{"I", "O", "Q", "S", "X", "Z"} {
		for n := int64(1); n <= 420; n++ {
			if strings.Contains(lettersLabel(alphabetLetters, n), l) {
				t.Fatalf("alphabet label %d uses %s", n, l)
			}
		}
	}
}

func TestDocumentTags(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	tags := c.doc + "/tags"
	h0 := c.head(t, "main")
	h1 := c.change(t, "POST", c.rev(h0)+"/clauses", map[string]any{"text": "first"})
	evilHash := e.must(200, f.mallory, "GET", "/documents/"+f.evilDoc+"/branches/main", nil).obj(t)["hash"].(string)
	evilTags := "/documents/" + f.evilDoc + "/tags"
	e.must(201, f.mallory, "POST", evilTags, map[string]any{"revision": evilHash, "release": true})
	rel := map[string]any{"revision": h0, "release": true}
	wantLabel := func(l string) func(t *testing.T, r *testResponse) { return wantKey("label", l) }
	e.run(t, []scenario{
		{"no token", nil, "POST", tags, rel, 401, nil},
		{"member without EDIT_DOCUMENTS", f.bob, "POST", tags, rel, 403, nil},
		{"pending member", f.pen, "POST", tags, rel, 403, nil},
		{"foreign organisation", f.mallory, "POST", tags, rel, 403, nil},
		{"in no organisation", f.nobody, "POST", tags, rel, 403, nil},
		{"the other organisation's document to alice", f.alice, "POST", evilTags, map[string]any{"revision": evilHash, "label": "x"}, 403, nil},
		{"absent document", f.alice, "POST", "/documents/123456789/tags", rel, 404, nil},
		{"malformed", f.alice, "POST", tags, `{"revision":`, 400, nil},
		{"revision required", f.alice, "POST", tags, map[string]any{"release": true}, 400, wantField("revision")},
		{"malformed revision", f.alice, "POST", tags, map[string]any{"revision": "abc", "release": true}, 400, wantField("revision")},
		{"release wrong type", f.alice, "POST", tags, map[string]any{"revision": h0, "release": "yes"}, 400, wantField("release")},
		{"a revision of another document", f.alice, "POST", tags, map[string]any{"revision": evilHash, "release": true}, 404, nil},
		{"a tag needs a label", f.alice, "POST", tags, map[string]any{"revision": h0}, 400, wantField("label")},
		{"label over 50", f.alice, "POST", tags, map[string]any{"revision": h0, "label": strings.Repeat("l", 51)}, 400, wantField("label")},
		{"blank label", f.alice, "POST", tags, map[string]any{"revision": h0, "label": "  "}, 400, wantField("label")},
		{"bump without a release", f.alice, "POST", tags, map[string]any{"revision": h0, "label": "x", "bump": "major"}, 400, wantField("bump")},
		{"unknown bump", f.alice, "POST", tags, map[string]any{"revision": h0, "release": true, "bump": "huge"}, 400, wantField("bump")},
		{"read-only id", f.alice, "POST", tags, map[string]any{"revision": h0, "label": "x", "id": "5"}, 400, wantField("id")},
		{"a tag", f.alice, "POST", tags, map[string]any{"revision": h0, "label": "draft", "message": "first look"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["label"] != "draft" || o["revision"] != h0 || o["release"] != false || o["message"] != "first look" {
				t.Fatalf("tag %v", o)
			}
		}},
		{"a tag's label twice", f.alice, "POST", tags, map[string]any{"revision": h1, "label": "draft"}, 409, nil},
		{"no release yet", f.bob, "GET", c.doc, nil, 200, wantKey("current_release_tag", nil)},
		{"release: the default format starts with a dash", f.alice, "POST", tags, rel, 201, wantLabel("-")},
		{"release: a label is not given in the alphabet format", f.alice, "POST", tags, map[string]any{"revision": h1, "release": true, "label": "B"}, 400, wantField("label")},
		{"release: no bump in the alphabet format", f.alice, "POST", tags, map[string]any{"revision": h1, "release": true, "bump": "major"}, 400, wantField("bump")},
		{"a tag may carry a release's label", f.alice, "POST", tags, map[string]any{"revision": h0, "label": "A"}, 201, nil},
		{"release: A", f.alice, "POST", tags, map[string]any{"revision": h1, "release": true}, 201, wantLabel("A")},
		{"the document's current release moved", f.bob, "GET", c.doc, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			cur, _ := o["current_release_tag"].(map[string]any)
			if cur == nil || cur["label"] != "A" || cur["revision"] != h1 || o["current_release_tag_id"] != cur["id"] {
				t.Fatalf("current release %v", o["current_release_tag"])
			}
		}},
		{"the revision shows its label", f.bob, "GET", c.rev(h1), nil, 200, wantKey("revision", "A")},
		{"the branch's latest revision shows its label", f.bob, "GET", c.doc + "/branches/main", nil, 200, wantKey("revision", "A")},
		{"the first revision shows its release", f.bob, "GET", c.rev(h0), nil, 200, wantKey("revision", "-")},
		{"list", f.bob, "GET", tags, nil, 200, func(t *testing.T, r *testResponse) {
			var labels []string
			for _, tg := range r.arr(t) {
				labels = append(labels, tg["label"].(string))
			}
			if fmt.Sprint(labels) != "[draft - A A]" || r.Header.Get("X-Total-Count") != "4" {
				t.Fatalf("tags %v", labels)
			}
		}},
		{"list releases", f.bob, "GET", tags + "?$filter=release%20eq%20true", nil, 200, wantLen(2)},
		{"list a page", f.bob, "GET", tags + "?$skip=1&$top=1", nil, 200, wantLen(1)},
		{"list: bad filter", f.bob, "GET", tags + "?$filter=colour%20eq%201", nil, 400, nil},
		{"list: foreign organisation", f.mallory, "GET", tags, nil, 403, nil},
		{"list: the other organisation's to alice", f.alice, "GET", evilTags, nil, 403, nil},
	})
	// every format through HTTP: a type per format, a document per type
	for _, row := range []struct {
		format int64
		steps  []map[string]any // extra body keys per release
		want   []string
	}{
		{revisionFormatZero, []map[string]any{{}, {}}, []string{"0", "1"}},
		{revisionFormatOne, []map[string]any{{}, {}}, []string{"1", "2"}},
		{revisionFormatMajorMinor, []map[string]any{{}, {"bump": "major"}, {"bump": "minor"}}, []string{"0.1", "1.0", "1.1"}},
		{revisionFormatMajorMinorRevision, []map[string]any{{}, {"bump": "minor"}, {"bump": "major"}, {}}, []string{"0.0.1", "0.1.2", "1.0.3", "1.0.4"}},
		{revisionFormatAlphabet, []map[string]any{{}, {}}, []string{"-", "A"}},
		{revisionFormatAlphabetAll, []map[string]any{{}, {}}, []string{"-", "A"}},
		{revisionFormatNone, []map[string]any{{"label": "P1"}, {"label": "Issue 2"}}, []string{"P1", "Issue 2"}},
	} {
		t.Run(fmt.Sprintf("format %d", row.format), func(t *testing.T) {
			typ := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-types",
				map[string]any{"name": fmt.Sprintf("Fmt%d", row.format), "revision_format": row.format}).obj(t)["id"].(string)
			doc := "/documents/" + e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Typed", "type_id": typ}).obj(t)["id"].(string)
			h := e.must(200, f.alice, "GET", doc+"/branches/main", nil).obj(t)["hash"].(string)
			if row.format == revisionFormatNone {
				e.run(t, []scenario{{"none needs a label", f.alice, "POST", doc + "/tags", map[string]any{"revision": h, "release": true}, 400, wantField("label")}})
			} else if row.format != revisionFormatMajorMinor && row.format != revisionFormatMajorMinorRevision {
				e.run(t, []scenario{{"no bump", f.alice, "POST", doc + "/tags", map[string]any{"revision": h, "release": true, "bump": "minor"}, 400, wantField("bump")}})
			}
			for i, extra := range row.steps {
				body := map[string]any{"revision": h, "release": true}
				for k, v := range extra {
					body[k] = v
				}
				got := e.must(201, f.alice, "POST", doc+"/tags", body).obj(t)["label"]
				if got != row.want[i] {
					t.Fatalf("release %d: %v, want %s", i, got, row.want[i])
				}
				cur := e.must(200, f.bob, "GET", doc, nil).obj(t)["current_release_tag"].(map[string]any)
				if cur["label"] != row.want[i] {
					t.Fatalf("current release %v after %s", cur["label"], row.want[i])
				}
			}
			if row.format == revisionFormatNone {
				e.run(t, []scenario{{"a given label twice", f.alice, "POST", doc + "/tags", map[string]any{"revision": h, "release": true, "label": "P1"}, 409, nil}})
			}
		})
	}
}
