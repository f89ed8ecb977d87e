package server

import (
	"context"
	"net/http"
	"strings"

	"workspace/db"
)

// Witness signing (spec: GET /users/@me/witness/{id} and its sign row;
// decisions.md, Signing flows): a user's TOTP code opens a 30-minute
// signing token for an object that can be witnessed, and signing with it
// records the witness's details and signature. Work items and document
// revisions can be witnessed. Decisions in
// docs/toolboxes.md (Witnesses).

const (
	witnessWorkItem = "work_item"
	witnessRevision = "document_revision"
)

type witnessTokenJSON struct {
	SignToken  string `json:"sign_token"`
	ExpiresAt  string `json:"expires_at"`
	ObjectType string `json:"object_type"`
	ObjectID   db.ID  `json:"object_id"`
	Title      string `json:"title"`
	Hash       string `json:"hash,omitempty"` // a revision's content hash, which the witness signs
}

type witnessRecordJSON struct {
	ID          db.ID   `json:"id"`
	ObjectType  string  `json:"object_type"`
	ObjectID    db.ID   `json:"object_id"`
	UserID      db.ID   `json:"user_id"`
	FirstName   string  `json:"first_name"`
	LastName    string  `json:"last_name"`
	Email       string  `json:"email"`
	PhoneNumber *string `json:"phone_number"`
	Company     string  `json:"company"`
	Position    string  `json:"position"`
	Signature   *string `json:"signature"`
	SignedAt    string  `json:"signed_at"`
	// DuplicateOf: the person's first record of this object when two
	// offices recorded one apart (docs/sync.md); both are kept.
	DuplicateOf *db.ID `json:"duplicate_of"`
	Message     string `json:"message,omitempty"`
}

func toWitnessRecord(r db.WitnessRecord) witnessRecordJSON {
	return witnessRecordJSON{ID: db.ID(r.ID), ObjectType: r.ObjectType, ObjectID: db.ID(r.ObjectID), UserID: db.ID(r.UserID),
		FirstName: r.FirstName, LastName: r.LastName, Email: r.Email, PhoneNumber: r.PhoneNumber, Company: r.Company,
		Position: r.Position, Signature: r.Signature, SignedAt: r.SignedAt, DuplicateOf: optID(r.DuplicateOf)}
}

// witnessed is an object the caller may witness.
type witnessed struct {
	kind    string
	id, org int64
	title   string
	hash    string
}

// witnessObject finds the object by id among those that can be witnessed and
// checks the caller may see it; anything else is 404, so ids of objects the
// caller cannot see are not confirmed.
func witnessObject(ctx context.Context, q *db.Queries, userID, id int64) (witnessed, error) {
	absent := notFound("No such document revision or work item.")
	w, a, err := workItemAccess(ctx, q, userID, id, absent)
	if err == absent {
		return witnessRevisionObject(ctx, q, userID, id, absent)
	}
	if err != nil {
		return witnessed{}, err
	}
	v, err := loadWorkItemView(ctx, q, []db.WorkItem{w})
	if err != nil {
		return witnessed{}, err
	}
	if requireView(a, v, w) != nil {
		return witnessed{}, absent
	}
	return witnessed{kind: witnessWorkItem, id: w.ID, org: w.OrganisationID, title: w.Title}, nil
}

// witnessRevisionObject: a document revision, for callers with VIEW_DOCUMENTS
// on its document. Revisions are insert-only, so witnessing the id binds
// the signature to the revision's content hash (documents.md).
func witnessRevisionObject(ctx context.Context, q *db.Queries, userID, id int64, absent *Error) (witnessed, error) {
	r, err := q.RevisionGet(ctx, id)
	if db.IsNotFound(err) {
		return witnessed{}, absent
	}
	if err != nil {
		return witnessed{}, err
	}
	d, a, err := documentAccess(ctx, q, userID, r.DocumentID, absent)
	if err != nil {
		return witnessed{}, err
	}
	if a.Require(ViewDocuments) != nil {
		return witnessed{}, absent
	}
	return witnessed{kind: witnessRevision, id: r.ID, org: d.OrganisationID, title: d.Title, hash: hashOf(r.Hash).String()}, nil
}

func (s *Server) userWitnessGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	token := strings.TrimSpace(rq.r.URL.Query().Get("token"))
	if token == "" {
		return fieldError("token", "is required")
	}
	g := guessOf("totp", userAccount(rq.user.ID))
	if err := s.allowGuess(rq, g); err != nil {
		return err
	}
	var out witnessTokenJSON
	badCode := false
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		obj, err := witnessObject(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		secret, live, err := s.liveTOTPSecret(rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		step, ok := totpStep(secret, token, s.now())
		if ok && live {
			if ok, err = s.spendCode(rq.ctx, q, "u:"+db.ID(rq.user.ID).String(), step); err != nil {
				return err
			}
		}
		if !ok || !live {
			badCode = true
			return notFound("The code is not valid.")
		}
		tok, err := s.issueSignToken(rq.user.ID, signObject("witness", obj.id), methodApp)
		if err != nil {
			return err
		}
		out = witnessTokenJSON{SignToken: tok, ExpiresAt: db.FormatTime(s.now().Add(signTokenTTL)), ObjectType: obj.kind,
			ObjectID: db.ID(obj.id), Title: obj.title, Hash: obj.hash}
		return nil
	})
	if badCode {
		s.failedGuess(rq, g)
	}
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// userWitnessSign records the caller as a witness of the object its token
// names, once: signing again answers with the first record.
func (s *Server) userWitnessSign(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b signerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	if b.ScheduleID != nil {
		return fieldError("schedule_id", "is not used when witnessing")
	}
	var out witnessRecordJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := s.checkSignToken(strings.TrimSpace(*b.JWT), rq.user.ID, signObject("witness", id)); err != nil {
			return err
		}
		obj, err := witnessObject(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		prev, err := q.WitnessRecordByUser(rq.ctx, db.WitnessRecordByUserParams{ObjectType: obj.kind, ObjectID: obj.id, UserID: rq.user.ID})
		if err == nil {
			out = toWitnessRecord(prev)
			out.Message = "You have already witnessed this."
			return nil
		} else if !db.IsNotFound(err) {
			return err
		}
		sg := signerFromUser(rq.user)
		if err := sg.onlyConfirmedPhone(b.PhoneNumber); err != nil {
			return err
		}
		sg.override(b.FirstName, b.LastName, b.Company, b.Position)
		if sg.missingDetails() {
			p := problems{}
			if sg.first == "" {
				p.add("first_name", "is required: your profile has none")
			}
			if sg.last == "" {
				p.add("last_name", "is required: your profile has none")
			}
			return p.err()
		}
		r, err := q.WitnessRecordCreate(rq.ctx, db.WitnessRecordCreateParams{ID: s.store.IDs.Next(), OrganisationID: obj.org,
			ObjectType: obj.kind, ObjectID: obj.id, UserID: rq.user.ID, FirstName: sg.first, LastName: sg.last, Email: sg.email,
			PhoneNumber: sg.phone, Company: sg.company, Position: sg.posit, Signature: sg.signature, SignedAt: s.nowText()})
		if err != nil {
			return err
		}
		out = toWitnessRecord(r)
		out.Message = "Witnessed."
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// workItemWitnesses lists a work item's witness records (those who may see it).
func (s *Server) workItemWitnesses(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []witnessRecordJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workItemAccess(rq.ctx, q, rq.user.ID, id, workItemAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		v, err := loadWorkItemView(rq.ctx, q, []db.WorkItem{w})
		if err != nil {
			return err
		}
		if err := requireView(a, v, w); err != nil {
			return err
		}
		rows, err := q.WitnessRecordList(rq.ctx, db.WitnessRecordListParams{ObjectType: witnessWorkItem, ObjectID: w.ID})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, toWitnessRecord(r))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
