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
	check func(rq *request, q *db.Queries, a Access) error
	// wholeRule: rule is the whole requirement (whole), shown alone.
	wholeRule bool
	// body: the scope or the alternative is named by the request's body
	// (POST /documents names its organisation there): checkAccess reads
	// the body before its transaction and the loader or check reads the
	// fields it needs (rq.bodyFields); the handler decodes the same bytes.
	body bool
	// scopeInBody: the body names the scope itself (or the caller's
	// proof): a body that cannot be read names none, and the handler
	// answers it (400) as a request that names nothing.
	scopeInBody bool
}

// loader resolves the caller's Access in the scope a route's path names.
type loader func(rq *request, q *db.Queries) (Access, error)

var (
	public = access{}
	// self is a route on the caller's own account and rows: its handler
	// reads them by the caller's id, so another's are not found.
	self = access{auth: true, scope: "user"}
	// staff is a route for Staff (the Staff badge) only.
	// orgListing is a list of an organisation that its members and the
	// recipients of its shares read: the handler lists what the caller
	// reaches, and nothing to a caller who reaches nothing.
	orgListing = access{auth: true, scope: "organisation", rule: "member, or a share's recipient: the rows the caller reaches"}
	staff      = access{auth: true, scope: "staff", check: func(rq *request, _ *db.Queries, _ Access) error {
		if rq.user.Badges&BadgeStaff == 0 {
			return forbidden("Only Staff may do this.")
		}
		return nil
	}}
)

// The sync routes (sync.go) are no person's: a node presents a pairing
// code, then signs each request with the key it paired with.
var (
	syncPairing    = access{rule: "a one-time pairing code an owner made"}
	syncNodeAccess = access{rule: "a paired node's request signed with its key (not revoked)"}
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
	if acc.load == nil {
		if acc.check != nil {
			return acc.check(rq, nil, Access{})
		}
		return nil
	}
	if acc.body {
		rq.peekBody()
	}
	var refused error
	// The loader's authorize calls keep what they resolve for the
	// handler's (routeResolved).
	var slot *routeResolved
	if r := requestAccessOf(rq.ctx); r != nil {
		slot = &r.route
		slot.recording = true
	}
	decide := func(q *db.Queries) error {
		a, err := acc.load(rq, q)
		if err != nil {
			return err
		}
		switch {
		case acc.check != nil:
			refused = acc.check(rq, q, a)
		case acc.doc != 0:
			refused = a.RequireDoc(acc.doc)
		default:
			refused = a.Require(acc.perm)
		}
		return nil
	}
	var err error
	if rq.r.Method == http.MethodGet || rq.r.Method == http.MethodHead {
		// A read's check runs its few lookups as single statements on the
		// reader pool, as the hottest read handlers do: BEGIN and ROLLBACK
		// around them were a third of a project read's CPU under load
		// (docs/performance.md). The handler reads and decides again.
		err = decide(s.store.R)
	} else {
		err = s.store.ReadTx(rq.ctx, decide)
	}
	if slot != nil {
		slot.recording = false
	}
	var e *Error
	switch {
	case err == nil:
		return refused
	case db.IsNotFound(err), errors.As(err, &e) && e.Status != http.StatusForbidden:
		return nil
	}
	return err
}

// Reusing the route's resolution. A GET's or HEAD's check runs on the
// reader pool, outside a transaction (checkAccess): it records nothing,
// and its handler resolves again through the access cache (cheaper than
// the BEGIN and ROLLBACK the reuse needed). For the other methods the
// route's check resolves the caller's
// Access in its own read transaction; the handler then asks authorize
// again for the same caller, organisation and scopes, inside its own
// transaction. authorize answers that second call with the route's Access
// (reusedRouteAccess) when nothing can have changed in between:
//
//   - the handler's q is a read transaction at the same, even, write
//     generation as the route's: no write batch began between the two
//     reads of the generation, so every row the Access came from (the
//     membership, roles and grants, and a non-member's shares, which the
//     access cache never keeps) is as the route read it. This is the
//     access cache's own rule (cache.go genCache), and the route's Access
//     is exactly what a fresh resolution at that generation would give.
//   - a write transaction always resolves again: a write must see the
//     current state (a role taken or a share revoked between the route's
//     read and the write is honoured). That check stays cheap: the
//     organisation's access tag, memoised per writer stamp, decides
//     whether the standing read at that tag still holds (writeStanding).
//
// So a read-only handler of another method resolves access once, and a
// write twice only where it must.

// routeResolved keeps, for one request, what authorize resolved during
// the route's check (recording), each with the write generation of the
// read transaction it was resolved in; the handler's calls then read it.
type routeResolved struct {
	recording bool
	n         int
	entries   [1]routeEntry // a loader asks once; a second question resolves afresh
}

type routeEntry struct {
	userID, orgID int64
	sc            Scopes
	a             Access
	gen           uint64
}

// reusedRouteAccess is what the route's check resolved for the caller,
// organisation and scopes asked, when q is a read transaction at the
// generation it was resolved at; false otherwise.
func reusedRouteAccess(ctx context.Context, q *db.Queries, userID, orgID int64, sc Scopes) (Access, bool) {
	ra := requestAccessOf(ctx)
	if ra == nil || ra.cache == nil || ra.route.recording || ra.route.n == 0 {
		return Access{}, false
	}
	gen, ok := ra.cache.store.ReadGeneration(q)
	if !ok || gen%2 == 1 {
		return Access{}, false
	}
	for _, e := range ra.route.entries[:ra.route.n] {
		if e.gen == gen && e.userID == userID && e.orgID == orgID && e.sc == sc {
			return e.a, true
		}
	}
	return Access{}, false
}

// keepRouteAccess records what authorize resolved in q while the route's
// check runs: only in a read transaction, at an even generation.
func keepRouteAccess(ctx context.Context, q *db.Queries, userID, orgID int64, sc Scopes, a Access) {
	ra := requestAccessOf(ctx)
	if ra == nil || ra.cache == nil || !ra.route.recording || ra.route.n == len(ra.route.entries) {
		return
	}
	gen, ok := ra.cache.store.ReadGeneration(q)
	if !ok || gen%2 == 1 {
		return
	}
	ra.route.entries[ra.route.n] = routeEntry{userID: userID, orgID: orgID, sc: sc, a: a, gen: gen}
	ra.route.n++
}

// needs is the route's requirement in words, for the permission table.
func (a access) needs() string {
	var s string
	switch {
	case !a.auth && a.rule != "":
		return a.rule
	case !a.auth:
		return "anyone"
	case a.scope == "user" && a.rule != "":
		return a.rule
	case a.scope == "user":
		return "the caller's own"
	case a.scope == "staff":
		return "Staff"
	case a.wholeRule:
		return a.rule
	case a.check != nil && a.load != nil && a.scope == "document":
		s = "member"
		if a.perm != 0 {
			s = a.perm.Name()
		}
	case a.check != nil && a.load != nil && a.rule != "":
		s = ""
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

// accessOf is a row's access helper (which answers the row too) as a
// scope's loader, which needs the caller's Access alone.
func accessOf[T any](f func(ctx context.Context, q *db.Queries, userID, id int64) (T, Access, error)) func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
	return func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := f(ctx, q, userID, id)
		return a, err
	}
}

// The scopes a route's :id names. Each loads the row as its handlers do
// (the xxxAccess of its area) and answers the caller's Access there; an
// absent row is the handler's to answer.

func rowScope(scope string, f func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error)) func(Permission) access {
	return func(perm Permission) access { return scoped(scope, perm, byID("id", f)) }
}

// inOrgOf is a loader for a row that names its organisation and nothing
// finer.
func inOrgOf[T any](get func(*db.Queries) func(context.Context, int64) (T, error), orgOf func(T) int64) func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
	return func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		row, err := get(q)(ctx, id)
		if err != nil {
			return Access{}, err
		}
		return authorize(ctx, q, userID, orgOf(row), Scopes{})
	}
}

var (
	project = rowScope("project", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := projectAccess(ctx, q, userID, id, absentHere)
		return a, err
	})
	projectPackage = rowScope("package", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := packageAccess(ctx, q, userID, id, absentHere)
		return a, err
	})
	milestone = rowScope("milestone", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, _, a, err := milestoneAccess(ctx, q, userID, id, absentHere)
		return a, err
	})
	workItem = rowScope("work item", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := workItemAccess(ctx, q, userID, id, absentHere)
		return a, err
	})
	fleet = rowScope("fleet", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := fleetAccess(ctx, q, userID, id, http.StatusNotFound)
		return a, err
	})
	location = rowScope("location", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := locationAccess(ctx, q, userID, id, http.StatusNotFound)
		return a, err
	})
	subLocation = rowScope("sub-location", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := subLocationAccess(ctx, q, userID, id, http.StatusNotFound)
		return a, err
	})
	workgroup = rowScope("workgroup", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := workgroupAccess(ctx, q, userID, id, http.StatusNotFound)
		return a, err
	})
	team = rowScope("team", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := teamAccess(ctx, q, userID, id, 0, http.StatusNotFound)
		return a, err
	})
	workItemType = rowScope("work item type", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := workItemTypeAccess(ctx, q, userID, id, http.StatusNotFound)
		return a, err
	})
	toolbox   = rowScope("toolbox", accessOf(toolboxAccess))
	schedule  = rowScope("schedule", accessOf(scheduleAccess))
	induction = rowScope("induction", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, _, a, err := inductionAccess(ctx, q, userID, id)
		return a, err
	})
	system        = rowScope("system", accessOf(systemAccess))
	prefix        = rowScope("prefix", accessOf(prefixAccess))
	discipline    = rowScope("discipline", accessOf(disciplineAccess))
	documentType  = rowScope("document type", accessOf(documentTypeAccess))
	documentField = rowScope("document field", accessOf(documentFieldAccess))
	assetType     = rowScope("asset type", accessOf(assetTypeAccess))
	assetGroup    = rowScope("asset group", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := assetGroupAccess(ctx, q, userID, id, false)
		return a, err
	})
	asset = rowScope("asset", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := assetGroupAccess(ctx, q, userID, id, true)
		return a, err
	})
	assetLog    = rowScope("asset log", accessOf(assetLogAccess))
	assetStatus = rowScope("asset status", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.AssetStatus, error) { return q.AssetStatusGet },
		func(r db.AssetStatus) int64 { return r.OrganisationID }))
	assetZone = rowScope("asset zone", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.AssetZone, error) { return q.AssetZoneGet },
		func(r db.AssetZone) int64 { return r.OrganisationID }))
	assetField = rowScope("asset field", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.AssetField, error) { return q.AssetFieldGet },
		func(r db.AssetField) int64 { return r.OrganisationID }))
	assetSubscription = rowScope("asset subscription", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.AssetSubscription, error) {
		return q.AssetSubscriptionGet
	},
		func(r db.AssetSubscription) int64 { return r.OrganisationID }))
	integration = rowScope("integration", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.Integration, error) { return q.IntegrationGet },
		func(r db.Integration) int64 { return r.OrganisationID }))
	role = rowScope("role", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.Role, error) { return q.RoleGet },
		func(r db.Role) int64 { return r.OrganisationID }))
)

// document is a route on a document: a member needs the scope's
// permission, a non-member a share of the document that grants the scope.
func document(s DocScope) access {
	a := scoped("document", 0, byID("id", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
		_, a, err := documentAccess(ctx, q, userID, id, absentHere)
		return a, err
	}))
	a.doc = s
	return a
}

// reaching relaxes a route's check to "a member, or a share's recipient
// holding something here": for the routes whose handler decides by the
// document's share scopes or the caller's tie to the row (rule says how),
// so a caller with no tie at all is refused before the body.
func (a access) reaching(rule string) access {
	a.rule = rule
	a.check = func(_ *request, _ *db.Queries, x Access) error {
		if x.IsMember() || x.Shared != 0 || x.Permissions() != 0 {
			return nil
		}
		return x.Require(0)
	}
	return a
}

// The routes under /users/@me that name an organisation or a row of one.
var (
	// orgMember: a member of the organisation; anyone else is told so
	// with a 404, as the caller's own view of an organisation it is not in.
	orgMember = access{auth: true, scope: "organisation", rule: "member (404 to anyone else)", load: org(0).load,
		check: func(_ *request, _ *db.Queries, a Access) error {
			if !a.IsMember() {
				return notFound("You are not a member of this organisation.")
			}
			return nil
		}}
	// leaving: anyone but the owner (leaving an organisation one is not
	// in changes nothing).
	leaving = access{auth: true, scope: "organisation", rule: "anyone but the owner", load: org(0).load,
		check: func(_ *request, _ *db.Queries, a Access) error {
			if a.Owner {
				return badRequest("The owner cannot leave the organisation; transfer or delete it first.")
			}
			return nil
		}}
	// fleetSubscriber: a member of the fleet's organisation or the
	// recipient of an accepted share of the fleet; to anyone else the fleet
	// does not exist.
	fleetSubscriber = access{auth: true, scope: "fleet", rule: "member, or the recipient of a share of the fleet (404 to anyone else)",
		load: fleet(0).load, check: func(rq *request, q *db.Queries, a Access) error {
			if a.IsMember() {
				return nil
			}
			id, err := rq.pathID("id")
			if err != nil {
				return err
			}
			ok, err := holdsFleetShare(rq.ctx, q, rq.user.ID, id)
			if err == nil && !ok {
				err = notFound("The fleet does not exist.")
			}
			return err
		}}
)

// anyUser is a route any signed-in user may call; rule says what the
// handler shows or does for whom.
func anyUser(rule string) access { return access{auth: true, scope: "user", rule: rule} }

// decidedBy is a read whose handler alone can tell who reaches the row
// (the shares of a fleet it holds): rule says who. A read has no body to
// check before, and the handler's answer to anyone else is its area's.
func decidedBy(scope, rule string) access { return access{auth: true, scope: scope, rule: rule} }

// doc is a route on a document's content: a member needs perm (0:
// membership); anyone else must hold something there through a share
// (of the document, or of its project), whose scopes the handler weighs.
func doc(perm Permission) access {
	a := document(0)
	a.perm = perm
	a.rule = "or, for anyone else, a share of the document (or its project) that grants it"
	a.check = func(_ *request, _ *db.Queries, x Access) error {
		if x.IsMember() {
			return x.Require(perm)
		}
		if x.Shared != 0 || x.Permissions() != 0 {
			return nil
		}
		return x.Require(0)
	}
	return a
}

// whole makes rule the route's whole requirement, decided by check before
// the body (the table shows rule alone): for rules a permission cannot
// state, such as "a permission, or the row's author".
func (a access) whole(rule string, check func(rq *request, q *db.Queries, x Access) error) access {
	a.rule, a.check, a.wholeRule = rule, check, true
	return a
}

// invite: the path's :code names an invite, by its code or its id (the
// manage rows), in one organisation.
func invite(perm Permission) access {
	return scoped("invite", perm, func(rq *request, q *db.Queries) (Access, error) {
		inv, err := inviteManaged(rq, q)
		if err != nil {
			return Access{}, err
		}
		return authorize(rq.ctx, q, rq.user.ID, inv.OrganisationID, Scopes{})
	})
}

var (
	inductionRecord = rowScope("induction record", inOrgOf(func(q *db.Queries) func(context.Context, int64) (db.InductionRecord, error) {
		return q.InductionRecordGet
	}, func(r db.InductionRecord) int64 { return r.OrganisationID }))
	// assignedInduction: the caller's own assignment of the :id induction,
	// while it is a member of the induction's organisation; to anyone else
	// there is no such assignment.
	assignedInduction = access{auth: true, scope: "induction assignment", wholeRule: true,
		rule: "the induction's assignee, while a member (404 to anyone else)",
		load: byID("id", func(ctx context.Context, q *db.Queries, userID, id int64) (Access, error) {
			// No assignment of the caller's is the refusal, not an absent row.
			ui, err := q.UserInductionGet(ctx, db.UserInductionGetParams{InductionID: id, UserID: userID})
			if db.IsNotFound(err) {
				return Access{}, nil
			} else if err != nil {
				return Access{}, err
			}
			a, err := authorize(ctx, q, userID, ui.OrganisationID, Scopes{})
			if db.IsNotFound(err) {
				return Access{}, nil
			}
			return a, err
		}),
		check: func(_ *request, _ *db.Queries, a Access) error {
			if !a.IsMember() {
				return notFound("No such induction assigned to you.")
			}
			return nil
		}}
	// witnessing: the :id work item or document revision, for a caller
	// who may see it (witnessObject); to anyone else it does not exist.
	// The handler adds the caller's code or signing token.
	witnessing = access{auth: true, scope: "work item or revision", wholeRule: true,
		rule: "who may see the work item (VIEW_WORKITEMS, an assignee or invitee) or the revision (VIEW_DOCUMENTS); 404 to anyone else",
		load: func(*request, *db.Queries) (Access, error) { return Access{}, nil },
		check: func(rq *request, q *db.Queries, _ Access) error {
			id, err := rq.pathID("id")
			if err != nil {
				return nil // the handler answers a malformed id
			}
			_, err = witnessObject(rq.ctx, q, rq.user.ID, id)
			return err
		}}
	// docSharing: managing a document's shares, for a member holding
	// SHARE_PROJECTS or MANAGE_ORGANISATION.
	docSharing = document(0).whole("SHARE_PROJECTS or MANAGE_ORGANISATION", func(_ *request, _ *db.Queries, a Access) error {
		return a.RequireOr(a.Can(ManageOrganisation), ShareProjects)
	})
)

// The routes whose handler passes a permission or an alternative (a
// team's leader, a log's author, the user themself): the route checks
// both, so a member who holds neither is refused before its body. A row
// the path names that is absent is the handler's to answer.

// loadOrNil loads the row the path's param names and hands it to check.
// A malformed id or an absent row is nil: the handler answers it (400 or
// 404) in its own words, so the route does not decide it first.
func loadOrNil[T any](rq *request, param string, get func(context.Context, int64) (T, error), check func(T) error) error {
	id, err := rq.pathID(param)
	if err != nil {
		return nil
	}
	row, err := get(rq.ctx, id)
	if db.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	return check(row)
}

// selfOr: the path's param names a user; that user, or a holder of p.
func selfOr(param string, p Permission) func(rq *request, _ *db.Queries, a Access) error {
	return func(rq *request, _ *db.Queries, a Access) error {
		id, err := rq.pathID(param)
		if err != nil {
			return nil // the handler answers a malformed id
		}
		return a.RequireSelfOr(id, p)
	}
}

var (
	// teamManaging: MANAGE_TEAMS, or the leader of the path's :team.
	teamManaging = workgroup(0).whole("MANAGE_TEAMS, or the team's leader", func(rq *request, q *db.Queries, a Access) error {
		if err := a.Require(0); err != nil || a.Can(ManageTeams) {
			return err
		}
		wgID, err := rq.pathID("id")
		if err != nil {
			return nil
		}
		return loadOrNil(rq, "team", q.TeamGet, func(t db.Team) error {
			if t.WorkgroupID != wgID {
				return nil // another workgroup's team is absent here
			}
			m, err := q.TeamMemberGet(rq.ctx, db.TeamMemberGetParams{TeamID: t.ID, UserID: rq.user.ID})
			if err != nil && !db.IsNotFound(err) {
				return err
			}
			return a.RequireOr(err == nil && m.IsLeader, ManageTeams)
		})
	})
	// assetLogAuthor: the log's author, or MANAGE_FLEETS.
	assetLogAuthor = assetLog(0).whole("MANAGE_FLEETS, or the log's author", func(rq *request, q *db.Queries, a Access) error {
		return loadOrNil(rq, "id", q.AssetLogGet, func(l db.AssetLog) error {
			return a.RequireSelfOr(l.CreatedBy, ManageFleets)
		})
	})
	// scheduleWriting: MANAGE_TEAMS, or CREATE_WORKITEMS for a work item's
	// schedule (scheduleWriter).
	scheduleWriting = schedule(0).whole("MANAGE_TEAMS (CREATE_WORKITEMS for a work item's schedule)", func(rq *request, q *db.Queries, a Access) error {
		return loadOrNil(rq, "id", q.ScheduleGet, func(sc db.Schedule) error {
			return a.Require(scheduleWriter(sc))
		})
	})
	// orgOwner: the organisation's owner.
	orgOwner = ownerOnly("Only the owner may delete the organisation.")
	// orgOwnerUndo: the organisation's owner, alone trusted to give back
	// access the hub's fail-closed rule took (docs/sync.md).
	orgOwnerUndo = ownerOnly("Only the organisation's owner may undo a decision about access.")
	// inductionSelf: MANAGE_INDUCTIONS, or the path's :user themself.
	inductionSelf = induction(0).whole("MANAGE_INDUCTIONS, or the user themself", selfOr("user", ManageInductions))
)

// ownerOnly is a route of the organisation's owner alone; refusal says so
// to anyone else of the organisation.
func ownerOnly(refusal string) access {
	return org(0).whole("the owner", func(_ *request, _ *db.Queries, a Access) error {
		if err := a.Require(0); err != nil {
			return err
		}
		if !a.Owner {
			return forbidden("%s", refusal)
		}
		return nil
	})
}

// roleOutranking: MANAGE_ROLES, ranked above the :id role (the escalation
// rule, requireOutranks).
var roleOutranking = role(ManageRoles).whole("MANAGE_ROLES, ranked above the role", func(rq *request, q *db.Queries, a Access) error {
	if err := a.Require(ManageRoles); err != nil {
		return err
	}
	return loadOrNil(rq, "id", q.RoleGet, func(r db.Role) error {
		return requireOutranks(a, r.SortOrder)
	})
})
