package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	// timezone_code is checked against the IANA database; a static binary on
	// a bare host may have no zoneinfo of its own.
	_ "time/tzdata"

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

// sharedAccess is the viewer's access in each organisation of a user view,
// computed once and asked for every permission the handler needs.
func sharedAccess(ctx context.Context, q *db.Queries, viewerID int64, v userJSON) ([]Access, error) {
	out := make([]Access, 0, len(v.Organisations))
	for _, o := range v.Organisations {
		a, err := accessIn(ctx, q, viewerID, int64(o.ID), 0, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
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
		out = withPhone(out, target, rq.user.ID, accs)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// userLookup finds a user by a verified e-mail address, for sharing fleets.
// The target's allow_shares_from decides who may: no one (0x00), holders of
// MANAGE_FLEETS in a mutual organisation (0x01, 0x02), anyone (0xFF).
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
		if target.AllowSharesFrom == 0x00 {
			return forbidden("This user accepts shares from no one.")
		}
		if out, err = s.userView(rq.ctx, q, target, rq.user.ID); err != nil {
			return err
		}
		accs, err := sharedAccess(rq.ctx, q, rq.user.ID, out)
		if err != nil {
			return err
		}
		if target.AllowSharesFrom != 0xFF && !canInAny(accs, ManageFleets) {
			return forbidden("You need MANAGE_FLEETS in an organisation you share with this user.")
		}
		out = withPhone(out, target, rq.user.ID, accs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

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
			// JSON text is always UTF-8; a form part can be any bytes.
			if !utf8.ValidString(v) {
				return p, fieldError(name, "must be UTF-8 text")
			}
			*texts[name] = &v
		case bools[name] != nil:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return p, fieldError(name, "must be true or false")
			}
			*bools[name] = &b
		case ints[name] != nil:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
			if err != nil {
				return p, fieldError(name, "must be an integer")
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

func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errBodyTooLarge
	}
	return badRequest("The multipart body is malformed.")
}

var (
	languageRE = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)
	phoneRE    = regexp.MustCompile(`^\+?[0-9]{5,15}$`)
)

// normalisePhone strips the separators people type; "" clears the number.
func normalisePhone(s string) (string, bool) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '(', ')':
			return -1
		}
		return r
	}, s)
	return s, s == "" || phoneRE.MatchString(s)
}

// validTimezone: a real IANA zone; "" and "Local" load but name no zone.
func validTimezone(tz string) bool {
	if tz == "" || tz == "Local" || len(tz) > 64 {
		return false
	}
	_, err := time.LoadLocation(tz)
	return err == nil
}

// signatureElements are the SVG elements a drawn signature needs. An
// allow-list, not a deny-list: links (<a href="javascript:...">), <use>,
// <image>, <style> and animations that rewrite attributes all run or fetch
// something when the signature is drawn.
var signatureElements = map[string]bool{
	"svg": true, "g": true, "defs": true, "title": true, "desc": true, "path": true, "line": true,
	"polyline": true, "polygon": true, "rect": true, "circle": true, "ellipse": true, "text": true, "tspan": true,
}

// checkSignature: SVG text from <svg to </svg>, well-formed XML, only the
// elements of a drawing, no event handlers or links, since it is drawn in
// reports.
func checkSignature(sig string) error {
	if sig == "" {
		return nil
	}
	if len(sig) > maxSignature {
		return fieldError("signature", "must be at most 512 KiB")
	}
	if !strings.HasPrefix(sig, "<svg") || !strings.HasSuffix(sig, "</svg>") {
		return fieldError("signature", "must be SVG text starting with <svg and ending with </svg>")
	}
	d := xml.NewDecoder(strings.NewReader(sig))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fieldError("signature", "must be well-formed SVG")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !signatureElements[t.Name.Local] {
				return fieldError("signature", "must not contain "+t.Name.Local+" elements")
			}
			for _, a := range t.Attr {
				if n := strings.ToLower(a.Name.Local); strings.HasPrefix(n, "on") || n == "href" {
					return fieldError("signature", "must not contain event handler or link attributes")
				}
			}
		case xml.ProcInst, xml.Directive:
			return fieldError("signature", "must not contain processing instructions or DTDs")
		}
	}
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
		var e *Error
		if err := checkSignature(*p.Signature); errors.As(err, &e) {
			pr.add("signature", e.Fields["signature"])
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

// checkReadOnly refuses a body that sets a read-only field to a value other
// than its current one (sending the object back unchanged is fine).
func checkReadOnly(current any, fields map[string]json.RawMessage) error {
	if len(fields) == 0 {
		return nil
	}
	b, err := json.Marshal(current)
	if err != nil {
		return err
	}
	var cur map[string]any
	if err := json.Unmarshal(b, &cur); err != nil {
		return err
	}
	for name, raw := range fields {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil || !reflect.DeepEqual(v, cur[name]) {
			return fieldError(name, "is read-only")
		}
	}
	return nil
}

// userPatchMe updates the caller's profile from JSON or multipart/form-data.
func (s *Server) userPatchMe(rq *request) error {
	var p userPatch
	mt, _, _ := mime.ParseMediaType(rq.r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		var err error
		if p, err = readMultipartPatch(rq.r); err != nil {
			return err
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

// --- E-mail addresses ---

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
	return s.mailer.send(ctx, q, message{Kind: "email", Recipient: e.Email, Subject: "Verify your e-mail address",
		Body: fmt.Sprintf("Confirm that %s is yours: send this token as email_token in PATCH /users/@me/emails/%d within 24 hours.\nToken: %s\n", e.Email, e.ID, tok)})
}

// userEmailGetOwn loads one of the caller's addresses; others' are 404.
func userEmailGetOwn(ctx context.Context, q *db.Queries, userID, id int64) (db.UserEmail, error) {
	e, err := q.UserEmailGet(ctx, db.UserEmailGetParams{ID: id, UserID: userID})
	if db.IsNotFound(err) {
		return e, notFound("No such e-mail address.")
	}
	return e, err
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
	return rq.json(status, toUserEmail(out))
}

// userEmailResend mails a fresh token; a verified address needs none.
func (s *Server) userEmailResend(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var e db.UserEmail
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if e, err = userEmailGetOwn(rq.ctx, q, rq.user.ID, id); err != nil || e.IsVerified {
			return err
		}
		return s.sendEmailToken(rq.ctx, q, e)
	})
	if err != nil {
		return err
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
		k := db.UserMembershipDeleteParams{OrganisationID: orgID, UserID: rq.user.ID}
		if err := q.UserMemberRolesDelete(rq.ctx, db.UserMemberRolesDeleteParams(k)); err != nil {
			return err
		}
		if err := q.UserGrantsDeleteInOrganisation(rq.ctx, db.UserGrantsDeleteInOrganisationParams(k)); err != nil {
			return err
		}
		return q.UserMembershipDelete(rq.ctx, k)
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
	deleted := false
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
			return s.mailer.send(rq.ctx, q, message{Kind: "email", Recipient: u.Email, Subject: "Confirm account deletion",
				Body: fmt.Sprintf("To delete your account, send this token as email_token in DELETE /users/@me within 24 hours.\nToken: %s\n", tok)})
		}
		t, err := q.UserTokenGet(rq.ctx, db.UserTokenGetParams{UserID: u.ID, Purpose: tokenDelete})
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		if err != nil || !s.live(t.ExpiresAt) || subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(t.TokenHash)) != 1 {
			return &Error{Status: http.StatusBadRequest, Code: codeDeletionToken, Message: "The deletion token is invalid or expired."}
		}
		for _, del := range []func(context.Context, int64) error{
			q.UserMembershipClearNotificationEmails, q.UserEmailDeleteForUser, q.RefreshTokenDeleteForUser,
			q.UserIdentityDeleteForUser, q.UserTokenDeleteForUser, q.UserTotpDelete,
		} {
			if err := del(rq.ctx, u.ID); err != nil {
				return err
			}
		}
		deleted = true
		at := db.FormatTime(now)
		return q.UserSoftDelete(rq.ctx, db.UserSoftDeleteParams{DeletedAt: &at, ID: u.ID})
	})
	if err != nil {
		return err
	}
	if deleted {
		return rq.noContent()
	}
	return rq.json(http.StatusAccepted, sentJSON{Sent: true})
}

// --- QR / TOTP ---

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

// --- Rows whose objects belong to areas not built yet ---
//
// Document shares, work items, fleets and their shares and subscriptions,
// toolboxes, witness records and inductions: the areas that own those
// tables will fill these in. Until then no such object exists, so lists are
// empty and lookups by id are 404, after the rows' own input checks.

func (s *Server) userEmptyList(rq *request) error { return rq.json(http.StatusOK, []struct{}{}) }

var workItemFilterFields = db.FilterFields{}

var workItemIDFilters = []string{"organisation", "type", "work_item", "document", "fleet", "asset_group", "project", "status", "location"}

// userWorkItems checks the row's filters and paging, then lists nothing.
func (s *Server) userWorkItems(rq *request) error {
	qv := rq.r.URL.Query()
	p := problems{}
	for _, name := range workItemIDFilters {
		if v, ok := qv[name]; ok {
			if _, ok := db.ParseID(v[0]); !ok {
				p.add(name, "must be a snowflake id")
			}
		}
	}
	if v, ok := qv["include_assets"]; ok {
		if _, err := strconv.ParseBool(v[0]); err != nil {
			p.add("include_assets", "must be true or false")
		}
	}
	for _, name := range []string{"start_date", "finish_date"} {
		if v, ok := qv[name]; ok && !validDate(v[0]) {
			p.add(name, "must be an ISO 8601 date or date-time")
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	// No work item field is filterable until the work items area defines
	// them: a $filter naming any field is a 400 that says so.
	if _, err := parseListQuery(rq.r, workItemFilterFields); err != nil {
		return err
	}
	rq.w.Header().Set("X-Total-Count", "0")
	rq.w.Header().Set("X-Status-Count", "{}")
	return rq.json(http.StatusOK, []struct{}{})
}

func validDate(s string) bool {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

func (s *Server) userFleetSubscriptions(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such fleet.")
}

func (s *Server) userWorkItemSubscriptions(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such work item.")
}

func (s *Server) userToolboxGet(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such toolbox.")
}

// signerBody is the signer's details on the toolbox and witness sign rows.
type signerBody struct {
	JWT         *string `json:"jwt"`
	ScheduleID  *db.ID  `json:"schedule_id"`
	FirstName   *string `json:"first_name"`
	LastName    *string `json:"last_name"`
	Company     *string `json:"company"`
	Position    *string `json:"position"`
	PhoneNumber *string `json:"phone_number"`
}

func (b signerBody) validate(jwtRequired bool) error {
	p := problems{}
	if (b.JWT == nil || strings.TrimSpace(*b.JWT) == "") && jwtRequired {
		p.add("jwt", "is required")
	}
	for name, v := range map[string]*string{"first_name": b.FirstName, "last_name": b.LastName} {
		if v != nil {
			p.length(name, *v, 0, 100)
		}
	}
	for name, v := range map[string]*string{"company": b.Company, "position": b.Position} {
		if v != nil {
			p.length(name, *v, 0, 200)
		}
	}
	if b.PhoneNumber != nil {
		if _, ok := normalisePhone(*b.PhoneNumber); !ok {
			p.add("phone_number", "must be a phone number of 5-15 digits, optionally starting with +")
		}
	}
	return p.err()
}

func (s *Server) userToolboxSign(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	var b signerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(b.ScheduleID == nil); err != nil {
		return err
	}
	return notFound("No such toolbox.")
}

func (s *Server) userWitnessGet(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	if strings.TrimSpace(rq.r.URL.Query().Get("token")) == "" {
		return fieldError("token", "is required")
	}
	return notFound("No such document revision or work item.")
}

func (s *Server) userWitnessSign(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	var b signerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	return notFound("No such document revision or work item.")
}

func (s *Server) userInductionGet(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such induction assigned to you.")
}
