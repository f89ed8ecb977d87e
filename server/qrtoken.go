package server

import (
	"context"
	"encoding/base32"
	"net/http"
	"strings"

	"workspace/db"
)

type qrTokenBody struct {
	Token *string `json:"token"`
}

type qrTokenJSON struct {
	ExpiresAt string `json:"expires_at"`
}

// normaliseTOTPSecret accepts a base32 secret as apps show it (any case,
// spaces, optional padding) and returns it canonical, or false.
func normaliseTOTPSecret(s string) (string, bool) {
	s = strings.ToUpper(strings.Join(strings.Fields(s), ""))
	s = strings.TrimRight(s, "=")
	if len(s) < 16 || len(s) > 128 {
		return "", false
	}
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s)
	return s, err == nil && len(b) >= 10
}

// userQRToken registers (or replaces) the caller's TOTP secret for 24 hours,
// sweeping everyone's expired secrets on the way.
func (s *Server) userQRToken(rq *request) error {
	var b qrTokenBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if b.Token == nil || strings.TrimSpace(*b.Token) == "" {
		return fieldError("token", "is required")
	}
	secret, ok := normaliseTOTPSecret(*b.Token)
	if !ok {
		return fieldError("token", "must be a base32 TOTP secret of 16-128 characters")
	}
	now := s.clock()
	exp := db.FormatTime(now.Add(totpTTL))
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if err := q.UserTotpDeleteExpired(rq.ctx, db.FormatTime(now)); err != nil {
			return err
		}
		return q.UserTotpPut(rq.ctx, db.UserTotpPutParams{UserID: rq.user.ID, Secret: secret, CreatedAt: db.FormatTime(now), ExpiresAt: exp})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, qrTokenJSON{ExpiresAt: exp})
}

// liveTOTPSecret is the user's registered TOTP secret, for the signing
// flows; ok is false when there is none. An expired secret counts as absent
// and is deleted: the caller's transaction must commit for that, so absence
// is not an error.
func (s *Server) liveTOTPSecret(ctx context.Context, q *db.Queries, userID int64) (secret string, ok bool, err error) {
	t, err := q.UserTotpGet(ctx, userID)
	if db.IsNotFound(err) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	if !s.live(t.ExpiresAt) {
		return "", false, q.UserTotpDelete(ctx, userID)
	}
	return t.Secret, true, nil
}

func (s *Server) userQRScan(rq *request) error {
	return errorf(http.StatusNotImplemented, "Scanning QR codes is not implemented.")
}
