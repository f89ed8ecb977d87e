package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"workspace/db"
)

// Numbering prefixes (spec: Prefixes; decisions.md for creation and the
// number_format template). drawNumber is the one way numbers leave a prefix:
// documents, work items and assets number through it.

const (
	maxNumberFormat = 50
	maxNumberDigits = 18
	numberToken     = "{number}"
)

type prefixJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Description    string `json:"description"`
	NumberFormat   string `json:"number_format"`
	NumberDigits   *int64 `json:"number_digits"`
	LastNumber     int64  `json:"last_number"`
	UniqueNumber   bool   `json:"unique_number"`
	Enabled        bool   `json:"enabled"`
}

func toPrefix(p db.Prefix) prefixJSON {
	return prefixJSON{ID: db.ID(p.ID), OrganisationID: db.ID(p.OrganisationID), Description: p.Description,
		NumberFormat: p.NumberFormat, NumberDigits: p.NumberDigits, LastNumber: p.LastNumber,
		UniqueNumber: p.UniqueNumber, Enabled: p.Enabled}
}

// formatNumber fills the template: {number} zero-padded to digits when set
// (decisions.md: PX-{number} with 4 digits gives PX-0007).
// A provisional number (drawn offline with no block left: docs/sync.md)
// reads PROV-<node>-<n>.
func formatNumber(format string, digits *int64, n int64) string {
	return db.FormatNumber(format, digits, n)
}

// plainNumber is a counter's number as text (provisional ones as such).
func plainNumber(n int64) string {
	if n < 0 {
		return db.ProvisionalText(n)
	}
	return strconv.FormatInt(n, 10)
}

// counterNext draws the next number of an organisation counter: on a
// clone from the blocks it leased from the hub (docs/sync.md), elsewhere
// from the counter itself.
func counterNext(ctx context.Context, q *db.Queries, orgID int64, name string) (int64, error) {
	if n, _, leased, err := db.DrawLeased(ctx, q, orgID, name); leased || err != nil {
		return n, err
	}
	return q.CounterNext(ctx, db.CounterNextParams{OrganisationID: orgID, Name: name})
}

// drawNumber takes the next number of an enabled prefix of the organisation
// inside the caller's write transaction, which the single writer
// serialises: concurrent draws get distinct, gap-free numbers.
func drawNumber(ctx context.Context, q *db.Queries, orgID, prefixID int64) (int64, string, error) {
	if clone, err := q.SyncIsClone(ctx); err != nil || clone {
		if err != nil {
			return 0, "", err
		}
		// A clone draws from its leased block, never the counter itself.
		p, err := q.PrefixGet(ctx, prefixID)
		if db.IsNotFound(err) || err == nil && (p.OrganisationID != orgID || !p.Enabled) {
			return 0, "", fieldError("prefix_id", "names no enabled prefix of this organisation")
		}
		if err != nil {
			return 0, "", err
		}
		n, _, _, err := db.DrawLeased(ctx, q, orgID, db.PrefixCounter(prefixID))
		if err != nil {
			return 0, "", err
		}
		return n, formatNumber(p.NumberFormat, p.NumberDigits, n), nil
	}
	p, err := q.PrefixDraw(ctx, db.PrefixDrawParams{ID: prefixID, OrganisationID: orgID})
	if db.IsNotFound(err) {
		return 0, "", fieldError("prefix_id", "names no enabled prefix of this organisation")
	}
	if err != nil {
		return 0, "", err
	}
	return p.LastNumber, formatNumber(p.NumberFormat, p.NumberDigits, p.LastNumber), nil
}

type prefixBody struct {
	Description  *string `json:"description"`
	NumberFormat *string `json:"number_format"`
	NumberDigits *int64  `json:"number_digits"`
	UniqueNumber *bool   `json:"unique_number"`
	LastNumber   *int64  `json:"last_number"`
	Enabled      *bool   `json:"enabled"`
}

var prefixReadOnly = []string{"id", "organisation_id", "number_format", "unique_number", "number_digits"}

func (s *Server) prefixCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b prefixBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "last_number", "enabled"); err != nil {
		return err
	}
	p := problems{}
	optText(p, "description", b.Description, maxDescriptionLen)
	switch {
	case b.NumberFormat == nil:
		p.add("number_format", "is required")
	case !strings.Contains(*b.NumberFormat, numberToken):
		p.add("number_format", "must contain "+numberToken)
	default:
		p.length("number_format", *b.NumberFormat, 1, maxNumberFormat)
	}
	if b.NumberDigits != nil && (*b.NumberDigits < 1 || *b.NumberDigits > maxNumberDigits) {
		p.add("number_digits", fmt.Sprintf("must be from 1 to %d", maxNumberDigits))
	}
	if err := p.err(); err != nil {
		return err
	}
	var out prefixJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		unique := b.UniqueNumber != nil && *b.UniqueNumber
		pr, err := q.PrefixCreate(rq.ctx, db.PrefixCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Description: orDefault(b.Description, ""),
			NumberFormat: *b.NumberFormat, NumberDigits: b.NumberDigits, UniqueNumber: unique, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toPrefix(pr)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) prefixList(rq *request) error {
	return listPage(s, rq, listSpec[prefixJSON]{Path: "id",
		Fields: db.FilterFields{"enabled": {Column: "enabled", Kind: db.FieldBool}},
		Scope:  orgScope(rq, 0, "prefixes", ""),
		Rows:   byIDs((*db.Queries).PrefixListByIDs, each(toPrefix))})
}

// prefixAccess loads a prefix and the caller's access; the spec's prefix
// rows answer an absent prefix with 400.
func prefixAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Prefix, Access, error) {
	p, err := q.PrefixGet(ctx, id)
	if db.IsNotFound(err) {
		return p, Access{}, badRequest("The prefix does not exist.")
	}
	if err != nil {
		return p, Access{}, err
	}
	a, err := authorize(ctx, q, userID, p.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return p, Access{}, badRequest("The prefix does not exist.")
	}
	return p, a, err
}

func (s *Server) prefixGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	p, a, err := prefixAccess(rq.ctx, s.store.R, rq.user.ID, id)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toPrefix(p))
}

// prefixPatch: description, enabled, and last_number, which may only
// increase (numbers already drawn are never drawn again).
func (s *Server) prefixPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b prefixBody
	ro, err := rq.decodePatch(&b, prefixReadOnly...)
	if err != nil {
		return err
	}
	p := problems{}
	optText(p, "description", b.Description, maxDescriptionLen)
	if b.LastNumber != nil && *b.LastNumber < 0 {
		p.add("last_number", "must not be negative")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out prefixJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		pr, a, err := prefixAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if err := ro.check(toPrefix(pr)); err != nil {
			return err
		}
		last := pr.LastNumber
		if b.LastNumber != nil {
			if *b.LastNumber < pr.LastNumber {
				return fieldError("last_number", fmt.Sprintf("may only increase (now %d)", pr.LastNumber))
			}
			last = *b.LastNumber
		}
		enabled := pr.Enabled
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		pr, err = q.PrefixUpdate(rq.ctx, db.PrefixUpdateParams{
			ID: pr.ID, OrganisationID: pr.OrganisationID, Description: orDefault(b.Description, pr.Description),
			LastNumber: last, Enabled: enabled,
		})
		if err != nil {
			return err
		}
		out = toPrefix(pr)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// prefixDelete: only a disabled prefix that never drew a number.
func (s *Server) prefixDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		pr, a, err := prefixAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if pr.Enabled {
			return badRequest("Disable the prefix before deleting it.")
		}
		if pr.LastNumber != 0 {
			return badRequest("The prefix has issued numbers and cannot be deleted.")
		}
		return q.PrefixDelete(rq.ctx, db.PrefixDeleteParams{ID: pr.ID, OrganisationID: pr.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}
