package server

import (
	"context"
	"errors"
	"net/http"

	"workspace/db"
)

// Access on the route (issue 34): every route in routes.go names what its
// caller needs, as Gitea's reqRepoReader(unit.TypeCode) does: the scope
// its path names (how to load the caller's Access there) and the
// permission it asks for. handle runs that check before the handler reads
// the body, so a handler cannot forget it and a caller without access is
// refused as such, whatever it sends. docs/permissions.md is generated
// from the table (TestPermissionTable).
//
// The handlers keep their own checks inside their transactions: those see
// the rows they change (a grant revoked between the two is still honoured)
// and add the rules a path alone cannot state (rule).
type access struct {
	auth  bool
	scope string     // what the path names: "organisation", "project", ...; "user": the caller's own rows
	perm  Permission // what the scope asks for; 0 is membership
	doc   DocScope   // a document's share scope, when the route is a document's
	rule  string     // what the handler adds to perm, in words, for the table
	load  loader     // the caller's Access in the scope the path names
	// check replaces Require(perm) for the few routes decided otherwise
	// (Staff, the member leaving).
	check func(rq *request, a Access) error
	// byHand: not on the table yet, the handler checks alone
	// (routeaccess_test.go lists these routes, a list that only shrinks).
	byHand bool
}

// loader resolves the caller's Access in the scope a route's path names.
type loader func(rq *request, q *db.Queries) (Access, error)

var (
	public = access{}
	// authenticated is a route whose handler still checks by hand.
	authenticated = access{auth: true, byHand: true}
	// self is a route on the caller's own account and rows: its handler
	// reads them by the caller's id, so another's are not found.
	self = access{auth: true, scope: "user"}
	// staff is a route for Staff (the Staff badge) only.
	// orgListing is a list of an organisation that its members and the
	// recipients of its shares read: the handler lists what the caller
	// reaches, and nothing to a caller who reaches nothing.
	orgListing = access{auth: true, scope: "organisation", rule: "member, or a share's recipient: the rows the caller reaches"}
	staff      = access{auth: true, scope: "staff", check: func(rq *request, _ Access) error {
		if rq.user.Badges&BadgeStaff == 0 {
			return forbidden("Only Staff may do this.")
		}
		return nil
	}}
)

// or records the rule a handler adds to the route's permission, for the
// permission table: "or the team's leader".
func (a access) or(rule string) access { a.rule = rule; return a }

func scoped(scope string, perm Permission, load loader) access {
	return access{auth: true, scope: scope, perm: perm, load: load}
}

// byID is a loader for a route whose :id (or another parameter) names a
// row that lives in one organisation.
func byID(param string, f func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error)) loader {
	return func(rq *request, q *db.Queries) (Access, error) {
		id, err := rq.pathID(param)
		if err != nil {
			return Access{}, err
		}
		return f(rq.ctx, q, rq.user.ID, id)
	}
}

// absentHere is what the loaders pass as their "absent" answer: the guard
// lets the handler say how a missing row is answered, as it always has.
var absentHere = notFound("absent")

// org: the path's :id is an organisation.
func org(perm Permission) access {
	return scoped("organisation", perm, byID("id", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		return authorize(ctx, q, userID, id, Scopes{})
	}))
}

// checkAccess runs a route's check. A path id that is malformed or names
// nothing is left to the handler, which answers it as its area decided
// (400 or 404): only a refusal is the guard's to give.
func (s *Server) checkAccess(rq *request, acc access) error {
	var a Access
	if acc.load != nil {
		err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
			var err error
			a, err = acc.load(rq, q)
			return err
		})
		var e *Error
		switch {
		case err == nil:
		case db.IsNotFound(err), errors.As(err, &e) && e.Status != http.StatusForbidden:
			return nil
		default:
			return err
		}
	}
	switch {
	case acc.check != nil:
		return acc.check(rq, a)
	case acc.load == nil:
		return nil
	case acc.doc != 0:
		return a.RequireDoc(acc.doc)
	}
	return a.Require(acc.perm)
}

// needs is the route's requirement in words, for the permission table.
func (a access) needs() string {
	var s string
	switch {
	case !a.auth:
		return "anyone"
	case a.byHand:
		return "checked by the handler"
	case a.scope == "user":
		return "the caller's own"
	case a.scope == "staff":
		return "Staff"
	case a.doc != 0:
		p, _ := docScopePermission(a.doc)
		for _, n := range docScopeNames {
			if n.Scope == a.doc {
				s = p.Name() + " (or a share with " + n.Name + ")"
			}
		}
	case a.load == nil:
		s = ""
	case a.perm == 0:
		s = "member"
	default:
		s = a.perm.Name()
	}
	switch {
	case s == "":
		return a.rule
	case a.rule != "":
		return s + "; " + a.rule
	}
	return s
}
