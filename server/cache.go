package server

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"workspace/db"
)

// genCache keeps values computed from the database while nothing has been
// written. Every write goes through the store's write loop, which moves the
// write generation to an odd number when a batch begins and to the next even
// number when it has committed (or rolled back), before any writer is
// answered. An entry is trusted only at the even generation it was filled
// at, so the first request after any write computes afresh: a cached value
// is never served across a change, and a request answered 2xx for a write
// never sees the value from before it. Nothing is cached or served while a
// batch runs (odd generation), so a write transaction never reads a value
// that misses its own batch's changes.
//
// Another process writing the same file (`workspace admin create`, say)
// moves the generation too: the idle writer notices such a commit within
// 100 ms (db.externalWritePoll). Entries also expire after genCacheTTL, a
// bound on what a missed notice could cost.
type genCache[K comparable, V any] struct {
	mu      sync.Mutex
	gen     uint64
	entries map[K]genEntry[V]
	limit   int // entries kept at most; 0: genCacheMax
}

type genEntry[V any] struct {
	v    V
	read time.Time
}

const (
	genCacheTTL = 30 * time.Second
	// genCacheMax bounds memory: a full cache starts again empty.
	genCacheMax = 10_000
	// scopeCacheMax: one entry per project or package read, most of them an
	// empty grant list (about 100 bytes), so a large organisation fits.
	scopeCacheMax = 200_000
	// pageCacheMax: id lists of at most maxCachedIDs each (400 KB).
	pageCacheMax = 64
)

func (c *genCache[K, V]) get(k K, gen uint64) (V, bool) {
	var zero V
	if gen%2 == 1 {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return zero, false
	}
	e, ok := c.entries[k]
	if !ok || time.Since(e.read) > genCacheTTL {
		return zero, false
	}
	return e.v, true
}

// put stores a value computed from reads that all began after gen was read
// (so a write racing them leaves the entry under an older generation, never
// trusted).
func (c *genCache[K, V]) put(k K, v V, gen uint64) {
	if gen%2 == 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		if gen < c.gen {
			return
		}
		c.gen = gen
		// A new map rather than clear: clear keeps a large map's buckets,
		// memory an idle cache would hold through every later write.
		c.entries = nil
	}
	limit := c.limit
	if limit == 0 {
		limit = genCacheMax
	}
	if c.entries == nil || len(c.entries) >= limit {
		c.entries = make(map[K]genEntry[V])
	}
	c.entries[k] = genEntry[V]{v: v, read: time.Now()}
}

// accessCache serves authorize for reads: a request repeats the
// caller's membership, roles and grants an earlier request already resolved.
// It keeps them in two parts so thousands of projects do not multiply the
// entries: each caller's standing in an organisation, and each lower scope's
// grants (for whoever they are), picked per caller on use.
type accessCache struct {
	store    *db.Store
	standing genCache[[2]int64, standing] // by (user, organisation)
	scopes   genCache[int64, []db.AccessScopeGrantsRow]
	// pages keeps the ids each list query matches (lists.go), rows the
	// project list rows read, encoded (projectPartials), visible what a
	// caller sees of a layer (visibleFor).
	pages genCache[string, []int64]
	rows  genCache[int64, []byte]
	// paged counts the index entries each list query read from the
	// database in this generation instead of filling pages (fillPays);
	// fills counts fills, for the tests.
	paged   genCache[string, int64]
	fills   atomic.Int64
	visible genCache[visibilityKey, visibility]
	// tagged serves write transactions, which the generation cannot (every
	// write batch moves it): a standing is reused while the organisation's
	// access tag (access_versions, kept by triggers) is the one it was
	// read at.
	taggedMu sync.Mutex
	tagged   map[[2]int64]taggedStanding
	// tags memoises each organisation's tag inside write transactions.
	tags stampMemo[int64, int64]
}

type taggedStanding struct {
	tag int64
	st  standing
}

// taggedMax bounds the write path's standings (about 300 bytes each).
const taggedMax = 10_000

// standing is a caller's organisation-level access, with the grants and
// roles the lower layers are resolved with.
type standing struct {
	access    Access
	orgGrants []Grant
	roles     []int64
}

// authorizeCached is authorize from the cache; TestCachedAuthorizeMatches
// holds it to resolveAccess's answers.
func (c *accessCache) authorize(ctx context.Context, q *db.Queries, gen uint64, userID, orgID int64, sc Scopes) (Access, error) {
	st, ok := c.standing.get([2]int64{userID, orgID}, gen)
	if !ok {
		// Under writes the generation moves with every batch, and the
		// route's access check runs before every handler: the
		// organisation's access tag, read in this snapshot, says whether
		// the standing read at that tag still holds (one indexed read
		// instead of three).
		tag, err := q.AccessVersion(ctx, orgID)
		if err != nil {
			return Access{}, err
		}
		if st, err = c.standingAtTag(ctx, q, userID, orgID, tag); err != nil {
			return Access{}, err
		}
		c.standing.put([2]int64{userID, orgID}, st, gen)
	}
	a := st.access
	a.Scopes = sc
	if !a.needsGrants() || !sc.layered() {
		return a, nil
	}
	grants := append([]Grant(nil), st.orgGrants...)
	for _, id := range sc.ids(orgID)[1:] {
		rows, ok := c.scopes.get(id, gen)
		if !ok {
			var err error
			if rows, err = q.AccessScopeGrants(ctx, db.AccessScopeGrantsParams{ScopeID: id, OrganisationID: orgID}); err != nil {
				return Access{}, err
			}
			c.scopes.put(id, rows, gen)
		}
		for _, r := range rows {
			if !appliesTo(r.TargetType, r.TargetID, userID, orgID, st.roles) {
				continue
			}
			g, err := grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
			if err != nil {
				return Access{}, err
			}
			grants = append(grants, g)
		}
	}
	a.perms = withProjectImplications(sc, Effective(grants))
	return a, nil
}

// writeStanding is a caller's organisation-level access inside a write
// transaction. The tag and, on a miss, the standing are read in that one
// transaction, so a standing is reused only when the organisation's
// members, roles, role assignments and organisation grants are in the state
// it was read from: a change committed or made earlier in the same batch
// has set another tag.
func (c *accessCache) writeStanding(ctx context.Context, q *db.Queries, userID, orgID int64) (standing, error) {
	tag, err := c.accessTag(ctx, q, orgID)
	if err != nil {
		return standing{}, err
	}
	return c.standingAtTag(ctx, q, userID, orgID, tag)
}

// standingAtTag is the caller's standing when the organisation's access
// tag, read in q's transaction, is tag: the one remembered at that tag
// (tags are random per change of members, roles, assignments or grants),
// else read in q's transaction and remembered.
func (c *accessCache) standingAtTag(ctx context.Context, q *db.Queries, userID, orgID, tag int64) (standing, error) {
	key := [2]int64{userID, orgID}
	c.taggedMu.Lock()
	e, ok := c.tagged[key]
	c.taggedMu.Unlock()
	if ok && e.tag == tag {
		return e.st, nil
	}
	st, err := loadStanding(ctx, q, userID, orgID)
	if err != nil {
		return standing{}, err
	}
	c.taggedMu.Lock()
	if c.tagged == nil || len(c.tagged) >= taggedMax {
		c.tagged = make(map[[2]int64]taggedStanding)
	}
	c.tagged[key] = taggedStanding{tag: tag, st: st}
	c.taggedMu.Unlock()
	return st, nil
}

// accessTag is the organisation's access tag inside a write transaction,
// read again only when access_versions was written since (db.WriterStamp):
// reading it for every write cost as much as the check it saves.
func (c *accessCache) accessTag(ctx context.Context, q *db.Queries, orgID int64) (int64, error) {
	stamp := c.store.WriterStamp(db.TableAccessVersions)
	if tag, ok := c.tags.get(orgID, stamp); ok {
		return tag, nil
	}
	tag, err := q.AccessVersion(ctx, orgID)
	if err != nil {
		return 0, err
	}
	c.tags.put(orgID, tag, stamp)
	return tag, nil
}

// stampMemo keeps values read inside write transactions while the
// db.WriterStamp they were read at is current; a new stamp, or a full memo,
// starts it again.
type stampMemo[K comparable, V any] struct {
	mu    sync.Mutex
	stamp [2]uint64
	m     map[K]V
}

// stampMemoMax bounds a memo (one entry per organisation, or per
// organisation and item type).
const stampMemoMax = 10_000

func (c *stampMemo[K, V]) get(k K, stamp [2]uint64) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stamp != stamp {
		var zero V
		return zero, false
	}
	v, ok := c.m[k]
	return v, ok
}

// put stores v read when the stamp was stamp (read before the query).
func (c *stampMemo[K, V]) put(k K, v V, stamp [2]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stamp != stamp || c.m == nil || len(c.m) >= stampMemoMax {
		c.stamp, c.m = stamp, make(map[K]V)
	}
	c.m[k] = v
}

// appliesTo reports whether a grant's target is the caller: the caller
// itself, one of its roles, or @everyone (the organisation's own id).
func appliesTo(targetType string, targetID, userID, orgID int64, roles []int64) bool {
	switch targetType {
	case "user":
		return targetID == userID
	case "role":
		return slices.Contains(roles, targetID)
	case "organisation":
		return targetID == orgID
	}
	return false
}

// loadStanding reads a caller's organisation-level access with its grants
// and roles.
func loadStanding(ctx context.Context, q *db.Queries, userID, orgID int64) (standing, error) {
	m, err := q.AccessMembership(ctx, db.AccessMembershipParams{UserID: userID, OrganisationID: orgID})
	if err != nil {
		return standing{}, db.Classify(err)
	}
	st := standing{access: newAccess(orgID, userID, m.IsOwner, m.IsMember, m.Pending, m.TopRank)}
	st.access.Org = m.Organisation
	if !st.access.needsGrants() {
		return st, nil
	}
	rows, err := q.AccessGrants(ctx, db.AccessGrantsParams{OrganisationID: orgID, ScopeIdsJson: idsJSON([]int64{orgID}), UserID: userID})
	if err != nil {
		return standing{}, err
	}
	for _, r := range rows {
		g, err := grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
		if err != nil {
			return standing{}, err
		}
		st.orgGrants = append(st.orgGrants, g)
	}
	if st.roles, err = q.AccessMemberRoles(ctx, db.AccessMemberRolesParams{OrganisationID: orgID, UserID: userID}); err != nil {
		return standing{}, err
	}
	st.access.perms = Effective(st.orgGrants)
	return st, nil
}

type accessCacheKey struct{}

// requestAccess is a request's tie to the access cache, and what its
// route's check resolved (routeResolved): one context value per request.
type requestAccess struct {
	cache *accessCache
	route routeResolved
}

// withAccessCache lets authorize, a plain function every loader calls, find
// the server's cache without threading the server through every loader.
func withAccessCache(ctx context.Context, c *accessCache) context.Context {
	return context.WithValue(ctx, accessCacheKey{}, &requestAccess{cache: c})
}

// requestAccessOf is ctx's requestAccess, nil without one.
func requestAccessOf(ctx context.Context) *requestAccess {
	r, _ := ctx.Value(accessCacheKey{}).(*requestAccess)
	return r
}

// writeAccessCache returns the cache for a write transaction's q (one the
// generation cannot serve: see cachedAccess), nil without one.
func writeAccessCache(ctx context.Context, q *db.Queries) *accessCache {
	r := requestAccessOf(ctx)
	if r == nil || r.cache == nil {
		return nil
	}
	c := r.cache
	if _, ok := c.store.ReadGeneration(q); ok {
		return nil
	}
	return c
}

// cachedAccess returns the cache authorize may use for q, and the
// generation to use it at; nil for a write transaction's q (see
// db.Store.ReadGeneration).
func cachedAccess(ctx context.Context, q *db.Queries) (*accessCache, uint64) {
	r := requestAccessOf(ctx)
	if r == nil || r.cache == nil {
		return nil, 0
	}
	c := r.cache
	gen, ok := c.store.ReadGeneration(q)
	if !ok {
		return nil, 0
	}
	return c, gen
}
