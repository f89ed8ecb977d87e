package server

import (
	"context"
	"net/http"

	"workspace/db"
)

// Badge bits.
const (
	BadgeVerified  = 1 << 0
	BadgeSupporter = 1 << 1
	BadgeStaff     = 1 << 31
)

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

func toUser(u db.User) userJSON {
	return userJSON{
		ID: db.ID(u.ID), FirstName: u.FirstName, LastName: u.LastName, Email: u.Email,
		PhoneNumber: u.PhoneNumber, Position: u.Position, Company: u.Company, AvatarHash: u.AvatarHash,
		Roles: []roleJSON{}, Organisations: []orgPartialJSON{}, Badges: u.Badges,
	}
}

func (s *Server) extendedUser(u db.User) userExtendedJSON {
	return userExtendedJSON{
		userJSON: toUser(u), Initials: u.Initials, Language: u.Language, TimezoneCode: u.TimezoneCode,
		AllowConnectionsFrom: u.AllowConnectionsFrom, AllowSharesFrom: u.AllowSharesFrom,
		EmailNotifications: u.EmailNotifications, SmsNotifications: u.SmsNotifications,
		EmailNewsletter: u.EmailNewsletter, PhoneNumberConfirmed: u.PhoneNumberConfirmed,
		Signature: u.Signature, IsBot: u.IsBot,
	}
}

// primaryVerified reports whether the user's sign-in address is verified.
func (s *Server) primaryVerified(ctx context.Context, u db.User) (bool, error) {
	n, err := s.store.R.UserEmailPrimaryVerified(ctx, u.ID)
	return n > 0, err
}

func (s *Server) userMe(rq *request) error {
	out := s.extendedUser(rq.user)
	v, err := s.primaryVerified(rq.ctx, rq.user)
	if err != nil {
		return err
	}
	out.EmailConfirmed = v
	return rq.json(http.StatusOK, out)
}
