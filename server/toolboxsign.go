package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"workspace/db"
)

// Signing a toolbox (spec: POST /toolboxes/{id}/sign and the user's
// /users/@me/toolboxes rows; decisions.md, Signing flows). Decisions in
// docs/toolboxes.md.

const (
	signTokenType = "sign+jwt"
	signTokenTTL  = 30 * time.Minute
	qrScanWindow  = 24 * time.Hour
	totpPeriod    = 30

	methodDeclaration = "declaration"
	methodSignature   = "signature"
	methodToolboxQR   = "toolbox_qr"
	methodUserQR      = "user_qr"
	methodApp         = "app"

	codeSigned           = "toolbox_signed"
	codeConfirmDetails   = "confirm_details"
	codeMissingDecl      = "missing_declaration"
	codeUserNotInvited   = "user_not_invited"
	codeUserNotCheckedIn = "user_not_checked_in"
	codeInductionNeeded  = "induction_required"
)

// signerBody is the signer's details on the user's toolbox and witness sign rows.
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
	validateDetails(p, b.FirstName, b.LastName, b.Company, b.Position, b.PhoneNumber, nil)
	return p.err()
}

// validateDetails checks a signer's captured details: names up to 100,
// company and position up to 200, a phone number, an e-mail address.
func validateDetails(p problems, first, last, company, position, phone, email *string) {
	for name, v := range map[string]*string{"first_name": first, "last_name": last} {
		if v != nil {
			p.length(name, *v, 0, 100)
		}
	}
	for name, v := range map[string]*string{"company": company, "position": position} {
		if v != nil {
			p.length(name, *v, 0, 200)
		}
	}
	if phone != nil && *phone != "" {
		if _, ok := normalisePhone(*phone); !ok {
			p.add("phone_number", "must be a phone number of 5-15 digits, optionally starting with +")
		}
	}
	if email != nil && *email != "" && !validEmail(*email) {
		p.add("email", "must be an e-mail address")
	}
}

// signResponse is the spec's toolbox user response. A refusal carries the
// same shape with status 400 (and errors naming fields where there are any).
type signResponse struct {
	ResponseCode string            `json:"response_code"`
	Message      string            `json:"message"`
	ToolboxID    *db.ID            `json:"toolbox_id"`
	ScheduleID   *db.ID            `json:"schedule_id"`
	UserID       *db.ID            `json:"user_id"`
	Email        *string           `json:"email"`
	PhoneNumber  *string           `json:"phone_number"`
	FirstName    string            `json:"first_name"`
	LastName     string            `json:"last_name"`
	Company      *string           `json:"company"`
	Position     *string           `json:"position"`
	SignedAt     *string           `json:"signed_at"`
	SignedMethod *string           `json:"signed_method"`
	Errors       map[string]string `json:"errors,omitempty"`
	// RecordedBy names who recorded a signature that is not the signer's
	// own (docs/toolboxes.md); absent on the signer's own and on refusals.
	RecordedBy *userJSON `json:"recorded_by,omitempty"`
}

// signRefusal ends a sign transaction (rolling back anything it did, such
// as spending a QR code) with a toolbox user response and a status.
type signRefusal struct {
	status int
	body   signResponse
}

func (r *signRefusal) Error() string { return r.body.ResponseCode }

// refusalBody is a refusal as the error body ({code, message, errors}) that
// also carries the toolbox user response's fields.
type refusalBody struct {
	Code int `json:"code"`
	signResponse
}

// signer is who signs and with what details.
type signer struct {
	userID                             *int64
	first, last, email, company, posit string
	phone                              *string
	signature                          *string
}

func (sg signer) response(code, message string, toolboxID int64, scheduleID *int64) signResponse {
	r := signResponse{ResponseCode: code, Message: message, ToolboxID: optID(&toolboxID), ScheduleID: optID(scheduleID),
		UserID: optID(sg.userID), FirstName: sg.first, LastName: sg.last, PhoneNumber: sg.phone}
	if sg.email != "" {
		r.Email = &sg.email
	}
	if sg.company != "" {
		r.Company = &sg.company
	}
	if sg.posit != "" {
		r.Position = &sg.posit
	}
	return r
}

// fromUser fills the signer from a user's profile; the profile's phone
// number only when confirmed.
func signerFromUser(u db.User) signer {
	sg := signer{userID: &u.ID, first: u.FirstName, last: u.LastName, email: u.Email, company: u.Company, posit: u.Position}
	if u.PhoneNumberConfirmed && u.PhoneNumber != "" {
		phone := u.PhoneNumber
		sg.phone = &phone
	}
	if u.Signature != "" {
		sig := u.Signature
		sg.signature = &sig
	}
	return sg
}

// override writes details given in the request over the signer's.
func (sg *signer) override(first, last, company, position *string) {
	for _, f := range []struct {
		v   *string
		dst *string
	}{{first, &sg.first}, {last, &sg.last}, {company, &sg.company}, {position, &sg.posit}} {
		if f.v != nil {
			*f.dst = strings.TrimSpace(*f.v)
		}
	}
}

// onlyConfirmedPhone accepts a phone number in a signer's own request only
// when it is their confirmed one (the spec's user sign rows).
func (sg signer) onlyConfirmedPhone(given *string) error {
	if given == nil || *given == "" {
		return nil
	}
	if n, _ := normalisePhone(*given); sg.phone == nil || *sg.phone != n {
		return fieldError("phone_number", "must be your confirmed phone number")
	}
	return nil
}

func (sg signer) missingDetails() bool { return sg.first == "" || sg.last == "" }

// signToken is a 30-minute proof that a user may sign one object, and how
// they came by it (the signed method it records).
type signClaims struct {
	jwt.RegisteredClaims
	Object string `json:"obj"`
	Method string `json:"mth"`
}

func signObject(kind string, id int64) string { return kind + ":" + db.ID(id).String() }

func (s *Server) issueSignToken(userID int64, object, method string) (string, error) {
	now := s.now()
	return s.auth.sign(signClaims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: s.auth.issuer, Subject: db.ID(userID).String(),
			Audience: jwt.ClaimStrings{s.auth.audience}, ExpiresAt: jwt.NewNumericDate(now.Add(signTokenTTL)),
			IssuedAt: jwt.NewNumericDate(now), ID: randomToken(16)},
		Object: object, Method: method,
	}, signTokenType)
}

// checkSignToken verifies a signing token for this user and object; any
// mismatch or expiry is a 404 (the spec's rows).
func (s *Server) checkSignToken(raw string, userID int64, object string) (signClaims, error) {
	var c signClaims
	_, err := s.auth.parser.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		if typ, _ := t.Header["typ"].(string); typ != signTokenType {
			return nil, errors.New("not a signing token")
		}
		return s.auth.publicKey(t)
	})
	if err != nil || c.Issuer != s.auth.issuer || c.Subject != db.ID(userID).String() || c.Object != object ||
		!slices.Contains(c.Audience, s.auth.audience) {
		return c, notFound("The signing token is invalid, expired or for another object.")
	}
	return c, nil
}

// totpStep finds the time step at which code is valid for secret around at
// (one step of skew), or false.
func totpStep(secret, code string, at time.Time) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	for _, skew := range []int64{0, -1, 1} {
		t := at.Add(time.Duration(skew*totpPeriod) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / totpPeriod, true
		}
	}
	return 0, false
}

// spendCode accepts a code once: key names the secret's owner (and, for a
// toolbox's code shown to a room, the user), step the time step. False when
// it was used before.
func (s *Server) spendCode(ctx context.Context, q *db.Queries, key string, step int64) (bool, error) {
	now := s.now()
	if err := q.SigningCodeSweep(ctx, db.FormatTime(now.Add(-qrScanWindow-time.Hour))); err != nil {
		return false, err
	}
	n, err := q.SigningCodeUse(ctx, db.SigningCodeUseParams{Key: key + ":" + strconv.FormatInt(step, 10), UsedAt: db.FormatTime(now)})
	return n == 1, err
}

var totpGuess = guessOf("totp", "")

// userToolboxView is the toolbox as a signer sees it: its content and the
// caller's own signature and schedules, never other signers' details.
type userToolboxView struct {
	toolboxJSON
	Signed bool `json:"signed"`
}

// userToolboxGet opens a toolbox for signing: with no token the caller must
// be invited to one of its schedules; a token is the toolbox's current code
// (scanned from the meeting's screen: signed method toolbox_qr) or the
// caller's own code (their organisation's toolboxes only: method app).
func (s *Server) userToolboxGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	token := strings.TrimSpace(rq.r.URL.Query().Get("token"))
	g := guessOf("totp", userAccount(rq.user.ID))
	if token != "" {
		if err := s.allowGuess(rq, g); err != nil {
			return err
		}
	}
	var out userToolboxView
	badCode := false
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := q.ToolboxGet(rq.ctx, id)
		if db.IsNotFound(err) {
			return notFound("The toolbox does not exist.")
		} else if err != nil {
			return err
		}
		invited, err := q.ScheduleInvitedToToolbox(rq.ctx, db.ScheduleInvitedToToolboxParams{ToolboxID: &t.ID, UserID: rq.user.ID})
		if err != nil {
			return err
		}
		method := methodApp
		if token == "" && !invited {
			return badRequest("You are not invited to this toolbox: scan its QR code or give your TOTP code as token.")
		}
		if token != "" {
			var ok bool
			if method, ok, err = s.toolboxCode(rq, q, t, token, invited); err != nil {
				return err
			}
			if !ok {
				badCode = true
				return notFound("The toolbox does not exist or the code is not valid.")
			}
		}
		if out.SignToken, err = s.issueSignToken(rq.user.ID, signObject("toolbox", t.ID), method); err != nil {
			return err
		}
		view, err := s.signerToolboxView(rq.ctx, q, t, rq.user.ID)
		if err != nil {
			return err
		}
		view.SignToken = out.SignToken
		out = view
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

// toolboxCode checks a token given to open a toolbox: the toolbox's own
// current code (once per user) gives toolbox_qr; the caller's own code
// (once) gives app, for a member of the toolbox's organisation or an invitee.
func (s *Server) toolboxCode(rq *request, q *db.Queries, t db.Toolbox, token string, invited bool) (string, bool, error) {
	now := s.now()
	if step, ok := totpStep(t.TotpSecret, token, now); ok {
		fresh, err := s.spendCode(rq.ctx, q, "t:"+db.ID(t.ID).String()+":"+db.ID(rq.user.ID).String(), step)
		return methodToolboxQR, fresh, err
	}
	secret, live, err := s.liveTOTPSecret(rq.ctx, q, rq.user.ID)
	if err != nil || !live {
		return "", false, err
	}
	step, ok := totpStep(secret, token, now)
	if !ok {
		return "", false, nil
	}
	if !invited {
		if _, err := orgAccess(rq, q, t.OrganisationID, http.StatusNotFound, 0); err != nil {
			return "", false, nil
		}
	}
	fresh, err := s.spendCode(rq.ctx, q, "u:"+db.ID(rq.user.ID).String(), step)
	return methodApp, fresh, err
}

// runsMeeting says whether the caller runs the toolbox's meeting, its
// conductor (docs/toolboxes.md): the member who created the toolbox, the
// member who conducted it, or a member with MANAGE_TEAMS (who runs the
// schedules that invite people to meetings). Only they get the meeting
// screen's secret and record signatures for other people.
func runsMeeting(t db.Toolbox, a Access) bool {
	if !a.IsMember() {
		return false
	}
	return t.CreatedBy == a.UserID || (t.ConductedBy != nil && *t.ConductedBy == a.UserID) || a.Can(ManageTeams)
}

// recordedBy is who recorded a signature for its signer, or nil when the
// signature is the signer's own: made by themself (the app, the toolbox's
// code, their own row) or with their one-time QR code scanned.
func recordedBy(u db.ToolboxUser) *int64 {
	if u.SignedBy == nil || u.SignedMethod == methodUserQR || (u.UserID != nil && *u.UserID == *u.SignedBy) {
		return nil
	}
	return u.SignedBy
}

// outsiderPeople is the people of a toolbox as a signer from outside its
// organisation sees them: names only, none of another organisation's
// addresses, phone numbers, roles or memberships.
func outsiderPeople(people map[int64]userJSON) map[int64]userJSON {
	out := make(map[int64]userJSON, len(people))
	for id, u := range people {
		out[id] = userJSON{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, Roles: []roleJSON{}, Organisations: []orgPartialJSON{}}
	}
	return out
}

func (s *Server) signerToolboxView(ctx context.Context, q *db.Queries, t db.Toolbox, userID int64) (userToolboxView, error) {
	p, err := loadToolboxParts(ctx, q, t)
	if err != nil {
		return userToolboxView{}, err
	}
	var mine []db.ToolboxUser
	for _, u := range p.users {
		if u.UserID != nil && *u.UserID == userID {
			mine = append(mine, u)
		}
	}
	p.users = mine
	var scheds []scheduleJSON
	for _, sc := range p.schedules {
		var inv []inviteeJSON
		for _, in := range sc.Invitees {
			if in.User != nil && int64(in.User.ID) == userID {
				inv = append(inv, in)
			}
		}
		if len(inv) > 0 {
			sc.Invitees = inv
			scheds = append(scheds, sc)
		}
	}
	p.schedules = scheds
	if p.schedules == nil {
		p.schedules = []scheduleJSON{}
	}
	// A code grants the talk (its sections and topics) and a signing token,
	// nothing more of an organisation the caller is not a member of.
	if a, err := authorize(ctx, q, userID, t.OrganisationID, Scopes{}); err != nil {
		return userToolboxView{}, err
	} else if !a.IsMember() {
		p.people, p.location, p.workgroup = outsiderPeople(p.people), nil, nil
	}
	return userToolboxView{toolboxJSON: p.json(), Signed: len(mine) > 0}, nil
}

// userSignBody is the toolbox's own sign row's body: the signer's details
// and, optionally, a signature drawn for this talk (SVG).
type userSignBody struct {
	signerBody
	Signature *string `json:"signature"`
}

// userToolboxSign: the user signs a toolbox with the token of
// userToolboxGet, or through a schedule they are checked in to.
func (s *Server) userToolboxSign(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b userSignBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := b.validate(b.ScheduleID == nil); err != nil {
		return err
	}
	// A signature drawn for this talk (on the phone, issue 29) goes
	// through the one sanitiser and is used instead of the saved one.
	var drawn string
	if b.Signature != nil {
		if drawn, err = sanitizeSignature(*b.Signature); err != nil {
			return err
		}
	}
	var out signResponse
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := q.ToolboxGet(rq.ctx, id)
		if db.IsNotFound(err) {
			return notFound("The toolbox does not exist.")
		} else if err != nil {
			return err
		}
		// The signer may be of no organisation of the toolbox's; the
		// signature is still a write in the toolbox's organisation.
		noteAuditOrg(rq.ctx, t.OrganisationID)
		method := methodApp
		if b.JWT != nil && strings.TrimSpace(*b.JWT) != "" {
			c, err := s.checkSignToken(strings.TrimSpace(*b.JWT), rq.user.ID, signObject("toolbox", t.ID))
			if err != nil {
				return err
			}
			method = c.Method
		}
		sg := signerFromUser(rq.user)
		if err := sg.onlyConfirmedPhone(b.PhoneNumber); err != nil {
			return err
		}
		sg.override(b.FirstName, b.LastName, b.Company, b.Position)
		if drawn != "" {
			sg.signature = &drawn
			// The method names the strongest evidence, in the order of the
			// conductor's row (a QR code, a signature, a declaration): a
			// signature drawn for this talk outranks reaching it in the
			// app, while the scanned toolbox code outranks the drawing
			// (which is kept as the signature either way).
			if method == methodApp {
				method = methodSignature
			}
		}
		var scheduleID *int64
		if b.ScheduleID != nil {
			v := int64(*b.ScheduleID)
			scheduleID = &v
		}
		out, err = s.recordSignature(rq, q, t, sg, scheduleID, method, http.StatusBadRequest)
		return err
	})
	return answerSign(rq, out, err)
}

// answerSign answers a sign row: the toolbox user response, or a refusal
// in the same shape with its status.
func answerSign(rq *request, out signResponse, err error) error {
	var refusal *signRefusal
	if errors.As(err, &refusal) {
		return rq.json(refusal.status, refusalBody{signResponse: refusal.body})
	}
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// recordSignature is the shared end of both sign rows: the toolbox must be
// conducted and not archived (403); through a schedule the signer must be
// invited and checked in, and moves to attending; missing details answer
// confirm_details with confirmStatus. A user who signed already gets their
// signature back.
func (s *Server) recordSignature(rq *request, q *db.Queries, t db.Toolbox, sg signer, scheduleID *int64, method string, confirmStatus int) (signResponse, error) {
	if t.ArchivedAt != nil {
		return signResponse{}, forbidden("The toolbox is archived.")
	}
	if t.ConductedAt == nil {
		return signResponse{}, forbidden("The toolbox has not been conducted yet.")
	}
	refuse := func(status int, code, message string) error {
		return &signRefusal{status: status, body: sg.response(code, message, t.ID, scheduleID)}
	}
	if scheduleID != nil {
		sc, err := q.ScheduleGet(rq.ctx, *scheduleID)
		if db.IsNotFound(err) || (err == nil && (sc.ToolboxID == nil || *sc.ToolboxID != t.ID)) {
			return signResponse{}, notFound("The schedule does not exist for this toolbox.")
		} else if err != nil {
			return signResponse{}, err
		}
		if sg.userID == nil {
			return signResponse{}, refuse(http.StatusBadRequest, codeUserNotInvited, "Only an invited user can sign through a schedule.")
		}
		in, err := q.ScheduleInviteeGet(rq.ctx, db.ScheduleInviteeGetParams{ScheduleID: sc.ID, UserID: *sg.userID})
		if db.IsNotFound(err) {
			return signResponse{}, refuse(http.StatusBadRequest, codeUserNotInvited, "The user is not invited to this schedule.")
		} else if err != nil {
			return signResponse{}, err
		}
		if in.Status != inviteeCheckedIn && in.Status != inviteeAttending {
			return signResponse{}, refuse(http.StatusBadRequest, codeUserNotCheckedIn, "The user has not checked in to this schedule.")
		}
	}
	if sg.userID != nil {
		prev, err := q.ToolboxUserByUser(rq.ctx, db.ToolboxUserByUserParams{ToolboxID: t.ID, UserID: sg.userID})
		if err == nil {
			return signedAnswer(rq.ctx, q, prev, "The user has already signed this toolbox.")
		} else if !db.IsNotFound(err) {
			return signResponse{}, err
		}
	}
	if sg.userID != nil && t.LocationID != nil {
		name, err := s.missingInduction(rq, q, *t.LocationID, *sg.userID)
		if err != nil {
			return signResponse{}, err
		}
		if name != "" {
			return signResponse{}, refuse(http.StatusBadRequest, codeInductionNeeded,
				fmt.Sprintf("The location requires the induction %q, and the user has no valid record of it.", name))
		}
	}
	if sg.missingDetails() {
		r := sg.response(codeConfirmDetails, "First and last name are needed: collect them and sign again.", t.ID, scheduleID)
		r.Errors = map[string]string{}
		if sg.first == "" {
			r.Errors["first_name"] = "is required"
		}
		if sg.last == "" {
			r.Errors["last_name"] = "is required"
		}
		if confirmStatus == http.StatusOK {
			return r, nil
		}
		return signResponse{}, &signRefusal{status: confirmStatus, body: r}
	}
	now := s.nowText()
	row, err := q.ToolboxUserCreate(rq.ctx, db.ToolboxUserCreateParams{ID: s.store.IDs.Next(), OrganisationID: t.OrganisationID,
		ToolboxID: t.ID, ScheduleID: scheduleID, UserID: sg.userID, FirstName: sg.first, LastName: sg.last, Email: sg.email,
		PhoneNumber: sg.phone, Company: sg.company, Position: sg.posit, Signature: sg.signature, SignedAt: now,
		SignedMethod: method, SignedBy: &rq.user.ID})
	if err != nil {
		return signResponse{}, err
	}
	if scheduleID != nil {
		if _, err := q.ScheduleInviteeSetStatus(rq.ctx, db.ScheduleInviteeSetStatusParams{Status: inviteeAttending, UpdatedAt: now,
			ScheduleID: *scheduleID, UserID: *sg.userID}); err != nil {
			return signResponse{}, err
		}
	}
	if err := s.emitToolbox(rq.ctx, q, t, "signed", strings.TrimSpace(sg.first+" "+sg.last)); err != nil {
		return signResponse{}, err
	}
	return signedAnswer(rq.ctx, q, row, "The toolbox is signed.")
}

// visitorIsNoMember refuses a visitor's signature given with the e-mail
// address or confirmed phone number of a member of the organisation: a
// member signs as themself, so the checks made of members (inductions,
// invitations) cannot be stepped round by signing as a visitor.
func visitorIsNoMember(ctx context.Context, q *db.Queries, orgID int64, sg signer) error {
	phone := ""
	if sg.phone != nil {
		phone = *sg.phone
	}
	if sg.email == "" && phone == "" {
		return nil
	}
	n, err := q.ToolboxMemberByContact(ctx, db.ToolboxMemberByContactParams{OrganisationID: orgID, Email: sg.email, Phone: phone})
	if err != nil || n == 0 {
		return err
	}
	field := "email"
	if sg.email == "" {
		field = "phone_number"
	}
	return &Error{Status: http.StatusBadRequest, Fields: map[string]string{field: "belongs to a member of the organisation"},
		Message: "These contact details belong to a member of the organisation. A member signs as themself, " +
			"with their own QR code or in the app, not as a visitor."}
}

// signedAnswer is signedResponse with who recorded the signature, when it
// is not the signer's own.
func signedAnswer(ctx context.Context, q *db.Queries, u db.ToolboxUser, message string) (signResponse, error) {
	r := signedResponse(u, message)
	if id := recordedBy(u); id != nil {
		people, err := userObjects(ctx, q, id)
		if err != nil {
			return r, err
		}
		r.RecordedBy = userRef(people, id)
	}
	return r, nil
}

// missingInduction names the first induction the location requires that
// the user has no valid, unexpired record of on its current revision; ""
// when there is none.
func (s *Server) missingInduction(rq *request, q *db.Queries, locationID, userID int64) (string, error) {
	ids, err := q.LocationInductionIDs(rq.ctx, locationID)
	if err != nil {
		return "", err
	}
	inductions, revs, err := inductionRows(rq.ctx, q, ids)
	if err != nil {
		return "", err
	}
	for _, i := range inductions {
		r := revs[i.RevisionID]
		rec, err := q.InductionRecordLatest(rq.ctx, db.InductionRecordLatestParams{InductionID: i.ID, UserID: userID})
		if db.IsNotFound(err) {
			return r.Name, nil
		} else if err != nil {
			return "", err
		}
		if !s.validRecord(rec, r.Hash) {
			return r.Name, nil
		}
	}
	return "", nil
}

func signedResponse(u db.ToolboxUser, message string) signResponse {
	sg := signer{userID: u.UserID, first: u.FirstName, last: u.LastName, email: u.Email, company: u.Company, posit: u.Position, phone: u.PhoneNumber}
	r := sg.response(codeSigned, message, u.ToolboxID, u.ScheduleID)
	r.SignedAt, r.SignedMethod = &u.SignedAt, &u.SignedMethod
	return r
}

type toolboxSignBody struct {
	UserID      *db.ID  `json:"user_id"`
	Email       *string `json:"email"`
	PhoneNumber *string `json:"phone_number"`
	FirstName   *string `json:"first_name"`
	LastName    *string `json:"last_name"`
	Company     *string `json:"company"`
	Position    *string `json:"position"`
	ScheduleID  *db.ID  `json:"schedule_id"`
	Declaration *bool   `json:"declaration"`
	Signature   *string `json:"signature"`
	UserQRCode  *string `json:"user_qr_code"`
	ScannedAt   *string `json:"scanned_at"`
}

// toolboxSign: the conductor records a signature at the meeting. The signer
// is a user (user_id, or the user whose QR code was scanned) or a visitor
// known by the details given. The evidence is, in order, a scanned user QR
// code (user_qr), an SVG signature (signature) or a declaration; with none
// the answer is missing_declaration.
func (s *Server) toolboxSign(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b toolboxSignBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	validateDetails(p, b.FirstName, b.LastName, b.Company, b.Position, b.PhoneNumber, b.Email)
	var sig string
	if b.Signature != nil {
		if sig, err = sanitizeSignature(*b.Signature); err != nil {
			return err
		}
	}
	scannedAt := s.now()
	if b.ScannedAt != nil {
		if b.UserQRCode == nil {
			p.add("scanned_at", "is only given with user_qr_code")
		} else if at, err := time.Parse(time.RFC3339Nano, *b.ScannedAt); err != nil {
			p.add("scanned_at", "must be an ISO 8601 date and time")
		} else if at.After(s.now().Add(time.Minute)) || s.now().Sub(at) > qrScanWindow {
			p.add("scanned_at", "must be within the last 24 hours")
		} else {
			scannedAt = at
		}
	}
	var qrUser int64
	var qrCode string
	if b.UserQRCode != nil {
		u, c, ok := strings.Cut(strings.TrimSpace(*b.UserQRCode), ":")
		id, idOK := db.ParseID(u)
		// 64: a QR code's text is an id and six characters; the spaces around it must be bounded too.
		if !ok || !idOK || len(c) != 6 || len(*b.UserQRCode) > 64 {
			p.add("user_qr_code", "must be a user QR code (<user id>:<code>)")
		}
		qrUser, qrCode = int64(id), c
		if b.UserID != nil && int64(*b.UserID) != qrUser {
			p.add("user_id", "must be the user of the scanned QR code")
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	g := guessOf("totp", userAccount(qrUser))
	if b.UserQRCode != nil {
		if err := s.allowGuess(rq, g); err != nil {
			return err
		}
	}
	var out signResponse
	badCode := false
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		// Without the person's QR code the evidence is the recorder's word:
		// only whoever runs the meeting may give it for someone else, and the
		// record names them (recorded_by).
		own := b.UserID != nil && int64(*b.UserID) == rq.user.ID
		if b.UserQRCode == nil && !own && !runsMeeting(t, a) {
			return forbidden("Only whoever runs the meeting (who created or conducted the talk, or a member who manages teams) " +
				"can record a signature for someone else. Each person can sign with their own QR code or in the app.")
		}
		var sg signer
		method := methodDeclaration
		switch {
		case b.UserQRCode != nil:
			secret, live, err := s.liveTOTPSecret(rq.ctx, q, qrUser)
			if err != nil {
				return err
			}
			step, ok := totpStep(secret, qrCode, scannedAt)
			if ok && live {
				ok, err = s.spendCode(rq.ctx, q, "u:"+db.ID(qrUser).String(), step)
				if err != nil {
					return err
				}
			}
			if !ok || !live {
				badCode = true
				return fieldError("user_qr_code", "is not a valid or unused code of that user")
			}
			method = methodUserQR
			fallthrough
		case b.UserID != nil:
			uid := qrUser
			if b.UserID != nil {
				uid = int64(*b.UserID)
			}
			if err := requireMember(rq.ctx, q, t.OrganisationID, uid, "user_id"); err != nil {
				return err
			}
			u, err := q.UserGet(rq.ctx, uid)
			if err != nil {
				return err
			}
			sg = signerFromUser(u)
		default:
			sg = signer{email: strings.TrimSpace(orDefault(b.Email, ""))}
			if b.PhoneNumber != nil && *b.PhoneNumber != "" {
				phone, _ := normalisePhone(*b.PhoneNumber)
				sg.phone = &phone
			}
			if err := visitorIsNoMember(rq.ctx, q, t.OrganisationID, sg); err != nil {
				return err
			}
		}
		sg.override(b.FirstName, b.LastName, b.Company, b.Position)
		switch {
		case method == methodUserQR:
		case sig != "":
			method, sg.signature = methodSignature, &sig
		case b.Declaration != nil && *b.Declaration:
			method = methodDeclaration
		default:
			return &signRefusal{status: http.StatusBadRequest, body: sg.response(codeMissingDecl,
				"The signer must declare attendance (declaration true) or sign (signature).", t.ID, (*int64)(b.ScheduleID))}
		}
		if method != methodUserQR && method != methodSignature {
			sg.signature = nil
		}
		out, err = s.recordSignature(rq, q, t, sg, (*int64)(b.ScheduleID), method, http.StatusOK)
		return err
	})
	if badCode {
		s.failedGuess(rq, g)
	}
	return answerSign(rq, out, err)
}
