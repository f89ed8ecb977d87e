package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"workspace/db"
)

// Badge bits.
const (
	BadgeVerified  = 1 << 0
	BadgeSupporter = 1 << 1
	BadgeStaff     = 1 << 31
)

// Lifetimes and limits of the users area (decisions in docs/users.md).
const (
	emailTokenTTL  = 24 * time.Hour
	deleteTokenTTL = 24 * time.Hour
	phoneCodeTTL   = 15 * time.Minute
	phoneCodeTries = 5
	totpTTL        = 24 * time.Hour
	maxUserEmails  = 20
	maxSignature   = 512 << 10
	maxFormField   = maxSignature + 1024
)

// Account deletion error codes named by the spec.
const (
	codeOwnsOrganisation = 0x01000
	codeDeletionToken    = 0x01001
	codeStillMember      = 0x01002
)

// user_tokens purposes.
const (
	tokenPhone  = "phone"
	tokenDelete = "delete"
)

// Allow Request From values.
var allowFromValues = map[int64]bool{0x00: true, 0x01: true, 0x02: true, 0xFF: true}

// userJSON is the user object.
type userJSON struct {
	ID            db.ID            `json:"id"`
	FirstName     string           `json:"first_name"`
	LastName      string           `json:"last_name"`
	Email         string           `json:"email"`
	PhoneNumber   string           `json:"phone_number"`
	Position      string           `json:"position"`
	Company       string           `json:"company"`
	AvatarHash    *string          `json:"avatar_hash"`
	Roles         []roleJSON       `json:"roles"`
	Organisations []orgPartialJSON `json:"organisations"`
	Badges        int64            `json:"badges"`
}

// userExtendedJSON is the caller's own user object.
type userExtendedJSON struct {
	userJSON
	Initials             string  `json:"initials"`
	Language             string  `json:"language"`
	TimezoneCode         string  `json:"timezone_code"`
	AllowConnectionsFrom int64   `json:"allow_connections_from"`
	AllowSharesFrom      int64   `json:"allow_shares_from"`
	EmailNotifications   bool    `json:"email_notifications"`
	SmsNotifications     bool    `json:"sms_notifications"`
	EmailNewsletter      bool    `json:"email_newsletter"`
	EmailConfirmed       bool    `json:"email_confirmed"`
	PhoneNumberConfirmed bool    `json:"phone_number_confirmed"`
	Signature            string  `json:"signature"`
	TotpToken            *string `json:"totp_token"`
	IsBot                bool    `json:"is_bot"`
}

// toUser is the user object as anyone sharing an organisation may see it.
// The phone number is left out: it shows only to the user and to managers of
// a shared organisation, so callers that may show it add it (withPhone).
func toUser(u db.User) userJSON {
	return userJSON{
		ID: db.ID(u.ID), FirstName: u.FirstName, LastName: u.LastName, Email: u.Email,
		Position: u.Position, Company: u.Company, AvatarHash: u.AvatarHash,
		Roles: []roleJSON{}, Organisations: []orgPartialJSON{}, Badges: u.Badges,
	}
}

func (s *Server) extendedUser(u db.User) userExtendedJSON {
	out := userExtendedJSON{
		userJSON: toUser(u), Initials: u.Initials, Language: u.Language, TimezoneCode: u.TimezoneCode,
		AllowConnectionsFrom: u.AllowConnectionsFrom, AllowSharesFrom: u.AllowSharesFrom,
		EmailNotifications: u.EmailNotifications, SmsNotifications: u.SmsNotifications,
		EmailNewsletter: u.EmailNewsletter, PhoneNumberConfirmed: u.PhoneNumberConfirmed,
		Signature: u.Signature, IsBot: u.IsBot,
	}
	out.PhoneNumber = u.PhoneNumber
	return out
}

// primaryVerified reports whether the user's sign-in address is verified.
func primaryVerified(ctx context.Context, q *db.Queries, userID int64) (bool, error) {
	n, err := q.UserEmailPrimaryVerified(ctx, userID)
	return n > 0, err
}

// userView is the user object of target as the viewer sees it: roles and
// organisations come only from organisations both belong to (not pending).
func (s *Server) userView(ctx context.Context, q *db.Queries, target db.User, viewerID int64) (userJSON, error) {
	out := toUser(target)
	orgs, err := q.UserSharedOrganisations(ctx, db.UserSharedOrganisationsParams{UserID: target.ID, ViewerID: viewerID})
	if err != nil {
		return out, err
	}
	for _, o := range orgs {
		out.Organisations = append(out.Organisations, toOrgPartial(o))
	}
	roles, err := q.UserSharedRoles(ctx, db.UserSharedRolesParams{UserID: target.ID, ViewerID: viewerID})
	if err != nil {
		return out, err
	}
	for _, r := range roles {
		out.Roles = append(out.Roles, roleJSON{
			ID: db.ID(r.ID), OrganisationID: db.ID(r.OrganisationID), Name: r.Name, Description: r.Description,
			Order: r.SortOrder, Permissions: grantNames(PermSet(r.AllowMask), PermSet(r.DenyMask)),
		})
	}
	return out, nil
}

// userIDJSON is all a caller learns of a user it shares no organisation with.
type userIDJSON struct {
	ID db.ID `json:"id"`
}

// revealUser is the one rule for what a route that names a user by id shows
// of them: the user object (userView) when the caller shares an organisation
// with the user, or when known says the route's organisation already showed
// the user to its managers (a member when banned); otherwise only the id, the
// same for a stranger as for an id no account holds, so neither profiles nor
// the existence of ids leak across organisations (docs/security.md).
func (s *Server) revealUser(ctx context.Context, q *db.Queries, userID, viewerID int64, known bool) (any, error) {
	if !known && userID != viewerID {
		shares, err := q.UserSharesOrganisation(ctx, db.UserSharesOrganisationParams{UserID: userID, ViewerID: viewerID})
		if err != nil || !shares {
			return userIDJSON{ID: db.ID(userID)}, err
		}
	}
	u, err := q.UserGet(ctx, userID)
	if db.IsNotFound(err) {
		return userIDJSON{ID: db.ID(userID)}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.userView(ctx, q, u, viewerID)
}

// sharedAccess is the viewer's access in each organisation of a user view,
// resolved in one batch (accessAll) and asked for every permission the
// handler needs.
func sharedAccess(ctx context.Context, q *db.Queries, viewerID int64, v userJSON) ([]Access, error) {
	all, err := accessAll(ctx, q, viewerID)
	if err != nil {
		return nil, err
	}
	out := make([]Access, 0, len(v.Organisations))
	for _, o := range v.Organisations {
		if a, ok := all[int64(o.ID)]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}

func canInAny(accs []Access, p Permission) bool {
	for _, a := range accs {
		if a.Can(p) {
			return true
		}
	}
	return false
}

// withPhone adds target's phone number for the user itself and for a viewer
// who owns or holds MANAGE_ORGANISATION in a shared organisation.
func withPhone(v userJSON, target db.User, viewerID int64, accs []Access) userJSON {
	if target.ID == viewerID || canInAny(accs, ManageOrganisation) {
		v.PhoneNumber = target.PhoneNumber
	}
	return v
}

// meView is the caller's extended user object.
func (s *Server) meView(ctx context.Context, q *db.Queries, u db.User) (userExtendedJSON, error) {
	out := s.extendedUser(u)
	v, err := s.userView(ctx, q, u, u.ID)
	if err != nil {
		return out, err
	}
	out.userJSON = withPhone(v, u, u.ID, nil)
	out.EmailConfirmed, err = primaryVerified(ctx, q, u.ID)
	return out, err
}

func (s *Server) userMe(rq *request) error {
	var out userExtendedJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		var err error
		out, err = s.meView(rq.ctx, q, rq.user)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// userGet shows another user who shares an organisation with the caller. An
// absent user answers like a stranger, so ids cannot be probed.
func (s *Server) userGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out userJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		target, err := q.UserGet(rq.ctx, id)
		if db.IsNotFound(err) {
			return badRequest("The user is not in any organisation you share.")
		} else if err != nil {
			return err
		}
		if out, err = s.userView(rq.ctx, q, target, rq.user.ID); err != nil {
			return err
		}
		if target.ID == rq.user.ID {
			out = withPhone(out, target, rq.user.ID, nil)
			return nil
		}
		if len(out.Organisations) == 0 {
			return badRequest("The user is not in any organisation you share.")
		}
		accs, err := sharedAccess(rq.ctx, q, rq.user.ID, out)
		if err != nil {
			return err
		}
		out = withPhone(out, target, rq.user.ID, accs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// userLookup finds a user by a verified e-mail address, for sharing fleets.
// The target's allow_shares_from decides who may (shareGate, the same rule
// creating a share to a user_id applies).
func (s *Server) userLookup(rq *request) error {
	email := strings.TrimSpace(rq.r.URL.Query().Get("email"))
	if email == "" {
		return fieldError("email", "is required")
	}
	var out userJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		target, err := q.UserGetByVerifiedEmail(rq.ctx, email)
		if db.IsNotFound(err) {
			return notFound("No account has this verified e-mail address.")
		} else if err != nil {
			return err
		}
		if err := shareGate(rq.ctx, q, rq.user.ID, target); err != nil {
			return err
		}
		if out, err = s.userView(rq.ctx, q, target, rq.user.ID); err != nil {
			return err
		}
		accs, err := sharedAccess(rq.ctx, q, rq.user.ID, out)
		if err != nil {
			return err
		}
		out = withPhone(out, target, rq.user.ID, accs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// userLeaveOrganisation removes the caller from an organisation, with their
// roles and personal grants there. Not being a member is already done.
func (s *Server) userLeaveOrganisation(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		org, err := q.OrganisationGet(rq.ctx, orgID)
		if db.IsNotFound(err) {
			return notFound("No such organisation.")
		} else if err != nil {
			return err
		}
		if org.OwnedBy == rq.user.ID {
			return badRequest("The owner cannot leave the organisation; transfer or delete it first.")
		}
		// The same removal as a manager's: membership, roles and grants.
		_, err = removeMember(rq.ctx, q, orgID, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

type deleteMeBody struct {
	EmailToken *string `json:"email_token"`
}

// userDeleteMe deletes the caller's account in two steps: without a token
// it mails one; with it, it deletes. Ownership is checked before membership.
func (s *Server) userDeleteMe(rq *request) error {
	var b deleteMeBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	token := strings.TrimSpace(rq.r.URL.Query().Get("email_token"))
	if token == "" && b.EmailToken != nil {
		token = strings.TrimSpace(*b.EmailToken)
	}
	deleteGuess := guessOf("deletion_token", userAccount(rq.user.ID))
	if token != "" {
		if err := s.allowGuess(rq, deleteGuess); err != nil {
			return err
		}
	}
	deleted, badToken := false, false
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		u, err := q.UserGet(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		if n, err := q.UserOwnedOrganisationCount(rq.ctx, u.ID); err != nil {
			return err
		} else if n > 0 {
			return &Error{Status: http.StatusBadRequest, Code: codeOwnsOrganisation, Message: "You own an organisation; transfer or delete it first."}
		}
		if n, err := q.UserMembershipCount(rq.ctx, u.ID); err != nil {
			return err
		} else if n > 0 {
			return &Error{Status: http.StatusBadRequest, Code: codeStillMember, Message: "You still belong to an organisation; leave it first."}
		}
		now := s.clock()
		if token == "" {
			tok := randomToken(24)
			if err := q.UserTokenPut(rq.ctx, db.UserTokenPutParams{
				UserID: u.ID, Purpose: tokenDelete, TokenHash: hashToken(tok),
				ExpiresAt: db.FormatTime(now.Add(deleteTokenTTL)), CreatedAt: db.FormatTime(now),
			}); err != nil {
				return err
			}
			return s.mailer.send(rq.ctx, q, s.mailConfirmDeletion(u, tok))
		}
		t, err := q.UserTokenGet(rq.ctx, db.UserTokenGetParams{UserID: u.ID, Purpose: tokenDelete})
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		if err != nil || !s.live(t.ExpiresAt) || subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(t.TokenHash)) != 1 {
			badToken = true
			return &Error{Status: http.StatusBadRequest, Code: codeDeletionToken, Message: "The deletion token is invalid or expired."}
		}
		for _, del := range []func(context.Context, int64) error{
			q.UserMembershipClearNotificationEmails, q.UserEmailDeleteForUser, q.RefreshTokenDeleteForUser,
			q.UserIdentityDeleteForUser, q.UserTokenDeleteForUser, q.UserTotpDelete, q.PasswordResetDelete,
		} {
			if err := del(rq.ctx, u.ID); err != nil {
				return err
			}
		}
		deleted = true
		at := db.FormatTime(now)
		return q.UserSoftDelete(rq.ctx, db.UserSoftDeleteParams{DeletedAt: &at, ID: u.ID})
	})
	if badToken {
		s.failedGuess(rq, deleteGuess)
	}
	if err != nil {
		return err
	}
	if deleted {
		return rq.noContent()
	}
	return rq.json(http.StatusAccepted, sentJSON{Sent: true})
}
