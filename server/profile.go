package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	// timezone_code is checked against the IANA database; a static binary on
	// a bare host may have no zoneinfo of its own.
	_ "time/tzdata"

	"workspace/db"
)

// userPatch is a validated PATCH /users/@me, from JSON or multipart.
type userPatch struct {
	FirstName, LastName, Company, Position        *string
	PhoneNumber, PhoneNumberToken                 *string
	TimezoneCode, Language, Signature, Initials   *string
	EmailNotifications, SMSNotifications, Letters *bool
	AllowConnectionsFrom, AllowSharesFrom         *int64
	avatar                                        *avatarFile
	clearAvatar                                   bool
	readOnly                                      map[string]json.RawMessage // JSON only
}

// userPatchJSON is the JSON body. The extended object's own names for the
// notification flags are accepted as aliases of the enable_* names.
type userPatchJSON struct {
	FirstName                *string              `json:"first_name"`
	LastName                 *string              `json:"last_name"`
	Company                  *string              `json:"company"`
	Position                 *string              `json:"position"`
	PhoneNumber              *string              `json:"phone_number"`
	PhoneNumberToken         *string              `json:"phone_number_token"`
	TimezoneCode             *string              `json:"timezone_code"`
	Language                 *string              `json:"language"`
	Signature                *string              `json:"signature"`
	Initials                 *string              `json:"initials"`
	EnableEmailNotifications *bool                `json:"enable_email_notifications"`
	EnableSMSNotifications   *bool                `json:"enable_sms_notifications"`
	EnableEmailNewsletter    *bool                `json:"enable_email_newsletter"`
	EmailNotifications       *bool                `json:"email_notifications"`
	SMSNotifications         *bool                `json:"sms_notifications"`
	EmailNewsletter          *bool                `json:"email_newsletter"`
	AllowConnectionsFrom     *int64               `json:"allow_connections_from"`
	AllowSharesFrom          *int64               `json:"allow_shares_from"`
	Avatar                   Opt[json.RawMessage] `json:"avatar"`
	ID                       json.RawMessage      `json:"id"`
	Email                    json.RawMessage      `json:"email"`
	AvatarHash               json.RawMessage      `json:"avatar_hash"`
	Badges                   json.RawMessage      `json:"badges"`
	Roles                    json.RawMessage      `json:"roles"`
	Organisations            json.RawMessage      `json:"organisations"`
	EmailConfirmed           json.RawMessage      `json:"email_confirmed"`
	PhoneNumberConfirmed     json.RawMessage      `json:"phone_number_confirmed"`
	TotpToken                json.RawMessage      `json:"totp_token"`
	IsBot                    json.RawMessage      `json:"is_bot"`
}

// userReadOnly are the user object fields PATCH cannot change.
var userReadOnly = []string{"id", "email", "avatar_hash", "badges", "roles", "organisations",
	"email_confirmed", "phone_number_confirmed", "totp_token", "is_bot"}

func firstBool(a, b *bool) *bool {
	if a != nil {
		return a
	}
	return b
}

func (b userPatchJSON) patch() (userPatch, error) {
	p := userPatch{
		FirstName: b.FirstName, LastName: b.LastName, Company: b.Company, Position: b.Position,
		PhoneNumber: b.PhoneNumber, PhoneNumberToken: b.PhoneNumberToken, TimezoneCode: b.TimezoneCode,
		Language: b.Language, Signature: b.Signature, Initials: b.Initials,
		EmailNotifications:   firstBool(b.EnableEmailNotifications, b.EmailNotifications),
		SMSNotifications:     firstBool(b.EnableSMSNotifications, b.SMSNotifications),
		Letters:              firstBool(b.EnableEmailNewsletter, b.EmailNewsletter),
		AllowConnectionsFrom: b.AllowConnectionsFrom, AllowSharesFrom: b.AllowSharesFrom,
		readOnly: map[string]json.RawMessage{},
	}
	if b.Avatar.Set {
		if !b.Avatar.Null {
			return p, fieldError("avatar", "must be uploaded as a file with multipart/form-data, or null to remove it")
		}
		p.clearAvatar = true
	}
	for i, raw := range []json.RawMessage{b.ID, b.Email, b.AvatarHash, b.Badges, b.Roles, b.Organisations,
		b.EmailConfirmed, b.PhoneNumberConfirmed, b.TotpToken, b.IsBot} {
		if raw != nil {
			p.readOnly[userReadOnly[i]] = raw
		}
	}
	return p, nil
}

// readMultipartPatch reads a multipart/form-data PATCH: text fields by name
// and the avatar file, each bounded; unknown parts are skipped.
func readMultipartPatch(r *http.Request) (userPatch, error) {
	var p userPatch
	mr, err := r.MultipartReader()
	if err != nil {
		return p, badRequest("The multipart body is malformed.")
	}
	seen := map[string]bool{}
	texts := map[string]**string{
		"first_name": &p.FirstName, "last_name": &p.LastName, "company": &p.Company, "position": &p.Position,
		"phone_number": &p.PhoneNumber, "phone_number_token": &p.PhoneNumberToken,
		"timezone_code": &p.TimezoneCode, "language": &p.Language, "signature": &p.Signature, "initials": &p.Initials,
	}
	bools := map[string]**bool{
		"enable_email_notifications": &p.EmailNotifications, "enable_sms_notifications": &p.SMSNotifications,
		"enable_email_newsletter": &p.Letters,
	}
	ints := map[string]**int64{"allow_connections_from": &p.AllowConnectionsFrom, "allow_shares_from": &p.AllowSharesFrom}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, multipartError(err)
		}
		name := part.FormName()
		if name == "" {
			continue
		}
		if seen[name] {
			return p, fieldError(name, "is given more than once")
		}
		seen[name] = true
		limit := int64(maxFormField)
		if name == "avatar" {
			limit = avatarMaxBytes
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return p, multipartError(err)
		}
		if int64(len(data)) > limit {
			if name == "avatar" {
				return p, fieldError("avatar", "must be at most 10 MiB")
			}
			return p, fieldError(name, "is too long")
		}
		v := string(data)
		switch {
		case name == "avatar":
			if len(data) == 0 {
				return p, fieldError("avatar", "must be a JPEG or PNG image")
			}
			a, err := checkAvatar(data)
			if err != nil {
				return p, err
			}
			p.avatar = &a
		case texts[name] != nil:
			// The same text rule as JSON bodies (texthygiene.go).
			if problem := textProblem(v); problem != "" {
				return p, fieldError(name, problem)
			}
			*texts[name] = &v
		case bools[name] != nil:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return p, fieldError(name, "must be true or false")
			}
			*bools[name] = &b
		case ints[name] != nil:
			n, ok := formAllowFrom(v)
			if !ok {
				return p, fieldError(name, "must be 0, 1, 2 or 255")
			}
			*ints[name] = &n
		case isUserReadOnly(name):
			return p, fieldError(name, "is read-only")
		}
	}
	return p, nil
}

func isUserReadOnly(name string) bool {
	for _, n := range userReadOnly {
		if n == name {
			return true
		}
	}
	return false
}

var (
	languageRE = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)
	phoneRE    = regexp.MustCompile(`^\+?[0-9]{5,15}$`)
)

// maxPhoneText bounds a phone number as typed, separators included (15
// digits and a + leave room for generous spacing; docs/users.md).
const maxPhoneText = 32

// normalisePhone strips the separators people type; "" clears the number.
func normalisePhone(s string) (string, bool) {
	if len(s) > maxPhoneText {
		return s, false
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '(', ')':
			return -1
		}
		return r
	}, s)
	return s, s == "" || phoneRE.MatchString(s)
}

// validate checks every field and normalises text.
func (p *userPatch) validate() error {
	pr := problems{}
	trim := func(v *string) {
		if v != nil {
			*v = strings.TrimSpace(*v)
		}
	}
	for _, v := range []*string{p.FirstName, p.LastName, p.Company, p.Position, p.TimezoneCode, p.Language, p.Initials, p.Signature} {
		trim(v)
	}
	if p.FirstName != nil {
		pr.length("first_name", *p.FirstName, 0, 100)
	}
	if p.LastName != nil {
		pr.length("last_name", *p.LastName, 0, 100)
	}
	if p.Company != nil {
		pr.length("company", *p.Company, 0, 200)
	}
	if p.Position != nil {
		pr.length("position", *p.Position, 0, 200)
	}
	if p.Initials != nil {
		pr.length("initials", *p.Initials, 0, 6)
	}
	if p.PhoneNumber != nil {
		n, ok := normalisePhone(*p.PhoneNumber)
		if !ok {
			pr.add("phone_number", "must be a phone number of 5-15 digits, optionally starting with +")
		}
		p.PhoneNumber = &n
	}
	if p.PhoneNumberToken != nil && strings.TrimSpace(*p.PhoneNumberToken) == "" {
		pr.add("phone_number_token", "must not be empty")
	}
	if p.TimezoneCode != nil && !validTimezone(*p.TimezoneCode) {
		pr.add("timezone_code", "must be an IANA time zone such as Europe/London")
	}
	if p.Language != nil && (len(*p.Language) > 35 || !languageRE.MatchString(*p.Language)) {
		pr.add("language", "must be a language tag such as en or en-GB")
	}
	if p.Signature != nil {
		// What is stored is the re-serialised drawing, never the input.
		clean, err := sanitizeSignature(*p.Signature)
		var e *Error
		if errors.As(err, &e) {
			pr.add("signature", e.Fields["signature"])
		} else {
			*p.Signature = clean
		}
	}
	if p.AllowConnectionsFrom != nil && !allowFromValues[*p.AllowConnectionsFrom] {
		pr.add("allow_connections_from", "must be 0, 1, 2 or 255")
	}
	if p.AllowSharesFrom != nil && !allowFromValues[*p.AllowSharesFrom] {
		pr.add("allow_shares_from", "must be 0, 1, 2 or 255")
	}
	return pr.err()
}

// userPatchMe updates the caller's profile from JSON or multipart/form-data.
func (s *Server) userPatchMe(rq *request) error {
	var p userPatch
	mt, _, _ := mime.ParseMediaType(rq.r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		var err error
		if p, err = readMultipartPatch(rq.r); err != nil {
			return busy(rq, err)
		}
	} else {
		var b userPatchJSON
		if err := rq.decode(&b); err != nil {
			return err
		}
		var err error
		if p, err = b.patch(); err != nil {
			return err
		}
	}
	if err := p.validate(); err != nil {
		return err
	}
	phoneGuess := guessOf("phone_code", userAccount(rq.user.ID))
	if p.PhoneNumberToken != nil {
		if err := s.allowGuess(rq, phoneGuess); err != nil {
			return err
		}
	}
	now := s.nowText()
	var out userExtendedJSON
	badCode := false
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		u, err := q.UserGet(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		if len(p.readOnly) > 0 {
			cur, err := s.meView(rq.ctx, q, u)
			if err != nil {
				return err
			}
			if err := checkReadOnly(cur, p.readOnly); err != nil {
				return err
			}
		}
		a := db.UserUpdateProfileParams{
			FirstName: u.FirstName, LastName: u.LastName, Company: u.Company, Position: u.Position,
			PhoneNumber: u.PhoneNumber, PhoneNumberConfirmed: u.PhoneNumberConfirmed, TimezoneCode: u.TimezoneCode,
			Language: u.Language, Initials: u.Initials, Signature: u.Signature, AvatarHash: u.AvatarHash,
			EmailNotifications: u.EmailNotifications, SmsNotifications: u.SmsNotifications,
			EmailNewsletter: u.EmailNewsletter, AllowConnectionsFrom: u.AllowConnectionsFrom,
			AllowSharesFrom: u.AllowSharesFrom, UpdatedAt: now, ID: u.ID,
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&a.FirstName, p.FirstName)
		set(&a.LastName, p.LastName)
		set(&a.Company, p.Company)
		set(&a.Position, p.Position)
		set(&a.TimezoneCode, p.TimezoneCode)
		set(&a.Language, p.Language)
		set(&a.Initials, p.Initials)
		set(&a.Signature, p.Signature)
		if p.EmailNotifications != nil {
			a.EmailNotifications = *p.EmailNotifications
		}
		if p.SMSNotifications != nil {
			a.SmsNotifications = *p.SMSNotifications
		}
		if p.Letters != nil {
			a.EmailNewsletter = *p.Letters
		}
		if p.AllowConnectionsFrom != nil {
			a.AllowConnectionsFrom = *p.AllowConnectionsFrom
		}
		if p.AllowSharesFrom != nil {
			a.AllowSharesFrom = *p.AllowSharesFrom
		}
		if p.PhoneNumber != nil && *p.PhoneNumber != u.PhoneNumber {
			// A new number is unconfirmed, and a code sent to the old one
			// must not confirm it.
			a.PhoneNumber, a.PhoneNumberConfirmed = *p.PhoneNumber, false
			if err := q.UserTokenDelete(rq.ctx, db.UserTokenDeleteParams{UserID: u.ID, Purpose: tokenPhone}); err != nil {
				return err
			}
		}
		if p.clearAvatar {
			a.AvatarHash = nil
		}
		if p.avatar != nil {
			if err := q.UserAvatarBlobPut(rq.ctx, db.UserAvatarBlobPutParams{
				Hash: p.avatar.hash, ContentType: p.avatar.contentType, Size: int64(len(p.avatar.data)),
				Data: p.avatar.data, CreatedAt: now,
			}); err != nil {
				return err
			}
			a.AvatarHash = &p.avatar.hash
		}
		u, err = q.UserUpdateProfile(rq.ctx, a)
		if err != nil {
			return err
		}
		if p.PhoneNumberToken != nil && !u.PhoneNumberConfirmed {
			ok, err := s.checkPhoneCode(rq.ctx, q, u, strings.TrimSpace(*p.PhoneNumberToken))
			if err != nil {
				return err
			}
			if !ok {
				badCode = true
				return fieldError("phone_number_token", "is invalid or expired; request a new code")
			}
			if err := q.UserPhoneConfirm(rq.ctx, db.UserPhoneConfirmParams{UpdatedAt: now, ID: u.ID, PhoneNumber: u.PhoneNumber}); err != nil {
				return err
			}
			if err := q.UserTokenDelete(rq.ctx, db.UserTokenDeleteParams{UserID: u.ID, Purpose: tokenPhone}); err != nil {
				return err
			}
			u.PhoneNumberConfirmed = true
		}
		out, err = s.meView(rq.ctx, q, u)
		return err
	})
	if badCode {
		s.failedGuess(rq, phoneGuess)
		// Count the failed guess outside the refused change, so codes cannot
		// be guessed without limit.
		if aerr := s.store.InTx(rq.ctx, func(q *db.Queries) error {
			return q.UserTokenAttempt(rq.ctx, db.UserTokenAttemptParams{UserID: rq.user.ID, Purpose: tokenPhone})
		}); aerr != nil {
			return aerr
		}
	}
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// checkPhoneCode reports whether code is the live SMS code for the user's
// current number.
func (s *Server) checkPhoneCode(ctx context.Context, q *db.Queries, u db.User, code string) (bool, error) {
	t, err := q.UserTokenGet(ctx, db.UserTokenGetParams{UserID: u.ID, Purpose: tokenPhone})
	if db.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return t.Subject == u.PhoneNumber && t.Attempts < phoneCodeTries && s.live(t.ExpiresAt) &&
		subtle.ConstantTimeCompare([]byte(hashToken(code)), []byte(t.TokenHash)) == 1, nil
}

// live reports whether a stored expiry time is still ahead.
func (s *Server) live(expiresAt string) bool {
	t, err := db.ParseTime(expiresAt)
	return err == nil && s.clock().Before(t)
}

type sentJSON struct {
	Sent bool `json:"sent"`
}

// userVerifyPhone texts a code for the current number.
func (s *Server) userVerifyPhone(rq *request) error {
	var sent bool
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		u, err := q.UserGet(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		if u.PhoneNumber == "" {
			return fieldError("phone_number", "add a phone number first")
		}
		if u.PhoneNumberConfirmed {
			return nil
		}
		code, err := phoneCode()
		if err != nil {
			return err
		}
		now := s.clock()
		if err := q.UserTokenPut(rq.ctx, db.UserTokenPutParams{
			UserID: u.ID, Purpose: tokenPhone, TokenHash: hashToken(code), Subject: u.PhoneNumber,
			ExpiresAt: db.FormatTime(now.Add(phoneCodeTTL)), CreatedAt: db.FormatTime(now),
		}); err != nil {
			return err
		}
		sent = true
		return s.mailer.send(rq.ctx, q, message{Kind: "sms", Recipient: u.PhoneNumber, Subject: "Phone number code",
			Body: fmt.Sprintf("Your workspace code is valid for 15 minutes.\nCode: %s\n", code)})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, sentJSON{Sent: sent})
}

// phoneCode is a random 6-digit code.
func phoneCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// formAllowFrom reads an allow-from form part: exactly one of the four
// choices as openapi.yaml's enum writes it (a form is filled by a person's
// browser, which sends the choice's own text; no spaces, no "0x2").
func formAllowFrom(v string) (int64, bool) {
	switch v {
	case "0", "1", "2", "255":
		n, _ := strconv.ParseInt(v, 10, 64)
		return n, true
	}
	return 0, false
}
