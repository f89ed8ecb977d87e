package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

const memberEmail = "member@example.com"

// totpSecret is the owner's TOTP secret, registered on each side (a
// person's secrets never travel): the witness writer opens its signing
// tokens with codes made from it.
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DP"

// fixtures are what the signature, document, file and security writers
// work on, all made on the hub before the clone so both sides start with
// them: a toolbox talk visitors sign, a document with a text column and
// shared clauses whose cells both sides set, a second member and two
// roles given, taken and changed.
type fixtures struct {
	toolbox, document, column string
	clauses                   []string
	member                    *api // the second member, signed in on the hub
	memberID                  string
	roles                     []string
	invite                    string   // a reusable code: the member joins again with it after a removal
	induction                 string   // assigned to the owner: PDFs uploaded, records made by the owner
	question                  string   // the induction's one text question: each record's answer is unique
	witnesses                 []string // e-mails of members who witness work items besides the owner
}

func setupFixtures(h *api, org string) (*fixtures, error) {
	fx := &fixtures{}
	var out idJSON
	if _, err := h.do("POST", "/organisations/"+org+"/toolboxes", map[string]any{"title": "Pre-start talk"}, &out); err != nil {
		return nil, fmt.Errorf("toolbox: %w", err)
	}
	fx.toolbox = out.ID
	// Visitors sign only a conducted talk (without this the signature
	// writer was refused every time and acknowledged nothing).
	if _, err := h.do("POST", "/toolboxes/"+fx.toolbox+"/conduct", map[string]any{"latitude": -33.86, "longitude": 151.2}, nil); err != nil {
		return nil, fmt.Errorf("conduct: %w", err)
	}
	if _, err := h.do("POST", "/documents", map[string]any{"organisation_id": org, "title": "Site rules"}, &out); err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	fx.document = out.ID
	hd, err := fx.head(h)
	if err != nil {
		return nil, err
	}
	var ch struct {
		Hash string `json:"hash"`
	}
	if _, err := h.do("POST", fx.rev(hd)+"/columns", map[string]any{"name": "Note", "type": "text"}, &ch); err != nil {
		return nil, fmt.Errorf("column: %w", err)
	}
	for i := 0; i < 6; i++ {
		if _, err := h.do("POST", fx.rev(ch.Hash)+"/clauses", map[string]any{"text": fmt.Sprintf("Shared clause %d", i)}, &ch); err != nil {
			return nil, fmt.Errorf("clause: %w", err)
		}
	}
	var cols []struct {
		ColumnID string `json:"column_id"`
	}
	if _, err := h.do("GET", fx.rev(ch.Hash)+"/columns", nil, &cols); err != nil || len(cols) != 1 {
		return nil, fmt.Errorf("columns: %v (%d)", err, len(cols))
	}
	fx.column = cols[0].ColumnID
	var cls []struct {
		ClauseID string `json:"clause_id"`
	}
	if _, err := h.do("GET", fx.rev(ch.Hash)+"/clauses?$top=100", nil, &cls); err != nil || len(cls) != 6 {
		return nil, fmt.Errorf("clauses: %v (%d)", err, len(cls))
	}
	for _, c := range cls {
		fx.clauses = append(fx.clauses, c.ClauseID)
	}

	const password = "fault-run-password"
	if _, err := h.do("POST", "/auth/register", map[string]any{"email": memberEmail, "password": password, "first_name": "Milo"}, nil); err != nil {
		return nil, err
	}
	fx.member = &api{base: h.base, http: h.http}
	if err := fx.member.signIn(memberEmail, password); err != nil {
		return nil, err
	}
	var me idJSON
	if _, err := fx.member.do("GET", "/users/@me", nil, &me); err != nil {
		return nil, err
	}
	fx.memberID = me.ID
	var inv struct {
		Code string `json:"code"`
	}
	if _, err := h.do("POST", "/organisations/"+org+"/invites", map[string]any{"expires_at": nil}, &inv); err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	fx.invite = inv.Code
	if _, err := fx.member.do("POST", "/invites/"+fx.invite, map[string]any{}, nil); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	var owner idJSON
	if _, err := h.do("GET", "/users/@me", nil, &owner); err != nil {
		return nil, err
	}
	if _, err := h.do("POST", "/organisations/"+org+"/inductions", map[string]any{"name": "Site induction"}, &out); err != nil {
		return nil, fmt.Errorf("induction: %w", err)
	}
	fx.induction = out.ID
	var ind struct {
		Questions []struct {
			ID string `json:"id"`
		} `json:"questions"`
	}
	if _, err := h.do("PATCH", "/inductions/"+fx.induction, map[string]any{"questions": []any{map[string]any{"question": "Which crew are you with?", "type": "string"}}}, nil); err != nil {
		return nil, fmt.Errorf("induction question: %w", err)
	}
	if _, err := h.do("GET", "/inductions/"+fx.induction, nil, &ind); err != nil || len(ind.Questions) != 1 {
		return nil, fmt.Errorf("induction questions: %v (%d)", err, len(ind.Questions))
	}
	fx.question = ind.Questions[0].ID
	if _, err := h.do("POST", "/inductions/"+fx.induction+"/users/"+owner.ID, map[string]any{}, nil); err != nil {
		return nil, fmt.Errorf("induction assignment: %w", err)
	}
	// Witnesses besides the owner: a node accepts each 30-second code
	// step once per person, so more people make more witness records.
	for i := 1; i <= 3; i++ {
		mail := fmt.Sprintf("witness%d@example.com", i)
		if _, err := h.do("POST", "/auth/register", map[string]any{"email": mail, "password": password, "first_name": "Wit", "last_name": fmt.Sprintf("Ness %d", i)}, nil); err != nil {
			return nil, err
		}
		w := &api{base: h.base, http: h.http}
		if err := w.signIn(mail, password); err != nil {
			return nil, err
		}
		if _, err := w.do("POST", "/invites/"+fx.invite, map[string]any{}, nil); err != nil {
			return nil, fmt.Errorf("witness joins: %w", err)
		}
		fx.witnesses = append(fx.witnesses, mail)
	}
	for _, name := range []string{"Crew", "Leads"} {
		if _, err := h.do("POST", "/organisations/"+org+"/roles", map[string]any{"alias": name}, &out); err != nil {
			return nil, fmt.Errorf("role: %w", err)
		}
		fx.roles = append(fx.roles, out.ID)
	}
	return fx, nil
}

func (fx *fixtures) rev(hash string) string {
	return "/documents/" + fx.document + "/revisions/" + hash
}

// head is the hash of main's head as one side holds it.
func (fx *fixtures) head(a *api) (string, error) {
	var b struct {
		Hash string `json:"hash"`
	}
	_, err := a.do("GET", "/documents/"+fx.document+"/branches/main", nil, &b)
	return b.Hash, err
}

// securityChange gives or takes a role, changes a role's permissions, or
// removes the second member, who then joins again with the invite (on the
// side the writer is on). Both sides decide apart; the sync rules (the
// stricter wins) settle them, so only the tables' equality and the audit
// chains judge these.
func (fx *fixtures) securityChange(a, member *api, org string, r *rand.Rand) error {
	role := fx.roles[r.IntN(len(fx.roles))]
	switch r.IntN(4) {
	case 0:
		_, err := a.do("PUT", "/organisations/"+org+"/members/"+fx.memberID+"/roles/"+role, nil, nil)
		return err
	case 1:
		_, err := a.do("DELETE", "/organisations/"+org+"/members/"+fx.memberID+"/roles/"+role, nil, nil)
		return err
	case 2:
		perm := []string{"MANAGE_TEAMS", "CREATE_INVITE", "MANAGE_FLEETS"}[r.IntN(3)]
		choice := []string{"allow", "deny", "inherit"}[r.IntN(3)]
		_, err := a.do("PUT", "/organisations/"+org+"/permissions/"+role, map[string]any{"permissions": map[string]string{perm: choice}}, nil)
		return err
	default:
		if _, err := a.do("DELETE", "/organisations/"+org+"/members/"+fx.memberID, nil, nil); err != nil {
			return err
		}
		if member == nil {
			return nil
		}
		_, err := member.do("POST", "/invites/"+fx.invite, map[string]any{}, nil)
		return err
	}
}

// checkDocument: every clause text acknowledged on either side is on the
// hub in main's head or in a site branch's head (a conflict keeps it
// there); none appears twice in one head.
func (fx *fixtures) checkDocument(rep *report, h *api, docAcks map[string][]string) error {
	var branches []struct {
		Name     string `json:"name"`
		Revision struct {
			Hash string `json:"hash"`
		} `json:"revision"`
	}
	if _, err := h.do("GET", "/documents/"+fx.document+"/branches?$top=1000", nil, &branches); err != nil {
		return fmt.Errorf("branches: %w", err)
	}
	found := map[string]bool{}
	heads := 0
	for _, b := range branches {
		if b.Name != "main" && !strings.HasPrefix(b.Name, "site/") {
			continue
		}
		heads++
		seen := map[string]int{}
		for skip := 0; ; skip += 1000 {
			var cls []struct {
				Text string `json:"text"`
			}
			q := url.Values{"$top": {"1000"}, "$skip": {fmt.Sprint(skip)}}
			if _, err := h.do("GET", fx.rev(b.Revision.Hash)+"/clauses?"+q.Encode(), nil, &cls); err != nil {
				return fmt.Errorf("clauses of %s: %w", b.Name, err)
			}
			for _, c := range cls {
				seen[c.Text]++
				found[c.Text] = true
			}
			if len(cls) < 1000 {
				break
			}
		}
		for text, n := range seen {
			if n > 1 && strings.HasPrefix(text, "fault-") {
				rep.duplicated++
				rep.details = append(rep.details, fmt.Sprintf("duplicated: %q %d times in the head of %s", text, n, b.Name))
			}
		}
	}
	rep.details = append(rep.details, fmt.Sprintf("document: %d clause texts acknowledged, %d heads on the hub (main and site branches)",
		len(docAcks["hub"])+len(docAcks["laptop"]), heads))
	for side, texts := range docAcks {
		for _, t := range texts {
			if !found[t] {
				rep.lost++
				if len(rep.details) < 40 {
					rep.details = append(rep.details, fmt.Sprintf("lost: %s's clause %q is in no head on the hub", side, t))
				}
			}
		}
	}
	return nil
}

// totpCode is the owner's code for a 30-second step.
func totpCode(step int64) (string, error) {
	return totp.GenerateCodeCustom(totpSecret, time.Unix(step*30, 0), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
}

// witness signs the owner as a witness of a work item: a code of a step
// this side has not spent (each is accepted once per node) opens the
// signing token. It returns the record's id, or "" when both steps the
// server accepts ahead are spent here already.
func witness(a *api, item string, spent map[int64]bool) (string, error) {
	code, err := nextCode(spent)
	if code == "" || err != nil {
		return "", err
	}
	var tok struct {
		SignToken string `json:"sign_token"`
	}
	if _, err := a.do("GET", "/users/@me/witness/"+item+"?token="+code, nil, &tok); err != nil {
		return "", err
	}
	var rec struct {
		ID       string `json:"id"`
		ObjectID string `json:"object_id"`
	}
	if _, err := a.do("POST", "/users/@me/witness/"+item+"/sign", map[string]any{"jwt": tok.SignToken, "last_name": "Fault"}, &rec); err != nil {
		return "", err
	}
	if rec.ID == "" || rec.ObjectID != item {
		return "", fmt.Errorf("witness of %s: the answer names record %q of %q", item, rec.ID, rec.ObjectID)
	}
	return rec.ID, nil
}

// nextCode is a code of a step this side has not spent for the person
// (marked spent now), or "" when both steps the server accepts ahead are.
func nextCode(spent map[int64]bool) (string, error) {
	now := time.Now().Unix() / 30
	step := now
	if spent[step] {
		step = now + 1 // the server accepts one step of skew
	}
	if spent[step] {
		return "", nil
	}
	spent[step] = true
	return totpCode(step)
}

// signOwn signs a toolbox talk as the person themselves: their own code
// opens the signing token (method app). It returns the signer's user id,
// or "" when no code step is left.
func signOwn(a *api, toolbox string, spent map[int64]bool) (string, error) {
	code, err := nextCode(spent)
	if code == "" || err != nil {
		return "", err
	}
	var tok struct {
		SignToken string `json:"sign_token"`
	}
	if _, err := a.do("GET", "/users/@me/toolboxes/"+toolbox+"?token="+code, nil, &tok); err != nil {
		return "", err
	}
	var out struct {
		ResponseCode string  `json:"response_code"`
		ToolboxID    *string `json:"toolbox_id"`
		UserID       *string `json:"user_id"`
	}
	if _, err := a.do("POST", "/users/@me/toolboxes/"+toolbox+"/sign", map[string]any{"jwt": tok.SignToken, "last_name": "Fault", "company": "Fault run"}, &out); err != nil {
		return "", err
	}
	if out.ResponseCode != "toolbox_signed" || out.UserID == nil || out.ToolboxID == nil || *out.ToolboxID != toolbox {
		return "", fmt.Errorf("own signature of %s: %s", toolbox, out.ResponseCode)
	}
	return *out.UserID, nil
}

// uniquePDF is a smallest PDF the server accepts (a %PDF- header, %%EOF at
// the end) whose comment spells side and n: a file of its own each time.
func uniquePDF(side string, n int64) []byte {
	return []byte(fmt.Sprintf("%%PDF-1.4\n%% fault run induction, %s %d\n%%%%EOF\n", side, n))
}
