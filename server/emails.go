package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"workspace/db"
)

// userEmailJSON is the user e-mail object.
type userEmailJSON struct {
	ID         db.ID  `json:"id"`
	UserID     db.ID  `json:"user_id"`
	Email      string `json:"email"`
	IsPrimary  bool   `json:"is_primary"`
	IsVerified bool   `json:"is_verified"`
}

func toUserEmail(e db.UserEmail) userEmailJSON {
	return userEmailJSON{ID: db.ID(e.ID), UserID: db.ID(e.UserID), Email: e.Email, IsPrimary: e.IsPrimary, IsVerified: e.IsVerified}
}

// sendEmailToken replaces the address's token and mails the new one; only
// its hash is kept.
func (s *Server) sendEmailToken(ctx context.Context, q *db.Queries, e db.UserEmail) error {
	tok := randomToken(24)
	exp := db.FormatTime(s.clock().Add(emailTokenTTL))
	h := hashToken(tok)
	if err := q.UserEmailSetToken(ctx, db.UserEmailSetTokenParams{TokenHash: &h, TokenExpiresAt: &exp, ID: e.ID, UserID: e.UserID}); err != nil {
		return err
	}
	return s.mailer.send(ctx, q, s.mailConfirmAddress(e, tok))
}

// Confirmation mails are limited like guesses (issue 36), so nobody can
// make the server mail an address again and again: per account, per
// address mailed (whoever asks) and per client; each mail spends one.
func (s *Server) allowConfirmMail(rq *request, email string) error {
	if err := s.allowSend(rq, guessOf("confirm_mail", userAccount(rq.user.ID))); err != nil {
		return err
	}
	return s.allowSend(rq, guessOf("confirm_mail", email))
}

func (s *Server) spendConfirmMail(rq *request, email string) {
	s.failedGuess(rq, guessOf("confirm_mail", userAccount(rq.user.ID)))
	s.limits.account.spend("confirm_mail|"+strings.ToLower(email), s.clock())
}

// userEmailGetOwn loads one of the caller's addresses; others' are 404.
func userEmailGetOwn(ctx context.Context, q *db.Queries, userID, id int64) (db.UserEmail, error) {
	e, err := q.UserEmailGet(ctx, db.UserEmailGetParams{ID: id, UserID: userID})
	if db.IsNotFound(err) {
		return e, notFound("No such e-mail address.")
	}
	return e, err
}

// releaseUnverifiedClaims: an address verified by its owner wins over every
// unverified claim on it elsewhere, which is removed, so a registration that
// never proved the address cannot lock its owner out (issue 20). An account
// whose sign-in address it was moves to another of its addresses (a
// verified one first), or is left with a placeholder no one can sign in
// with; it is told at its remaining address. A verified address elsewhere
// is never released.
func (s *Server) releaseUnverifiedClaims(ctx context.Context, q *db.Queries, owned db.UserEmail) error {
	if !owned.IsVerified {
		return nil
	}
	claims, err := q.UserEmailUnverifiedClaims(ctx, db.UserEmailUnverifiedClaimsParams{Email: owned.Email, UserID: owned.UserID})
	if err != nil {
		return err
	}
	for _, c := range claims {
		if err := q.UserEmailUnroute(ctx, &c.ID); err != nil {
			return err
		}
		if err := q.UserEmailDelete(ctx, db.UserEmailDeleteParams{ID: c.ID, UserID: c.UserID}); err != nil {
			return err
		}
		u, err := q.UserGet(ctx, c.UserID)
		if err != nil {
			return fmt.Errorf("release: user %d: %w", c.UserID, err)
		}
		rest, err := q.UserEmailList(ctx, c.UserID)
		if err != nil {
			return err
		}
		if strings.EqualFold(u.Email, c.Email) {
			address := fmt.Sprintf("released-%d@invalid", u.ID)
			if next, ok := nextSignInAddress(rest); ok {
				address = next.Email
				if err := q.UserEmailSetPrimary(ctx, db.UserEmailSetPrimaryParams{ID: next.ID, UserID: u.ID}); err != nil {
					return err
				}
			}
			if err := q.UserEmailAddressSet(ctx, db.UserEmailAddressSetParams{Email: address, UpdatedAt: s.nowText(), ID: u.ID}); err != nil {
				return err
			}
		}
		if next, ok := nextSignInAddress(rest); ok {
			err := s.mailer.send(ctx, q, s.mailAddressRemoved(next.Email, c.Email))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// nextSignInAddress picks the address an account signs in with once its
// own went: a verified one first, else the oldest.
func nextSignInAddress(addresses []db.UserEmail) (db.UserEmail, bool) {
	for _, a := range addresses {
		if a.IsVerified {
			return a, true
		}
	}
	if len(addresses) > 0 {
		return addresses[0], true
	}
	return db.UserEmail{}, false
}

func errLinked() *Error { return fieldError("email", "is linked to another account") }

type emailCreateBody struct {
	Email *string `json:"email"`
}

// userEmailCreate adds an address and mails its verification token. Adding
// an address the caller already has returns it unchanged.
func (s *Server) userEmailCreate(rq *request) error {
	var b emailCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if b.Email == nil {
		return fieldError("email", "is required")
	}
	email := strings.TrimSpace(*b.Email)
	if !validEmail(email) {
		return fieldError("email", "must be a valid e-mail address")
	}
	if err := s.allowConfirmMail(rq, email); err != nil {
		return err
	}
	status := http.StatusCreated
	var out db.UserEmail
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		existing, err := q.UserEmailGetByAddress(rq.ctx, db.UserEmailGetByAddressParams{UserID: rq.user.ID, Email: email})
		if err == nil {
			out, status = existing, http.StatusOK
			return nil
		} else if !db.IsNotFound(err) {
			return err
		}
		if n, err := q.UserEmailVerifiedElsewhere(rq.ctx, db.UserEmailVerifiedElsewhereParams{Email: email, UserID: rq.user.ID}); err != nil {
			return err
		} else if n > 0 {
			return errLinked()
		}
		if n, err := q.UserEmailCount(rq.ctx, rq.user.ID); err != nil {
			return err
		} else if n >= maxUserEmails {
			return fieldError("email", fmt.Sprintf("you can have at most %d addresses", maxUserEmails))
		}
		out, err = q.UserEmailCreate(rq.ctx, db.UserEmailCreateParams{ID: s.store.IDs.Next(), UserID: rq.user.ID, Email: email, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		return s.sendEmailToken(rq.ctx, q, out)
	})
	if err != nil {
		return err
	}
	if status == http.StatusCreated {
		s.spendConfirmMail(rq, email)
	}
	return rq.json(status, toUserEmail(out))
}

// userEmailResend mails a fresh token; a verified address needs none.
func (s *Server) userEmailResend(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	e, err := userEmailGetOwn(rq.ctx, s.store.R, rq.user.ID, id)
	if err != nil {
		return err
	}
	if !e.IsVerified {
		if err := s.allowConfirmMail(rq, e.Email); err != nil {
			return err
		}
	}
	sent := false
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if e, err = userEmailGetOwn(rq.ctx, q, rq.user.ID, id); err != nil || e.IsVerified {
			return err
		}
		sent = true
		return s.sendEmailToken(rq.ctx, q, e)
	})
	if err != nil {
		return err
	}
	if sent {
		s.spendConfirmMail(rq, e.Email)
	}
	return rq.json(http.StatusOK, toUserEmail(e))
}

func (s *Server) userEmailGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	e, err := userEmailGetOwn(rq.ctx, s.store.R, rq.user.ID, id)
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, toUserEmail(e))
}

type emailPatchBody struct {
	EmailToken *string         `json:"email_token"`
	IsPrimary  *bool           `json:"is_primary"`
	ID         json.RawMessage `json:"id"`
	UserID     json.RawMessage `json:"user_id"`
	Email      json.RawMessage `json:"email"`
	IsVerified json.RawMessage `json:"is_verified"`
}

// userEmailPatch verifies an address with its token and/or makes a verified
// address primary, which also makes it the sign-in address.
func (s *Server) userEmailPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b emailPatchBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	ro := map[string]json.RawMessage{}
	for name, raw := range map[string]json.RawMessage{"id": b.ID, "user_id": b.UserID, "email": b.Email, "is_verified": b.IsVerified} {
		if raw != nil {
			ro[name] = raw
		}
	}
	emailGuess := guessOf("email_token", userAccount(rq.user.ID))
	if b.EmailToken != nil {
		if err := s.allowGuess(rq, emailGuess); err != nil {
			return err
		}
	}
	badToken := false
	var e db.UserEmail
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if e, err = userEmailGetOwn(rq.ctx, q, rq.user.ID, id); err != nil {
			return err
		}
		if err := checkReadOnly(toUserEmail(e), ro); err != nil {
			return err
		}
		if b.EmailToken != nil && !e.IsVerified {
			tok := strings.TrimSpace(*b.EmailToken)
			if e.TokenHash == nil || e.TokenExpiresAt == nil || !s.live(*e.TokenExpiresAt) ||
				subtle.ConstantTimeCompare([]byte(hashToken(tok)), []byte(*e.TokenHash)) != 1 {
				badToken = true
				return fieldError("email_token", "is invalid or expired")
			}
			if n, err := q.UserEmailVerifiedElsewhere(rq.ctx, db.UserEmailVerifiedElsewhereParams{Email: e.Email, UserID: e.UserID}); err != nil {
				return err
			} else if n > 0 {
				return errLinked()
			}
			if e, err = q.UserEmailMarkVerified(rq.ctx, db.UserEmailMarkVerifiedParams{ID: e.ID, UserID: e.UserID}); err != nil {
				return err
			}
			if err := s.releaseUnverifiedClaims(rq.ctx, q, e); err != nil {
				return err
			}
		}
		if b.IsPrimary == nil || *b.IsPrimary == e.IsPrimary {
			return nil
		}
		if !*b.IsPrimary {
			return fieldError("is_primary", "make another verified address primary instead")
		}
		if !e.IsVerified {
			return fieldError("is_primary", "the address must be verified first")
		}
		// Claims made before the owner verified (by an older version) go now.
		if err := s.releaseUnverifiedClaims(rq.ctx, q, e); err != nil {
			return err
		}
		if other, err := q.UserGetByEmail(rq.ctx, e.Email); err == nil && other.ID != e.UserID {
			return errLinked()
		} else if err != nil && !db.IsNotFound(err) {
			return err
		}
		if err := q.UserEmailSetPrimary(rq.ctx, db.UserEmailSetPrimaryParams{ID: e.ID, UserID: e.UserID}); err != nil {
			return err
		}
		if err := q.UserEmailAddressSet(rq.ctx, db.UserEmailAddressSetParams{Email: e.Email, UpdatedAt: s.nowText(), ID: e.UserID}); err != nil {
			if db.IsConflict(err) {
				return errLinked()
			}
			return err
		}
		e.IsPrimary = true
		return nil
	})
	if badToken {
		s.failedGuess(rq, emailGuess)
	}
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, toUserEmail(e))
}

// userEmailDelete removes an address that is neither the primary one nor
// routed for an organisation's notifications.
func (s *Server) userEmailDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		e, err := userEmailGetOwn(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if e.IsPrimary {
			return badRequest("The primary address cannot be removed; make another address primary first.")
		}
		if n, err := q.UserEmailRoutedCount(rq.ctx, db.UserEmailRoutedCountParams{UserID: e.UserID, EmailID: &e.ID}); err != nil {
			return err
		} else if n > 0 {
			return badRequest("The address receives an organisation's notifications; route them elsewhere first.")
		}
		return q.UserEmailDelete(rq.ctx, db.UserEmailDeleteParams{ID: e.ID, UserID: e.UserID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// emailDomain is the part after the last @.
func emailDomain(email string) string {
	return email[strings.LastIndexByte(email, '@')+1:]
}

// domainAllowed: an organisation restricting e-mail domains accepts only
// addresses on one of its approved domains (exact match, any case).
func domainAllowed(org db.Organisation, approved []string, email string) bool {
	if !org.RestrictEmailDomain {
		return true
	}
	d := emailDomain(email)
	for _, a := range approved {
		if strings.EqualFold(a, d) {
			return true
		}
	}
	return false
}

// memberOrg loads a live organisation and the caller's membership in it; ok
// is false when there is no such organisation or the caller is not a
// (non-pending) member. The owner is always a member. No permissions are
// needed, so none are resolved.
func memberOrg(ctx context.Context, q *db.Queries, userID, orgID int64) (db.Organisation, db.OrganisationMember, bool, error) {
	m, err := q.UserMembershipGet(ctx, db.UserMembershipGetParams{OrganisationID: orgID, UserID: userID})
	if db.IsNotFound(err) || (err == nil && m.Pending) {
		return db.Organisation{}, m, false, nil
	} else if err != nil {
		return db.Organisation{}, m, false, err
	}
	o, err := q.OrganisationGet(ctx, orgID)
	return o, m, err == nil, err
}

// userEmailList lists the caller's addresses; with organisation_id, only
// those the organisation's domain rules allow.
func (s *Server) userEmailList(rq *request) error {
	var orgID int64
	if v, ok := rq.r.URL.Query()["organisation_id"]; ok {
		id, ok := db.ParseID(v[0])
		if !ok {
			return fieldError("organisation_id", "must be a snowflake id")
		}
		orgID = int64(id)
	}
	out := []userEmailJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		rows, err := q.UserEmailList(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		var org db.Organisation
		var approved []string
		if orgID != 0 {
			var ok bool
			if org, _, ok, err = memberOrg(rq.ctx, q, rq.user.ID, orgID); err != nil {
				return err
			} else if !ok {
				return fieldError("organisation_id", "names no organisation you are a member of")
			}
			if approved, err = q.UserOrganisationDomainsApproved(rq.ctx, orgID); err != nil {
				return err
			}
		}
		for _, e := range rows {
			if orgID == 0 || domainAllowed(org, approved, e.Email) {
				out = append(out, toUserEmail(e))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type notificationEmailBody struct {
	NotificationEmailID *db.ID `json:"notification_email_id"`
}

// userOrgEmailPatch routes an organisation's notifications to one of the
// caller's verified addresses allowed by its domain rules.
func (s *Server) userOrgEmailPatch(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b notificationEmailBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if b.NotificationEmailID == nil {
		return fieldError("notification_email_id", "is required")
	}
	emailID := int64(*b.NotificationEmailID)
	var out orgUserJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		org, m, ok, err := memberOrg(rq.ctx, q, rq.user.ID, orgID)
		if err != nil {
			return err
		} else if !ok {
			return notFound("You are not a member of this organisation.")
		}
		e, err := q.UserEmailGet(rq.ctx, db.UserEmailGetParams{ID: emailID, UserID: rq.user.ID})
		if (err == nil && !e.IsVerified) || db.IsNotFound(err) {
			return fieldError("notification_email_id", "must be one of your verified e-mail addresses")
		} else if err != nil {
			return err
		}
		approved, err := q.UserOrganisationDomainsApproved(rq.ctx, orgID)
		if err != nil {
			return err
		}
		if !domainAllowed(org, approved, e.Email) {
			return fieldError("notification_email_id", "is on a domain the organisation does not allow")
		}
		if err := q.UserMembershipSetNotificationEmail(rq.ctx, db.UserMembershipSetNotificationEmailParams{
			NotificationEmailID: &e.ID, OrganisationID: orgID, UserID: rq.user.ID,
		}); err != nil {
			return err
		}
		id := db.ID(e.ID)
		out = orgUserJSON{IsOwner: org.OwnedBy == rq.user.ID, Pending: m.Pending, JoinedAt: m.JoinedAt, NotificationEmailID: &id}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
