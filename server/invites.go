package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"time"

	"workspace/db"
)

// Why an invite cannot be used, in the error body's "reason" (openapi.yaml),
// so the join page can say the true reason in plain words (issue 36).
const (
	reasonInviteNotFound   = "invite_not_found"
	reasonInviteRevoked    = "invite_revoked"
	reasonInviteExpired    = "invite_expired"
	reasonInviteUsed       = "invite_used"
	reasonOrganisationGone = "organisation_gone"
	reasonBanned           = "banned"
	reasonWrongEmail       = "wrong_email"
	reasonEmailUnconfirmed = "email_unconfirmed"
	reasonDomainRequired   = "domain_required"
	reasonDomainRestricted = "domain_restricted"
	reasonNoSeats          = "no_seats"
)

// refusal adds a machine-readable reason to an error's body.
func refusal(e *Error, reason string) *Error {
	if e.Extra == nil {
		e.Extra = map[string]any{}
	}
	e.Extra["reason"] = reason
	return e
}

// inviteTTL is how long an invite lasts when the request names no expiry.
const inviteTTL = 7 * 24 * time.Hour

// inviteJSON is the invite object. id is beyond the spec: an e-mail invite
// shows code "", so its managers address it by id (see docs).
type inviteJSON struct {
	ID           db.ID          `json:"id"`
	Organisation orgPartialJSON `json:"organisation"`
	Code         string         `json:"code"`
	Email        string         `json:"email"`
	ExpiresAt    *string        `json:"expires_at"`
	Revoked      bool           `json:"revoked"`
	Domain       string         `json:"domain"`
	AutoAdd      bool           `json:"auto_add"`
	Approval     bool           `json:"approval"`
	Status       string         `json:"status"`
	CreatedBy    idJSON         `json:"created_by"`
	CreatedAt    string         `json:"created_at"`
}

func toInvite(inv db.Invite, o db.Organisation) inviteJSON {
	code := inv.Code
	if inv.Email != "" {
		// Only the mailed recipient learns the code of an e-mail invite.
		code = ""
	}
	return inviteJSON{
		ID: db.ID(inv.ID), Organisation: toOrgPartial(o), Code: code, Email: inv.Email, ExpiresAt: inv.ExpiresAt,
		Revoked: inv.Revoked, Domain: inv.Domain, AutoAdd: inv.AutoAdd,
		Approval: inv.Approval || o.MemberApproval, Status: inv.Status,
		CreatedBy: idJSON{db.ID(inv.CreatedBy)}, CreatedAt: inv.CreatedAt,
	}
}

// codeAlphabet has 64 URL-safe characters, so a random byte maps evenly.
const codeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// randomCode is n URL-safe random characters. Codes are never all digits,
// so a path value that is a snowflake always means an invite id.
func randomCode(n int) string {
	for {
		b := make([]byte, n)
		_, _ = rand.Read(b) // never fails (crypto/rand documents it)
		digits := true
		for i := range b {
			b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
			if b[i] < '0' || b[i] > '9' {
				digits = false
			}
		}
		if !digits {
			return string(b)
		}
	}
}

// validDomain normalises and checks a DNS name such as example.com.
func validDomain(s string) (string, bool) {
	s = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if len(s) == 0 || len(s) > 253 {
		return s, false
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return s, false
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return s, false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return s, false
			}
		}
	}
	tld := labels[len(labels)-1]
	if strings.Trim(tld, "0123456789") == "" {
		return s, false
	}
	return s, true
}

// parseExpiry reads an expires_at value: RFC 3339, in the future. An offset
// can carry a year-9999 time past 9999 in UTC, which the stored layout
// cannot hold (it would read back as no time at all, hence expired).
func (s *Server) parseExpiry(p problems, v string) *string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.UTC().Year() > 9999 {
		p.add("expires_at", "must be an RFC 3339 timestamp")
		return nil
	}
	if !t.After(s.clock()) {
		p.add("expires_at", "must be in the future")
		return nil
	}
	return ptr(db.FormatTime(t))
}

// checkAutoAdd: auto-add works only on a domain the organisation verified.
func checkAutoAdd(ctx context.Context, q *db.Queries, orgID int64, domain string) error {
	if domain == "" {
		return fieldError("auto_add", "needs a domain")
	}
	n, err := q.DomainVerifiedCount(ctx, db.DomainVerifiedCountParams{OrganisationID: orgID, Domain: domain})
	if err != nil {
		return err
	}
	if n == 0 {
		return fieldError("auto_add", "needs a domain the organisation has verified")
	}
	return nil
}

type inviteCreateBody struct {
	Email     string      `json:"email"`
	ExpiresAt Opt[string] `json:"expires_at"`
	Approval  bool        `json:"approval"`
	Domain    string      `json:"domain"`
	AutoAdd   bool        `json:"auto_add"`
}

// inviteCreate makes an invite. An e-mail invite mails its code to the
// address; a domain invite never expires; the default expiry is 7 days.
func (s *Server) inviteCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b inviteCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	b.Email = strings.TrimSpace(b.Email)
	if b.Email != "" && !validEmail(b.Email) {
		p.add("email", "must be a valid e-mail address")
	}
	if b.Domain != "" {
		d, ok := validDomain(b.Domain)
		if !ok {
			p.add("domain", "must be a domain name such as example.com")
		}
		b.Domain = d
		if b.Email != "" {
			p.add("domain", "an invite names an e-mail or a domain, not both")
		}
	}
	var expires *string
	switch {
	case b.Domain != "" && b.ExpiresAt.Set && !b.ExpiresAt.Null:
		p.add("expires_at", "domain invites do not expire")
	case b.Domain != "" || b.ExpiresAt.Null:
	case b.ExpiresAt.Set:
		expires = s.parseExpiry(p, b.ExpiresAt.Value)
	default:
		expires = ptr(db.FormatTime(s.clock().Add(inviteTTL)))
	}
	if err := p.err(); err != nil {
		return err
	}
	var out inviteJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, CreateInvite)
		if err != nil {
			return err
		}
		o := a.Org
		if b.AutoAdd {
			if err := checkAutoAdd(rq.ctx, q, orgID, b.Domain); err != nil {
				return err
			}
		}
		inv, err := q.InviteCreate(rq.ctx, db.InviteCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Code: randomCode(16), Email: b.Email,
			ExpiresAt: expires, Domain: b.Domain, AutoAdd: b.AutoAdd, Approval: b.Approval || o.MemberApproval,
			CreatedBy: rq.user.ID, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		if inv.Email != "" {
			err := s.mailer.send(rq.ctx, q, s.mailInvite(rq.user, o, inv))
			if err != nil {
				return err
			}
			if err := s.notifyOrgInvite(rq.ctx, q, inv, o, rq.user.ID); err != nil {
				return err
			}
		}
		out = toInvite(inv, o)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) inviteList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []inviteJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, CreateInvite)
		if err != nil {
			return err
		}
		o := a.Org
		rows, err := q.InviteList(rq.ctx, orgID)
		if err != nil {
			return err
		}
		out = make([]inviteJSON, len(rows))
		for i, inv := range rows {
			out[i] = toInvite(inv, o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// expired reports whether the invite's expiry has passed.
func (s *Server) expired(inv db.Invite) bool {
	if inv.ExpiresAt == nil {
		return false
	}
	t, err := db.ParseTime(*inv.ExpiresAt)
	return err != nil || !t.After(s.clock())
}

// inviteByCode finds an invite by its code only (the use and view rows):
// an id-shaped value never matches, as codes are never all digits.
func inviteByCode(rq *request, q *db.Queries) (db.Invite, error) {
	code := rq.params.ByName("code")
	if len(code) < 10 || len(code) > 64 {
		return db.Invite{}, refusal(notFound("The invite was not found."), reasonInviteNotFound)
	}
	inv, err := q.InviteGetByCode(rq.ctx, code)
	if db.IsNotFound(err) {
		return db.Invite{}, refusal(notFound("The invite was not found."), reasonInviteNotFound)
	}
	return inv, err
}

// inviteForManager finds an invite by code or by id (the manage rows, so an
// e-mail invite, whose code is not shown, can be changed and revoked), with
// the caller's access to its organisation checked for perm.
func inviteForManager(rq *request, q *db.Queries, perm Permission) (db.Invite, db.Organisation, error) {
	inv, err := inviteManaged(rq, q)
	if err != nil {
		return db.Invite{}, db.Organisation{}, err
	}
	a, err := orgAccess(rq, q, inv.OrganisationID, http.StatusNotFound, perm)
	return inv, a.Org, err
}

// inviteManaged is the invite the manage rows' :code names, by code or by
// id; 404 when absent.
func inviteManaged(rq *request, q *db.Queries) (db.Invite, error) {
	v := rq.params.ByName("code")
	var inv db.Invite
	var err error
	if id, ok := db.ParseID(v); ok {
		inv, err = q.InviteGetByID(rq.ctx, int64(id))
	} else {
		inv, err = inviteByCode(rq, q)
	}
	if db.IsNotFound(err) {
		return db.Invite{}, notFound("The invite was not found.")
	}
	return inv, err
}

// inviteGet shows an invite to anyone signed in who holds its code, while
// it has not expired. A revoked invite shows with status revoked.
func (s *Server) inviteGet(rq *request) error {
	var out inviteJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		inv, err := inviteByCode(rq, q)
		if err != nil {
			return err
		}
		if s.expired(inv) {
			return refusal(notFound("The invite has expired."), reasonInviteExpired)
		}
		o, err := q.OrganisationGet(rq.ctx, inv.OrganisationID)
		if db.IsNotFound(err) {
			return refusal(notFound("The invite was not found."), reasonInviteNotFound)
		}
		if err != nil {
			return err
		}
		out = toInvite(inv, o)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type invitePatchBody struct {
	ExpiresAt Opt[string] `json:"expires_at"`
	Approval  *bool       `json:"approval"`
	Domain    Opt[string] `json:"domain"`
	AutoAdd   *bool       `json:"auto_add"`
}

// invitePatch changes expiry, approval, domain and auto-add. Setting a
// domain removes the expiry; approval stays true while the organisation
// requires member approval.
func (s *Server) invitePatch(rq *request) error {
	var b invitePatchBody
	ro, err := rq.decodePatch(&b, "id", "organisation", "code", "email", "revoked", "status", "created_by", "created_at")
	if err != nil {
		return err
	}
	p := problems{}
	domain := ""
	if b.Domain.Set && !b.Domain.Null && b.Domain.Value != "" {
		d, ok := validDomain(b.Domain.Value)
		if !ok {
			p.add("domain", "must be a domain name such as example.com")
		}
		domain = d
	}
	var expires *string
	if b.ExpiresAt.Set && !b.ExpiresAt.Null {
		expires = s.parseExpiry(p, b.ExpiresAt.Value)
	}
	if err := p.err(); err != nil {
		return err
	}
	var out inviteJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		inv, o, err := inviteForManager(rq, q, CreateInvite)
		if err != nil {
			return err
		}
		if err := ro.check(toInvite(inv, o)); err != nil {
			return err
		}
		if inv.Revoked {
			return badRequest("A revoked invite cannot be changed.")
		}
		arg := db.InviteUpdateParams{ID: inv.ID, OrganisationID: inv.OrganisationID, ExpiresAt: inv.ExpiresAt,
			Domain: inv.Domain, AutoAdd: inv.AutoAdd, Approval: inv.Approval}
		if b.Domain.Set {
			arg.Domain = domain
			if domain != "" {
				arg.ExpiresAt = nil
			} else if b.AutoAdd == nil {
				arg.AutoAdd = false // auto-add has no meaning without a domain
			}
		}
		if arg.Domain != "" && inv.Email != "" {
			return fieldError("domain", "an invite names an e-mail or a domain, not both")
		}
		if b.ExpiresAt.Set {
			if arg.Domain != "" && !b.ExpiresAt.Null {
				return fieldError("expires_at", "domain invites do not expire")
			}
			arg.ExpiresAt = expires
		}
		setIf(&arg.AutoAdd, b.AutoAdd)
		setIf(&arg.Approval, b.Approval)
		arg.Approval = arg.Approval || o.MemberApproval
		if arg.AutoAdd {
			if err := checkAutoAdd(rq.ctx, q, inv.OrganisationID, arg.Domain); err != nil {
				return err
			}
		}
		inv, err = q.InviteUpdate(rq.ctx, arg)
		if err != nil {
			return err
		}
		out = toInvite(inv, o)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inviteRevoke revokes an invite (again is fine) and returns it.
func (s *Server) inviteRevoke(rq *request) error {
	var out inviteJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		inv, o, err := inviteForManager(rq, q, RevokeInvite)
		if err != nil {
			return err
		}
		inv, err = q.InviteRevoke(rq.ctx, db.InviteRevokeParams{ID: inv.ID, OrganisationID: inv.OrganisationID})
		if err != nil {
			return err
		}
		out = toInvite(inv, o)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inviteUse joins the caller to the invite's organisation. The checks run
// in this order: the invite exists, is not revoked or expired (404); its
// organisation is live (400); the caller is not banned (403); already a
// member or pending (204); the caller is the e-mail's verified owner, on
// the domain, on an approved domain when the organisation restricts them
// (403); a single-use e-mail invite not used yet (404); a seat is free
// (429). Membership is pending when approval applies. The one write
// transaction makes the seat count and the insert atomic, so concurrent
// uses never exceed the quota.
func (s *Server) inviteUse(rq *request) error {
	// Codes are secrets too: a caller trying codes is limited like any
	// other guessing.
	g := guessOf("invite_code", userAccount(rq.user.ID))
	if err := s.allowGuess(rq, g); err != nil {
		return err
	}
	var out orgContextJSON
	already := false
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		inv, err := inviteByCode(rq, q)
		if err != nil {
			s.failedGuess(rq, g)
			return err
		}
		if inv.Revoked {
			return refusal(notFound("The invite has been revoked."), reasonInviteRevoked)
		}
		if s.expired(inv) {
			return refusal(notFound("The invite has expired."), reasonInviteExpired)
		}
		o, err := q.OrganisationGet(rq.ctx, inv.OrganisationID)
		if db.IsNotFound(err) {
			return refusal(badRequest("The invite's organisation no longer exists."), reasonOrganisationGone)
		}
		if err != nil {
			return err
		}
		uid := rq.user.ID
		banned, err := q.BanExists(rq.ctx, db.BanExistsParams{OrganisationID: o.ID, UserID: uid})
		if err != nil {
			return err
		}
		if banned > 0 {
			return refusal(forbidden("You are banned from this organisation."), reasonBanned)
		}
		member, err := q.MemberExists(rq.ctx, db.MemberExistsParams{OrganisationID: o.ID, UserID: uid})
		if err != nil {
			return err
		}
		if member > 0 {
			already = true
			return nil
		}
		if err := s.inviteEligible(rq.ctx, q, inv, o, uid); err != nil {
			return err
		}
		if inv.Email != "" && inv.Status == "accepted" {
			return refusal(notFound("The invite has already been used."), reasonInviteUsed)
		}
		if max := s.cfg.MaxMembersPerOrg; max > 0 {
			seats, err := q.OrganisationSeatCount(rq.ctx, o.ID)
			if err != nil {
				return err
			}
			if seats >= int64(max) {
				return refusal(errorf(http.StatusTooManyRequests, "The organisation has no member seats left."), reasonNoSeats)
			}
		}
		// auto_add admits users of a verified domain without the invite's
		// own approval step; the organisation's member approval still holds.
		pending := o.MemberApproval || (inv.Approval && !inv.AutoAdd)
		now := s.nowText()
		if err := q.MemberCreate(rq.ctx, db.MemberCreateParams{OrganisationID: o.ID, UserID: uid, Pending: pending, JoinedAt: now}); err != nil {
			return err
		}
		if inv.Email != "" {
			if err := q.InviteAccept(rq.ctx, db.InviteAcceptParams{ID: inv.ID, OrganisationID: o.ID}); err != nil {
				return err
			}
		}
		n, err := q.OrganisationMemberCount(rq.ctx, o.ID)
		if err != nil {
			return err
		}
		a, err := authorize(rq.ctx, q, uid, o.ID, Scopes{})
		if err != nil {
			return err
		}
		features, err := s.orgFeatures(rq.ctx, q, o.ID, n)
		if err != nil {
			return err
		}
		out = orgContext(a, toOrg(o, n), features, now, nil)
		return nil
	})
	if err != nil {
		return err
	}
	if already {
		return rq.noContent()
	}
	return rq.json(http.StatusOK, out)
}

// inviteEligible checks who may use the invite: an e-mail invite only the
// verified owner of that address, a domain invite only users with a
// verified address on it, and a domain-restricted organisation only users
// with a verified address on one of its approved domains.
func (s *Server) inviteEligible(ctx context.Context, q *db.Queries, inv db.Invite, o db.Organisation, uid int64) error {
	if inv.Email != "" {
		// The true reason matters to the person: a newcomer who registered
		// with the invited address has only to confirm it.
		e, err := q.UserEmailGetByAddress(ctx, db.UserEmailGetByAddressParams{UserID: uid, Email: inv.Email})
		if db.IsNotFound(err) {
			return refusal(forbidden("This invite is for another e-mail address."), reasonWrongEmail)
		} else if err != nil {
			return err
		}
		if !e.IsVerified {
			return refusal(forbidden("Confirm your e-mail address first: the invite is for %s.", inv.Email), reasonEmailUnconfirmed)
		}
	}
	if inv.Domain != "" {
		n, err := q.UserEmailVerifiedOnDomain(ctx, db.UserEmailVerifiedOnDomainParams{UserID: uid, Domain: inv.Domain})
		if err != nil {
			return err
		}
		if n == 0 {
			return refusal(forbidden("This invite needs a verified e-mail address on %s.", inv.Domain), reasonDomainRequired)
		}
	}
	if o.RestrictEmailDomain {
		n, err := q.UserEmailVerifiedOnApprovedDomain(ctx, db.UserEmailVerifiedOnApprovedDomainParams{OrganisationID: o.ID, UserID: uid})
		if err != nil {
			return err
		}
		if n == 0 {
			return refusal(forbidden("The organisation admits only verified e-mail addresses on its approved domains."), reasonDomainRestricted)
		}
	}
	return nil
}
