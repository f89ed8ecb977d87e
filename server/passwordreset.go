package server

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"workspace/db"
)

// Password reset (issue 36, docs/mail.md): "Forgot password?" on the
// server-rendered sign-in page leads here, so it works for every OAuth
// client. A request mails a one-time link (valid one hour, its token stored
// hashed, one outstanding per account) and answers the same whether or not
// the address has an account. The link opens a page to choose a new
// password; setting it deletes the link and signs the account out
// everywhere (its refresh tokens are revoked). Requests are throttled per
// address asked for and per client like password guesses, and wrong
// tokens spend the client's guesses.

const passwordResetTTL = time.Hour

// resetPage is what the reset pages' template gets.
type resetPage struct {
	Mode    string // forgot, sent, choose, invalid, done
	Email   string
	Token   string
	Next    string // the sign-in page to go back to
	Message string
	Errors  map[string]string
}

var resetTemplate = template.Must(template.New("reset").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{if eq .P.Mode "choose"}}Choose a new password{{else if eq .P.Mode "done"}}Password changed{{else}}Reset your password{{end}} · Workspace</title>
<style>{{.CSS}}</style></head><body><main>
<p class="brand"><span class="mark" aria-hidden="true">W</span>Workspace</p>
{{- with .P}}
{{- if eq .Mode "choose"}}
<h1>Choose a new password</h1>
{{if .Message}}<p class="msg" role="alert" id="message">{{.Message}}</p>{{end}}
<form method="post" action="/auth/reset" novalidate>
<input type="hidden" name="token" value="{{.Token}}">
<label for="password">New password</label>
<input id="password" name="password" type="password" required autocomplete="new-password"{{with index .Errors "password"}} aria-invalid="true" aria-describedby="password-error"{{end}}>
{{with index .Errors "password"}}<p class="err" id="password-error">Password {{.}}</p>{{end}}
<label for="password_again">New password again</label>
<input id="password_again" name="password_again" type="password" required autocomplete="new-password"{{with index .Errors "password_again"}} aria-invalid="true" aria-describedby="password_again-error"{{end}}>
{{with index .Errors "password_again"}}<p class="err" id="password_again-error">{{.}}</p>{{end}}
<button type="submit">Change password</button>
</form>
<p>Changing it signs you out on every device.</p>
{{- else if eq .Mode "done"}}
<h1>Password changed</h1>
<p role="status">Your password is changed, and you were signed out on every device. Sign in with the new password, here or in the app you use.</p>
<nav><a href="{{.Next}}">Sign in</a></nav>
{{- else if eq .Mode "sent"}}
<h1>Check your mail</h1>
<p role="status">If an account uses {{.Email}}, we sent a link to it to choose a new password. The link works for one hour.</p>
<p>No mail after a few minutes? Check the spam folder, or ask again.</p>
<nav><a href="{{.Next}}">Back to sign in</a></nav>
{{- else}}
<h1>Reset your password</h1>
{{if eq .Mode "invalid"}}<p class="msg" role="alert" id="message">This link has expired or was already used. Ask for a new one below.</p>
{{else if .Message}}<p class="msg" role="alert" id="message">{{.Message}}</p>
{{end}}<p>Enter the e-mail address you sign in with. We will mail you a link to choose a new password.</p>
<form method="post" action="/auth/forgot" novalidate>
<input type="hidden" name="next" value="{{.Next}}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="{{.Email}}"{{with index .Errors "email"}} aria-invalid="true" aria-describedby="email-error"{{end}}>
{{with index .Errors "email"}}<p class="err" id="email-error">E-mail address {{.}}</p>{{end}}
<button type="submit">Send me a link</button>
</form>
<nav><a href="{{.Next}}">Back to sign in</a></nav>
{{- end}}{{end}}
</main></body></html>
`))

// safeNext keeps a return address only when it is this server's sign-in
// page (never another site: the link is on a page anyone can make).
func safeNext(next string) string {
	if strings.HasPrefix(next, "/oauth/authorize?") {
		return next
	}
	return "/app/"
}

func (s *Server) renderReset(rq *request, status int, p resetPage) error {
	p.Next = safeNext(p.Next)
	h := rq.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", authorizeCSP+"; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	// The token is in the address: no page it links to may see it.
	h.Set("Referrer-Policy", "no-referrer")
	rq.w.WriteHeader(status)
	return resetTemplate.Execute(rq.w, struct {
		P   resetPage
		CSS template.CSS
	}{p, template.CSS(authorizeCSS)})
}

// resetError shows a client-facing error on the page; others are 500s.
func (s *Server) resetError(rq *request, p resetPage, err error) error {
	var e *Error
	if !errors.As(db.Classify(err), &e) {
		return err
	}
	if len(e.Fields) > 0 {
		p.Errors = e.Fields
	} else {
		p.Message = e.Message
	}
	return s.renderReset(rq, e.Status, p)
}

func (s *Server) parseResetForm(rq *request) error {
	if err := rq.r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		return badRequest("The form could not be read.")
	}
	return nil
}

// forgotGet shows the form asking for the address.
func (s *Server) forgotGet(rq *request) error {
	q := rq.r.URL.Query()
	return s.renderReset(rq, http.StatusOK, resetPage{Mode: "forgot", Email: q.Get("email"), Next: q.Get("next")})
}

// forgotPost mails a reset link when the address has an account, and
// answers the same either way.
func (s *Server) forgotPost(rq *request) error {
	if err := s.parseResetForm(rq); err != nil {
		return s.resetError(rq, resetPage{Mode: "forgot"}, err)
	}
	p := resetPage{Mode: "forgot", Email: strings.TrimSpace(rq.r.PostForm.Get("email")), Next: rq.r.PostForm.Get("next")}
	if !validEmail(p.Email) {
		return s.resetError(rq, p, fieldError("email", "must be a valid e-mail address"))
	}
	// Every request spends, found or not: a limit that only counted
	// addresses with accounts would tell which have one.
	g := guessOf("password_reset", p.Email)
	if err := s.allowSend(rq, g); err != nil {
		return s.resetError(rq, p, err)
	}
	s.failedGuess(rq, g)
	u, err := s.store.R.UserGetByEmail(rq.ctx, p.Email)
	if err == nil {
		// Sent after the answer, so its time (an SMTP exchange takes up to
		// seconds) does not tell whether the address has an account.
		ctx := context.WithoutCancel(rq.ctx)
		s.background(func() {
			if err := s.store.InTx(ctx, func(q *db.Queries) error { return s.sendPasswordReset(ctx, q, u, false) }); err != nil {
				s.log.ErrorContext(ctx, "password reset mail", "err", err, "request_id", requestID(ctx))
			}
		})
	} else if !db.IsNotFound(err) {
		return err
	}
	p.Mode = "sent"
	return s.renderReset(rq, http.StatusOK, p)
}

// sendPasswordReset replaces the account's reset link and mails the new one.
func (s *Server) sendPasswordReset(ctx context.Context, q *db.Queries, u db.User, byStaff bool) error {
	tok := randomToken(32)
	now := s.clock()
	if err := q.PasswordResetPut(ctx, db.PasswordResetPutParams{
		UserID: u.ID, TokenHash: hashToken(tok), ExpiresAt: db.FormatTime(now.Add(passwordResetTTL)), CreatedAt: db.FormatTime(now),
	}); err != nil {
		return err
	}
	return s.mailer.send(ctx, q, s.mailPasswordReset(u, tok, byStaff))
}

// liveReset finds the unexpired reset a token names; ok false otherwise.
// A wrong token spends the client's guesses.
func (s *Server) liveReset(rq *request, q *db.Queries, token string) (db.PasswordReset, bool, error) {
	if token == "" || len(token) > 100 {
		return db.PasswordReset{}, false, nil
	}
	r, err := q.PasswordResetGet(rq.ctx, hashToken(token))
	if db.IsNotFound(err) {
		s.failedGuess(rq, guess{kind: "reset_token"})
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return r, s.live(r.ExpiresAt), nil
}

// resetGet opens the link: the new-password form, or why it cannot be used.
func (s *Server) resetGet(rq *request) error {
	if err := s.allowGuess(rq, guess{kind: "reset_token"}); err != nil {
		return s.resetError(rq, resetPage{Mode: "forgot"}, err)
	}
	token := rq.r.URL.Query().Get("token")
	_, ok, err := s.liveReset(rq, s.store.R, token)
	if err != nil {
		return err
	}
	if !ok {
		return s.renderReset(rq, http.StatusBadRequest, resetPage{Mode: "invalid"})
	}
	return s.renderReset(rq, http.StatusOK, resetPage{Mode: "choose", Token: token})
}

// resetPost sets the new password, uses up the link and revokes the
// account's refresh tokens, in one transaction.
func (s *Server) resetPost(rq *request) error {
	if err := s.parseResetForm(rq); err != nil {
		return s.resetError(rq, resetPage{Mode: "forgot"}, err)
	}
	if err := s.allowGuess(rq, guess{kind: "reset_token"}); err != nil {
		return s.resetError(rq, resetPage{Mode: "forgot"}, err)
	}
	form := rq.r.PostForm
	p := resetPage{Mode: "choose", Token: form.Get("token")}
	pw := form.Get("password")
	problem := passwordProblem(pw)
	var hash string
	if problem == "" && pw == form.Get("password_again") {
		var err error
		if hash, err = s.hashPassword(pw); err != nil {
			return err
		}
	}
	invalid := false
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		r, ok, err := s.liveReset(rq, q, p.Token)
		if err != nil {
			return err
		}
		if !ok {
			invalid = true
			return nil
		}
		if problem != "" {
			return fieldError("password", problem)
		}
		if pw != form.Get("password_again") {
			return fieldError("password_again", "The two passwords are not the same.")
		}
		if err := q.UserPasswordSet(rq.ctx, db.UserPasswordSetParams{PasswordHash: hash, UpdatedAt: s.nowText(), ID: r.UserID}); err != nil {
			return err
		}
		if err := q.PasswordResetDelete(rq.ctx, r.UserID); err != nil {
			return err
		}
		s.log.InfoContext(rq.ctx, "password reset", "user_id", r.UserID, "request_id", requestID(rq.ctx))
		return q.RefreshTokenDeleteForUser(rq.ctx, r.UserID)
	})
	if invalid {
		return s.renderReset(rq, http.StatusBadRequest, resetPage{Mode: "invalid"})
	}
	if err != nil {
		return s.resetError(rq, p, err)
	}
	return s.renderReset(rq, http.StatusOK, resetPage{Mode: "done"})
}

// adminPasswordReset lets Staff mail a user a reset link.
func (s *Server) adminPasswordReset(rq *request) error {
	// Staff only: the route checks (routes.go, staff).
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		u, err := q.UserGet(rq.ctx, id)
		if db.IsNotFound(err) || (err == nil && u.DeletedAt != nil) {
			return notFound("No such user.")
		} else if err != nil {
			return err
		}
		return s.sendPasswordReset(rq.ctx, q, u, true)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusAccepted, sentJSON{Sent: true})
}
