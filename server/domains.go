package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"workspace/db"
)

// challengePrefix names the DNS record a domain challenge is looked up at:
// a TXT record at _workspace-challenge.<domain> whose value is the token,
// so the challenge does not crowd the domain's own TXT records.
const challengePrefix = "_workspace-challenge."

// domainJSON is the organisation domain object; challenge_token is present
// only when asked for (and on creation).
type domainJSON struct {
	ID             db.ID   `json:"id"`
	OrganisationID db.ID   `json:"organisation_id"`
	Domain         string  `json:"domain"`
	ChallengeToken *string `json:"challenge_token,omitempty"`
	IsVerified     bool    `json:"is_verified"`
	IsApproved     bool    `json:"is_approved"`
}

func toDomain(d db.OrganisationDomain, withChallenge bool) domainJSON {
	out := domainJSON{ID: db.ID(d.ID), OrganisationID: db.ID(d.OrganisationID), Domain: d.Domain, IsVerified: d.IsVerified, IsApproved: d.IsApproved}
	if withChallenge {
		out.ChallengeToken = ptr(d.ChallengeToken)
	}
	return out
}

// domainByPath loads the domain of the path inside the organisation.
func domainByPath(rq *request, q *db.Queries, orgID int64) (db.OrganisationDomain, error) {
	id, err := rq.pathID("domain")
	if err != nil {
		return db.OrganisationDomain{}, err
	}
	d, err := q.DomainGet(rq.ctx, db.DomainGetParams{ID: id, OrganisationID: orgID})
	if db.IsNotFound(err) {
		return d, notFound("The domain was not found.")
	}
	return d, err
}

type domainCreateBody struct {
	Domain string `json:"domain"`
}

func (s *Server) domainCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b domainCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	name, ok := validDomain(b.Domain)
	if !ok {
		return fieldError("domain", "must be a domain name such as example.com")
	}
	var out domainJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		d, err := q.DomainCreate(rq.ctx, db.DomainCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Domain: name, ChallengeToken: randomCode(32), CreatedAt: s.nowText(),
		})
		if db.IsConflict(err) {
			return fieldError("domain", "is already added to this organisation")
		}
		if err != nil {
			return err
		}
		out = toDomain(d, true)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) domainList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	withChallenge, err := rq.queryBool("include_challenge", false)
	if err != nil {
		return err
	}
	var out []domainJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		rows, err := q.DomainList(rq.ctx, orgID)
		if err != nil {
			return err
		}
		out = make([]domainJSON, len(rows))
		for i, d := range rows {
			out[i] = toDomain(d, withChallenge)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// domainVerify looks the challenge up in DNS (outside any transaction: it
// may take seconds) and marks the domain verified when a TXT record at
// _workspace-challenge.<domain> holds the token. Not found: 400.
func (s *Server) domainVerify(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var d db.OrganisationDomain
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		d, err = domainByPath(rq, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	if !d.IsVerified {
		if !s.challengeFound(rq.ctx, d) {
			return badRequest("No TXT record at %s%s holds the challenge token.", challengePrefix, d.Domain)
		}
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
				return err
			}
			d, err = q.DomainSetVerified(rq.ctx, db.DomainSetVerifiedParams{ID: d.ID, OrganisationID: orgID})
			if db.IsNotFound(err) {
				return notFound("The domain was not found.")
			}
			if err != nil {
				return err
			}
			return q.OrgVerifiedRefresh(rq.ctx, orgID)
		})
		if err != nil {
			return err
		}
	}
	return rq.json(http.StatusOK, toDomain(d, false))
}

// challengeFound reports whether DNS holds the domain's challenge. A
// lookup failure counts as not found: the caller can only retry.
func (s *Server) challengeFound(ctx context.Context, d db.OrganisationDomain) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	records, err := s.cfg.LookupTXT(ctx, challengePrefix+d.Domain)
	if err != nil {
		return false
	}
	for _, r := range records {
		if strings.TrimSpace(r) == d.ChallengeToken {
			return true
		}
	}
	return false
}

type domainPatchBody struct {
	IsApproved *bool `json:"is_approved"`
}

// lastApproved refuses to withdraw the last approved domain while the
// organisation restricts members to its approved domains.
func lastApproved(ctx context.Context, q *db.Queries, orgID int64, d db.OrganisationDomain) error {
	if !d.IsApproved {
		return nil
	}
	o, err := q.OrganisationGet(ctx, orgID)
	if err != nil {
		return db.Classify(err)
	}
	if !o.RestrictEmailDomain {
		return nil
	}
	n, err := q.DomainApprovedCount(ctx, orgID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return badRequest("The organisation restricts e-mail domains: keep at least one approved domain, or turn restrict_email_domain off first.")
	}
	return nil
}

// domainPatch approves or withdraws a verified domain.
func (s *Server) domainPatch(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b domainPatchBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id", "domain", "challenge_token", "is_verified")
	if err != nil {
		return err
	}
	var out domainJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		d, err := domainByPath(rq, q, orgID)
		if err != nil {
			return err
		}
		if err := ro.check(toDomain(d, true)); err != nil {
			return err
		}
		if b.IsApproved != nil {
			if *b.IsApproved && !d.IsVerified {
				return fieldError("is_approved", "only a verified domain can be approved")
			}
			if !*b.IsApproved {
				if err := lastApproved(rq.ctx, q, orgID, d); err != nil {
					return err
				}
			}
			d, err = q.DomainSetApproved(rq.ctx, db.DomainSetApprovedParams{IsApproved: *b.IsApproved, ID: d.ID, OrganisationID: orgID})
			if err != nil {
				return err
			}
			// is_verified follows: a verified and approved domain.
			if err := q.OrgVerifiedRefresh(rq.ctx, orgID); err != nil {
				return err
			}
		}
		out = toDomain(d, false)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) domainDelete(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		d, err := domainByPath(rq, q, orgID)
		if err != nil {
			return err
		}
		if err := lastApproved(rq.ctx, q, orgID, d); err != nil {
			return err
		}
		if err := q.DomainDelete(rq.ctx, db.DomainDeleteParams{ID: d.ID, OrganisationID: orgID}); err != nil {
			return err
		}
		return q.OrgVerifiedRefresh(rq.ctx, orgID)
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}
