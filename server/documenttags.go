package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"workspace/db"
	"workspace/server/docengine"
)

// Tags and release labels of documents (design documents.md "Tags and
// release labels"; decisions in docs/documents.md): a tag names a revision
// with a label; a release takes the next label of the document type's
// Revision Format and becomes the document's current release tag.

const maxTagLabel = 50

// Revision Format values (spec: Revision Format).
const (
	revisionFormatNone = iota
	revisionFormatZero
	revisionFormatOne
	revisionFormatMajorMinor
	revisionFormatMajorMinorRevision
	revisionFormatAlphabet
	revisionFormatAlphabetAll
)

// alphabetLetters are A-Z without I, O, Q, S, X and Z (letters read as
// digits or too alike); allLetters are A-Z.
const (
	alphabetLetters = "ABCDEFGHJKLMNPRTUVWY"
	allLetters      = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// lettersLabel is n (from 1) in bijective base len(letters): A, B, ...,
// the last letter, then AA, AB, ...
func lettersLabel(letters string, n int64) string {
	base := int64(len(letters))
	var b []byte
	for n > 0 {
		n--
		b = append(b, letters[n%base])
		n /= base
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// release is where a release stands: how many releases came before it
// and its version parts.
type release struct {
	Index, Major, Minor, Patch int64
}

// nextRelease is the label and state of the release after prev (nil: the
// first) in a Revision Format. given is the caller's label (format none
// only); bump is "major", "minor" or "" (major_minor and
// major_minor_revision only).
func nextRelease(format int64, prev *release, bump, given string) (string, release) {
	next := release{}
	if prev != nil {
		next = *prev
		next.Index++
	}
	switch format {
	case revisionFormatNone:
		return given, next
	case revisionFormatZero:
		return strconv.FormatInt(next.Index, 10), next
	case revisionFormatOne:
		return strconv.FormatInt(next.Index+1, 10), next
	case revisionFormatMajorMinor, revisionFormatMajorMinorRevision:
		switch {
		case bump == "major":
			next.Major, next.Minor = next.Major+1, 0
		case bump == "minor" || format == revisionFormatMajorMinor:
			next.Minor++ // major_minor bumps the minor part unless told
		}
		if format == revisionFormatMajorMinor {
			return fmt.Sprintf("%d.%d", next.Major, next.Minor), next
		}
		next.Patch++ // the revision part always increments
		return fmt.Sprintf("%d.%d.%d", next.Major, next.Minor, next.Patch), next
	case revisionFormatAlphabetAll:
		if next.Index == 0 {
			return "-", next
		}
		return lettersLabel(allLetters, next.Index), next
	}
	// alphabet, the default
	if next.Index == 0 {
		return "-", next
	}
	return lettersLabel(alphabetLetters, next.Index), next
}

type tagJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	DocumentID     db.ID  `json:"document_id"`
	Label          string `json:"label"`
	Revision       string `json:"revision"`
	RevisionID     db.ID  `json:"revision_id"`
	Release        bool   `json:"release"`
	Message        string `json:"message"`
	User           idJSON `json:"user"`
	CreatedAt      string `json:"created_at"`
}

func renderTag(ctx context.Context, q *db.Queries, t db.DocumentTag) (tagJSON, error) {
	r, err := q.RevisionGet(ctx, t.RevisionID)
	if err != nil {
		return tagJSON{}, err
	}
	return tagJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), DocumentID: db.ID(t.DocumentID), Label: t.Label,
		Revision: hashOf(r.Hash).String(), RevisionID: db.ID(t.RevisionID), Release: t.Release, Message: t.Message,
		User: idJSON{db.ID(t.CreatedBy)}, CreatedAt: t.CreatedAt}, nil
}

// currentReleaseTag is the document's latest release, if any.
func currentReleaseTag(ctx context.Context, q *db.Queries, docID int64) (*tagJSON, error) {
	t, err := q.TagLatestRelease(ctx, docID)
	if db.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	tj, err := renderTag(ctx, q, t)
	return &tj, err
}

// revisionLabel is a revision's `revision`: the label of its newest
// release ("" when it was never released).
func revisionLabel(ctx context.Context, q *db.Queries, revID int64) (string, error) {
	t, err := q.TagReleaseOfRevision(ctx, revID)
	if db.IsNotFound(err) {
		return "", nil
	}
	return t.Label, err
}

type tagBody struct {
	Revision *string `json:"revision"`
	Release  *bool   `json:"release"`
	Label    *string `json:"label"`
	Bump     *string `json:"bump"`
	Message  *string `json:"message"`
}

var tagReadOnly = []string{"id", "organisation_id", "document_id", "revision_id", "user", "created_at"}

func (s *Server) tagCreate(rq *request) error {
	var b tagBody
	if err := rq.decodeCreate(&b, tagReadOnly...); err != nil {
		return err
	}
	p := problems{}
	var h docengine.Hash
	if b.Revision == nil {
		p.add("revision", "is required (a revision hash)")
	} else if v, ok := docengine.ParseHash(strings.ToLower(*b.Revision)); !ok {
		p.add("revision", "must be a revision hash (64 hex digits)")
	} else {
		h = v
	}
	if b.Label != nil {
		*b.Label = strings.TrimSpace(*b.Label)
		p.length("label", *b.Label, 1, maxTagLabel)
		if strings.IndexFunc(*b.Label, unicode.IsControl) >= 0 {
			p.add("label", "must not contain control characters")
		}
	}
	optText(p, "message", b.Message, maxDescriptionLen)
	isRelease := b.Release != nil && *b.Release
	if b.Bump != nil && *b.Bump != "major" && *b.Bump != "minor" {
		p.add("bump", "must be major or minor")
	} else if b.Bump != nil && !isRelease {
		p.add("bump", "is only for a release")
	}
	if !isRelease && b.Label == nil {
		p.add("label", "is required for a tag that is not a release")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out tagJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, EditDocuments)
		if err != nil {
			return err
		}
		rev, err := revisionIn(rq.ctx, q, d.ID, h)
		if err != nil {
			return err
		}
		params := db.TagCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID, DocumentID: d.ID, RevisionID: rev.ID,
			Label: orDefault(b.Label, ""), Release: isRelease, Message: orDefault(b.Message, ""), CreatedAt: s.nowText(), CreatedBy: rq.user.ID}
		if isRelease {
			format := int64(revisionFormatAlphabet) // the spec's default
			if d.TypeID != nil {
				t, err := q.DocumentTypeGet(rq.ctx, *d.TypeID)
				if err != nil {
					return err
				}
				format = t.RevisionFormat
			}
			switch {
			case format == revisionFormatNone && b.Label == nil:
				return fieldError("label", "is required: the document type's revision format is none (labels are given)")
			case format != revisionFormatNone && b.Label != nil:
				return fieldError("label", "comes from the document type's revision format; give none")
			case b.Bump != nil && format != revisionFormatMajorMinor && format != revisionFormatMajorMinorRevision:
				return fieldError("bump", "is only for the major_minor and major_minor_revision formats")
			}
			var prev *release
			if t, err := q.TagLatestRelease(rq.ctx, d.ID); err == nil {
				prev = &release{Index: t.ReleaseIndex, Major: t.Major, Minor: t.Minor, Patch: t.Patch}
			} else if !db.IsNotFound(err) {
				return err
			}
			label, next := nextRelease(format, prev, orDefault(b.Bump, ""), params.Label)
			params.Label, params.ReleaseIndex, params.Major, params.Minor, params.Patch = label, next.Index, next.Major, next.Minor, next.Patch
		}
		// releases and other tags are two sets of labels, so a tag never
		// blocks a release label to come
		if _, err := q.TagByLabel(rq.ctx, db.TagByLabelParams{DocumentID: d.ID, Release: isRelease, Label: params.Label}); err == nil {
			return errorf(http.StatusConflict, "The document has a tag labelled %s.", params.Label)
		} else if !db.IsNotFound(err) {
			return err
		}
		t, err := q.TagCreate(rq.ctx, params)
		if err != nil {
			return err
		}
		out, err = renderTag(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

var tagFilter = db.FilterFields{
	"label":   {Column: "label", Kind: db.FieldString},
	"release": {Column: "release", Kind: db.FieldBool},
}

// tagList pages the document's tags, oldest first.
func (s *Server) tagList(rq *request) error {
	return listPage(s, rq, listSpec[tagJSON]{Fields: tagFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, _ int64, _ listQuery) (listSQL, error) {
			d, _, err := contentAccess(rq, q, ViewDocuments)
			return listSQL{From: "document_tags", Where: "document_id = ?", Args: []any{d.ID}}, err
		},
		Rows: byIDs((*db.Queries).TagListByIDs, eachQ(renderTag))})
}
