package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"workspace/db"
)

// Inductions (spec: Inductions; decisions.md for creation): revisioned
// forms. Every change makes a new revision whose hash is a SHA-256 over a
// canonical form of its content (the same content, the same hash). A
// revision keeps its questions as a snapshot; question and enum value ids
// stay the same across revisions while their text does not change.
// Decisions in docs/inductions.md.

const (
	maxInductionName     = 200
	maxInductionRevision = 20
	maxQuestions         = 200
	maxQuestionText      = 2000
	maxEnumValues        = 100
	maxValidFor          = 100 * 365 * 24 * 3600 // a century, in seconds
	maxNonce             = 100                   // a client's name for a new enum value (docs/inductions.md)
)

// updatableQuestionTypes are the types a question may be given through the
// update entry (spec: "only string, boolean or enum allowed").
var updatableQuestionTypes = map[string]bool{"string": true, "boolean": true, "enum": true}

// inductionQuestion is a question as a revision stores and shows it.
type inductionQuestion struct {
	ID            db.ID       `json:"id"`
	Hash          string      `json:"hash"`
	InductionID   db.ID       `json:"induction_id"`
	Question      string      `json:"question"`
	Explanation   string      `json:"explanation"`
	Type          string      `json:"type"`
	DefaultAnswer string      `json:"default_answer"`
	EnumValues    []enumValue `json:"enum_values"`
	UpdatedAt     string      `json:"updated_at"`
	UpdatedBy     idJSON      `json:"updated_by"`
}

type enumValue struct {
	ID                  db.ID  `json:"id"`
	Value               string `json:"value"`
	InductionQuestionID db.ID  `json:"induction_question_id"`
	UpdatedAt           string `json:"updated_at"`
	UpdatedBy           idJSON `json:"updated_by"`
}

// canonicalQuestion is a question's content without ids and times: what
// the hashes cover.
type canonicalQuestion struct {
	Question    string   `json:"question"`
	Explanation string   `json:"explanation"`
	Type        string   `json:"type"`
	Default     string   `json:"default"`
	Values      []string `json:"values"`
}

func (q inductionQuestion) canonical() canonicalQuestion {
	c := canonicalQuestion{Question: q.Question, Explanation: q.Explanation, Type: q.Type, Values: []string{}}
	c.Default = q.DefaultAnswer
	if q.Type == "enum" {
		// An enum default names a value by id; its text is the content.
		for _, v := range q.EnumValues {
			if v.ID.String() == q.DefaultAnswer {
				c.Default = v.Value
			}
		}
	}
	for _, v := range q.EnumValues {
		c.Values = append(c.Values, v.Value)
	}
	return c
}

func sha256JSON(v any) string {
	b, _ := json.Marshal(v) // struct fields in declaration order: canonical
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// revisionContent is everything a revision's hash covers.
type revisionContent struct {
	Name        string              `json:"name"`
	Revision    string              `json:"revision"`
	Description string              `json:"description"`
	ValidFor    int64               `json:"valid_for"`
	FileHash    string              `json:"file_hash"`
	Questions   []canonicalQuestion `json:"questions"`
}

func revisionHash(r db.InductionRevision, questions []inductionQuestion) string {
	c := revisionContent{Name: r.Name, Revision: r.Revision, Description: r.Description, ValidFor: r.ValidFor, Questions: []canonicalQuestion{}}
	if r.FileHash != nil {
		c.FileHash = *r.FileHash
	}
	for _, q := range questions {
		c.Questions = append(c.Questions, q.canonical())
	}
	return sha256JSON(c)
}

type inductionRevisionJSON struct {
	ID             db.ID                `json:"id"`
	OrganisationID db.ID                `json:"organisation_id"`
	Hash           string               `json:"hash"`
	InductionID    db.ID                `json:"induction_id"`
	Name           string               `json:"name"`
	Revision       string               `json:"revision"`
	Description    string               `json:"description"`
	ValidFor       int64                `json:"valid_for"`
	ContentType    *string              `json:"content_type"`
	Length         *int64               `json:"length"`
	FileName       *string              `json:"file_name"`
	FileHash       *string              `json:"file_hash"`
	Questions      *[]inductionQuestion `json:"questions,omitempty"`
	UpdatedAt      string               `json:"updated_at"`
	UpdatedBy      idJSON               `json:"updated_by"`
}

func questionsOf(r db.InductionRevision) ([]inductionQuestion, error) {
	var qs []inductionQuestion
	if err := json.Unmarshal([]byte(r.Questions), &qs); err != nil {
		return nil, fmt.Errorf("induction revision %d questions: %w", r.ID, err)
	}
	return qs, nil
}

// toRevision renders a revision; questions only when withQuestions (the
// caller holds MANAGE_INDUCTIONS), then always an array.
func toRevision(r db.InductionRevision, withQuestions bool) (inductionRevisionJSON, error) {
	out := inductionRevisionJSON{
		ID: db.ID(r.ID), OrganisationID: db.ID(r.OrganisationID), Hash: r.Hash, InductionID: db.ID(r.InductionID),
		Name: r.Name, Revision: r.Revision, Description: r.Description, ValidFor: r.ValidFor, ContentType: r.ContentType,
		Length: r.Length, FileName: r.FileName, FileHash: r.FileHash, UpdatedAt: r.UpdatedAt, UpdatedBy: idJSON{db.ID(r.UpdatedBy)},
	}
	if withQuestions {
		qs, err := questionsOf(r)
		if err != nil {
			return out, err
		}
		if qs == nil {
			qs = []inductionQuestion{}
		}
		out.Questions = &qs
	}
	return out, nil
}

// inductionJSON is the induction with its current revision's fields.
type inductionJSON struct {
	ID             db.ID                `json:"id"`
	OrganisationID db.ID                `json:"organisation_id"`
	RevisionID     db.ID                `json:"revision_id"`
	RevisionHash   string               `json:"revision_hash"`
	Name           string               `json:"name"`
	Revision       string               `json:"revision"`
	Description    string               `json:"description"`
	ValidFor       int64                `json:"valid_for"`
	FileName       *string              `json:"file_name"`
	FileHash       *string              `json:"file_hash"`
	Questions      *[]inductionQuestion `json:"questions,omitempty"`
	CreatedAt      string               `json:"created_at"`
	CreatedBy      idJSON               `json:"created_by"`
	UpdatedAt      string               `json:"updated_at"`
	UpdatedBy      idJSON               `json:"updated_by"`
}

func toInduction(i db.Induction, r db.InductionRevision, withQuestions bool) (inductionJSON, error) {
	rev, err := toRevision(r, withQuestions)
	return inductionJSON{
		ID: db.ID(i.ID), OrganisationID: db.ID(i.OrganisationID), RevisionID: db.ID(r.ID), RevisionHash: r.Hash,
		Name: r.Name, Revision: r.Revision, Description: r.Description, ValidFor: r.ValidFor, FileName: r.FileName,
		FileHash: r.FileHash, Questions: rev.Questions, CreatedAt: i.CreatedAt, CreatedBy: idJSON{db.ID(i.CreatedBy)},
		UpdatedAt: i.UpdatedAt, UpdatedBy: idJSON{db.ID(i.UpdatedBy)},
	}, err
}

// inductionAccess loads an induction, its current revision and the
// caller's access; 404 when absent.
func inductionAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Induction, db.InductionRevision, Access, error) {
	i, err := q.InductionGet(ctx, id)
	if db.IsNotFound(err) {
		return i, db.InductionRevision{}, Access{}, notFound("The induction does not exist.")
	}
	if err != nil {
		return i, db.InductionRevision{}, Access{}, err
	}
	a, err := authorize(ctx, q, userID, i.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return i, db.InductionRevision{}, Access{}, notFound("The induction does not exist.")
	}
	if err != nil {
		return i, db.InductionRevision{}, Access{}, err
	}
	r, err := q.InductionRevisionGet(ctx, i.RevisionID)
	return i, r, a, err
}

// inductionBody is the creation body and the JSON form of PATCH.
type inductionBody struct {
	Name        *string          `json:"name"`
	Revision    *string          `json:"revision"`
	Description *string          `json:"description"`
	ValidFor    *int64           `json:"valid_for"`
	Questions   *[]questionEntry `json:"questions"`
}

// questionEntry is the spec's update question entry.
type questionEntry struct {
	ID          *db.ID       `json:"id"`
	Question    *string      `json:"question"`
	Explanation *string      `json:"explanation"`
	Type        *string      `json:"type"`
	Answer      *string      `json:"answer"`
	Values      []valueEntry `json:"values"`
}

type valueEntry struct {
	ID    *db.ID `json:"id"`
	Value string `json:"value"`
	Nonce string `json:"nonce"`
}

func (b *inductionBody) validate() error {
	p := problems{}
	if b.Name != nil {
		*b.Name = strings.TrimSpace(*b.Name)
		p.length("name", *b.Name, 1, maxInductionName)
	}
	optText(p, "revision", b.Revision, maxInductionRevision)
	optText(p, "description", b.Description, maxDescriptionLen)
	if b.ValidFor != nil && (*b.ValidFor < 0 || *b.ValidFor > maxValidFor) {
		p.add("valid_for", "must be a number of seconds from 0 to a century")
	}
	if b.Questions != nil && len(*b.Questions) > maxQuestions {
		p.add("questions", fmt.Sprintf("must be at most %d", maxQuestions))
	}
	return p.err()
}

// buildQuestions applies the update entries to the current questions: an
// entry with an id updates that question (400 if the induction has none
// such), one without makes a new question. Enum values keep their id while
// their text is unchanged; a changed text or a value without id is a new
// value. An enum answer names a value by id or by the nonce of a new one.
func (s *Server) buildQuestions(entries []questionEntry, current []inductionQuestion, inductionID, userID int64, now string) ([]inductionQuestion, error) {
	byID := map[db.ID]inductionQuestion{}
	for _, q := range current {
		byID[q.ID] = q
	}
	out := make([]inductionQuestion, 0, len(entries))
	for n, e := range entries {
		field := fmt.Sprintf("questions[%d]", n)
		if e.Question == nil || strings.TrimSpace(*e.Question) == "" || len([]rune(*e.Question)) > maxQuestionText {
			return nil, fieldError(field+".question", fmt.Sprintf("is required, at most %d characters", maxQuestionText))
		}
		if e.Type == nil || !updatableQuestionTypes[*e.Type] {
			return nil, fieldError(field+".type", "must be string, boolean or enum")
		}
		if e.Explanation != nil && len([]rune(*e.Explanation)) > maxQuestionText {
			return nil, fieldError(field+".explanation", fmt.Sprintf("must be at most %d characters", maxQuestionText))
		}
		var prev inductionQuestion
		q := inductionQuestion{ID: db.ID(s.store.IDs.Next()), InductionID: db.ID(inductionID), UpdatedAt: now, UpdatedBy: idJSON{db.ID(userID)}}
		if e.ID != nil {
			var ok bool
			if prev, ok = byID[*e.ID]; !ok {
				return nil, fieldError(field+".id", "names no question of this induction")
			}
			q.ID = prev.ID
		}
		q.Question, q.Type, q.EnumValues = strings.TrimSpace(*e.Question), *e.Type, []enumValue{}
		if e.Explanation != nil {
			q.Explanation = *e.Explanation
		}
		answer := ""
		if e.Answer != nil {
			answer = *e.Answer
		}
		// A string question's default answer is free text: bounded like the question.
		if len([]rune(answer)) > maxQuestionText {
			return nil, fieldError(field+".answer", fmt.Sprintf("must be at most %d characters", maxQuestionText))
		}
		switch q.Type {
		case "boolean":
			if answer != "" && answer != "true" && answer != "false" {
				return nil, fieldError(field+".answer", "must be true or false")
			}
			q.DefaultAnswer = answer
		case "string":
			q.DefaultAnswer = answer
		case "enum":
			if len(e.Values) == 0 || len(e.Values) > maxEnumValues {
				return nil, fieldError(field+".values", fmt.Sprintf("are required for an enum question (1-%d)", maxEnumValues))
			}
			prevValues := map[db.ID]enumValue{}
			for _, v := range prev.EnumValues {
				prevValues[v.ID] = v
			}
			nonces := map[string]db.ID{}
			for k, v := range e.Values {
				vf := fmt.Sprintf("%s.values[%d]", field, k)
				if strings.TrimSpace(v.Value) == "" || len([]rune(v.Value)) > maxQuestionText {
					return nil, fieldError(vf+".value", "is required")
				}
				ev := enumValue{ID: db.ID(s.store.IDs.Next()), Value: v.Value, InductionQuestionID: q.ID, UpdatedAt: now, UpdatedBy: idJSON{db.ID(userID)}}
				if v.ID != nil {
					old, ok := prevValues[*v.ID]
					if !ok {
						return nil, fieldError(vf+".id", "is not a value of this question")
					}
					if old.Value == v.Value {
						ev = old // unchanged text keeps its id
					}
				}
				if len([]rune(v.Nonce)) > maxNonce {
					return nil, fieldError(vf+".nonce", fmt.Sprintf("must be at most %d characters", maxNonce))
				}
				if v.Nonce != "" {
					nonces[v.Nonce] = ev.ID
				}
				q.EnumValues = append(q.EnumValues, ev)
			}
			if answer != "" {
				resolved := ""
				if id, ok := nonces[answer]; ok {
					resolved = id.String()
				} else {
					for _, v := range q.EnumValues {
						if v.ID.String() == answer {
							resolved = answer
						}
					}
				}
				if resolved == "" {
					return nil, fieldError(field+".answer", "must name one of the question's values by id or by nonce")
				}
				q.DefaultAnswer = resolved
			}
		}
		q.Hash = sha256JSON(q.canonical())
		out = append(out, q)
	}
	return out, nil
}

// newRevision stores a revision of an induction from base with the body's
// changes applied.
func (s *Server) newRevision(ctx context.Context, q *db.Queries, base db.InductionRevision, b inductionBody, pdf *pdfFile, inductionID, orgID, userID int64) (db.InductionRevision, error) {
	now := s.nowText()
	r := base
	if pdf != nil {
		// A new PDF replaces the old one in this revision; older revisions
		// keep theirs. The organisation's storage counts it once.
		if err := q.BlobPut(ctx, db.BlobPutParams{Hash: pdf.hash, ContentType: pdfContentType, Size: int64(len(pdf.data)), Data: pdf.data, CreatedAt: now}); err != nil {
			return r, err
		}
		if err := holdBlob(ctx, q, orgID, pdf.hash); err != nil {
			return r, err
		}
		ct, n := pdfContentType, int64(len(pdf.data))
		r.ContentType, r.Length, r.FileName, r.FileHash = &ct, &n, &pdf.name, &pdf.hash
	}
	r.ID, r.InductionID, r.OrganisationID, r.UpdatedAt, r.UpdatedBy = s.store.IDs.Next(), inductionID, orgID, now, userID
	r.Name, r.Revision, r.Description = orDefault(b.Name, r.Name), orDefault(b.Revision, r.Revision), orDefault(b.Description, r.Description)
	if b.ValidFor != nil {
		r.ValidFor = *b.ValidFor
	}
	questions, err := questionsOf(base)
	if err != nil {
		return r, err
	}
	if b.Questions != nil {
		if questions, err = s.buildQuestions(*b.Questions, questions, inductionID, userID, now); err != nil {
			return r, err
		}
	}
	if questions == nil {
		questions = []inductionQuestion{}
	}
	qj, err := json.Marshal(questions)
	if err != nil {
		return r, err
	}
	r.Questions, r.Hash = string(qj), revisionHash(r, questions)
	return q.InductionRevisionCreate(ctx, db.InductionRevisionCreateParams{
		ID: r.ID, OrganisationID: r.OrganisationID, InductionID: r.InductionID, Hash: r.Hash, Name: r.Name, Revision: r.Revision,
		Description: r.Description, ValidFor: r.ValidFor, ContentType: r.ContentType, Length: r.Length, FileName: r.FileName,
		FileHash: r.FileHash, Questions: r.Questions, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	})
}

var inductionReadOnly = []string{"id", "organisation_id", "revision_id", "revision_hash", "created_at", "created_by", "updated_at", "updated_by"}

func (s *Server) inductionCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b inductionBody
	if err := rq.decodeCreate(&b, inductionReadOnly...); err != nil {
		return err
	}
	if b.Name == nil {
		return fieldError("name", "is required")
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out inductionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageInductions); err != nil {
			return err
		}
		// The induction first (its revisions refer to it), then its first
		// revision, then the link to it.
		i, err := q.InductionCreate(rq.ctx, db.InductionCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID, CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		r, err := s.newRevision(rq.ctx, q, db.InductionRevision{Questions: "[]"}, b, nil, i.ID, orgID, rq.user.ID)
		if err != nil {
			return err
		}
		if err := q.InductionSetRevision(rq.ctx, db.InductionSetRevisionParams{RevisionID: r.ID, UpdatedAt: i.UpdatedAt, UpdatedBy: rq.user.ID, ID: i.ID, OrganisationID: orgID}); err != nil {
			return err
		}
		i.RevisionID = r.ID
		if err := s.emitInduction(rq.ctx, q, i, r, "created", ""); err != nil {
			return err
		}
		out, err = toInduction(i, r, true)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// inductionList lists the organisation's inductions (members), paged.
func (s *Server) inductionList(rq *request) error {
	return listPage(s, rq, listSpec[inductionJSON]{Path: "id",
		Scope: orgScope(rq, 0, "inductions", ""),
		Rows:  inductionsJSON})
}

// inductionRows reads inductions by id, in the order given, with their
// current revisions: two reads however many there are.
func inductionRows(ctx context.Context, q *db.Queries, ids []int64) ([]db.Induction, map[int64]db.InductionRevision, error) {
	rows, err := q.InductionListByIDs(ctx, idsJSON(ids))
	if err != nil {
		return nil, nil, err
	}
	revs, err := q.InductionCurrentRevisions(ctx, idsJSON(ids))
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[int64]db.InductionRevision, len(revs))
	for _, r := range revs {
		byID[r.ID] = r
	}
	return rows, byID, nil
}

// inductionsJSON renders inductions by id, in the order given.
func inductionsJSON(ctx context.Context, q *db.Queries, ids []int64) ([]inductionJSON, error) {
	rows, revs, err := inductionRows(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	out := make([]inductionJSON, 0, len(rows))
	for _, i := range rows {
		ij, err := toInduction(i, revs[i.RevisionID], false)
		if err != nil {
			return nil, err
		}
		out = append(out, ij)
	}
	return out, nil
}

func (s *Server) inductionGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out inductionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, r, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = toInduction(i, r, a.Can(ManageInductions))
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inductionPatch makes a new revision from the current one with the
// changes, sent as JSON or as multipart/form-data (which may carry the PDF
// as "attachment"; without one the current PDF is kept).
func (s *Server) inductionPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b inductionBody
	var pdf *pdfFile
	ro := readOnlySet{}
	if mt, _, _ := mime.ParseMediaType(rq.r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		if b, pdf, err = readInductionMultipart(rq.r); err != nil {
			return err
		}
	} else if ro, err = rq.decodePatch(&b, inductionReadOnly...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out inductionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		i, cur, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageInductions); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return toInduction(i, cur, true) }); err != nil {
			return err
		}
		r, err := s.newRevision(rq.ctx, q, cur, b, pdf, i.ID, i.OrganisationID, rq.user.ID)
		if err != nil {
			return err
		}
		now := r.UpdatedAt
		if err := q.InductionSetRevision(rq.ctx, db.InductionSetRevisionParams{RevisionID: r.ID, UpdatedAt: now, UpdatedBy: rq.user.ID, ID: i.ID, OrganisationID: i.OrganisationID}); err != nil {
			return err
		}
		i.RevisionID, i.UpdatedAt, i.UpdatedBy = r.ID, now, rq.user.ID
		if err := s.emitInduction(rq.ctx, q, i, r, "updated", ""); err != nil {
			return err
		}
		out, err = toInduction(i, r, true)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inductionRevisions lists every revision, oldest first (members; the
// questions with MANAGE_INDUCTIONS).
func (s *Server) inductionRevisions(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []inductionRevisionJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		rows, err := q.InductionRevisionList(rq.ctx, i.ID)
		if err != nil {
			return err
		}
		for _, r := range rows {
			rj, err := toRevision(r, false)
			if err != nil {
				return err
			}
			out = append(out, rj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// inductionRevision is one revision by its hash (the newest with that
// content); questions with MANAGE_INDUCTIONS.
func (s *Server) inductionRevision(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	hash := rq.params.ByName("hash")
	if !isSHA256Hex(hash) {
		return notFound("The revision does not exist.")
	}
	var out inductionRevisionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		r, err := q.InductionRevisionByHash(rq.ctx, db.InductionRevisionByHashParams{InductionID: i.ID, Hash: hash})
		if db.IsNotFound(err) {
			return notFound("The revision does not exist.")
		} else if err != nil {
			return err
		}
		out, err = toRevision(r, a.Can(ManageInductions))
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inductionEvent is the data of an induction integration event.
type inductionEvent struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	RevisionHash   string `json:"revision_hash"`
	Completer      string `json:"completed_by,omitempty"`
}

func (e inductionEvent) summary() string {
	if e.Completer != "" {
		return e.Name + " completed by " + e.Completer
	}
	return e.Name
}

// emitInduction queues the integrations' deliveries of an induction
// change (created, updated: a new revision; completed: a record), in the
// change's transaction.
func (s *Server) emitInduction(ctx context.Context, q *db.Queries, i db.Induction, r db.InductionRevision, event, completer string) error {
	return s.emit(ctx, q, i.OrganisationID, "induction", event, inductionEvent{ID: db.ID(i.ID), OrganisationID: db.ID(i.OrganisationID),
		Name: r.Name, RevisionHash: r.Hash, Completer: completer})
}
