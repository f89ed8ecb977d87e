package db

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
)

// Number blocks (docs/sync.md "Number blocks"). The hub draws numbers from
// its counters as it always did. A clone draws from blocks it leased from
// the hub during an exchange (GrantNumberBlocks on the hub, then
// AcceptNumberBlocks on the clone), so two offices never hand out one
// number; out of blocks it hands out provisional numbers (negative, unique
// by its node id, formatted PROV-<node>-<n>), and AcceptNumberBlocks
// replaces them with real ones. A clone never moves the counters
// themselves (prefixes.last_number, organisation_counters): the hub's
// leases move them, and those changes reach the clone like any other.

// DefaultNumberBlock is the size of a leased block; a new one is leased
// when fewer than half of it are left.
const DefaultNumberBlock = 100

// NumberBlock is a run of numbers of one counter of an organisation:
// "prefix:<id>" for a prefix, else an organisation counter's name ("work_item",
// "system", "documents", "merge_requests", "asset"). Left: how many of it a
// clone has not drawn yet (HeldNumberBlocks).
type NumberBlock struct {
	OrganisationID int64  `json:"organisation_id"`
	Counter        string `json:"counter"`
	First          int64  `json:"first"`
	Last           int64  `json:"last"`
	Left           int64  `json:"left,omitempty"`
}

// orgCounters are the organisation counters a block is leased of (the
// server's names: workItemCounter, systemCounter, documentCounter,
// mergeRequestCounter and the asset counter).
var orgCounters = []string{"work_item", "system", "documents", "merge_requests", "asset"}

// SetNumberBlockSize sets the size of the blocks this hub leases (the
// setting; DefaultNumberBlock when not set).
func (s *Store) SetNumberBlockSize(n int64) { s.numberBlock.Store(n) }

// PrefixCounter names a prefix's counter.
func PrefixCounter(prefixID int64) string { return "prefix:" + strconv.FormatInt(prefixID, 10) }

// DrawLeased draws, on a clone, the next number of an organisation's
// counter from its leased blocks; with none left a provisional number.
// leased is false on the hub (and on a database that never synced): the
// caller draws from the counter itself, as before.
func DrawLeased(ctx context.Context, q *Queries, org int64, counter string) (n int64, provisional, leased bool, err error) {
	clone, err := q.SyncIsClone(ctx)
	if err != nil || !clone {
		return 0, false, false, err
	}
	n, err = q.NumberBlockDraw(ctx, NumberBlockDrawParams{OrganisationID: org, Counter: counter})
	if err == nil {
		return n, false, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, true, err
	}
	k, err := q.NumberProvisionalNext(ctx, NumberProvisionalNextParams{OrganisationID: org, Counter: counter})
	if err != nil {
		return 0, false, true, err
	}
	node, err := q.SyncCloneNode(ctx)
	if err != nil {
		return 0, false, true, err
	}
	return -(node<<32 | k), true, true, nil
}

// ProvisionalText is how a provisional number reads: PROV-<node>-<n>.
func ProvisionalText(n int64) string {
	m := -n
	return "PROV-" + strconv.FormatInt(m>>32, 10) + "-" + strconv.FormatInt(m&(1<<32-1), 10)
}

// FormatNumber fills a prefix's template ({number} zero-padded to digits;
// a provisional number as ProvisionalText).
func FormatNumber(format string, digits *int64, n int64) string {
	if n < 0 {
		return strings.ReplaceAll(format, "{number}", ProvisionalText(n))
	}
	num := strconv.FormatInt(n, 10)
	if digits != nil && int64(len(num)) < *digits {
		num = strings.Repeat("0", int(*digits)-len(num)) + num
	}
	return strings.ReplaceAll(format, "{number}", num)
}

// HeldNumberBlocks (on a clone): how many numbers it has left of each
// counter, to send with its exchange so the hub leases what runs low.
func (s *Store) HeldNumberBlocks(ctx context.Context) ([]NumberBlock, error) {
	rows, err := s.R.NumberBlocksHeld(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]NumberBlock, len(rows))
	for i, r := range rows {
		out[i] = NumberBlock{OrganisationID: r.OrganisationID, Counter: r.Counter, Left: r.LeftCount}
	}
	return out, nil
}

// GrantNumberBlocks (on the hub, during an exchange with node nodeID):
// for every prefix and counter of the organisations orgs of which the
// node holds fewer than half a block (held: what HeldNumberBlocks said
// there), a new block: the hub's counter moves past it (a change that
// reaches every node), and the grant is recorded. Only the hub leases.
func (s *Store) GrantNumberBlocks(ctx context.Context, nodeID int64, orgs []int64, held []NumberBlock) ([]NumberBlock, error) {
	if !s.IsSyncHub() {
		return nil, errors.New("sync: only the hub leases number blocks")
	}
	left := map[[2]string]int64{}
	for _, h := range held {
		left[[2]string{strconv.FormatInt(h.OrganisationID, 10), h.Counter}] += h.Left
	}
	size := s.numberBlock.Load()
	if size <= 0 {
		size = DefaultNumberBlock
	}
	var out []NumberBlock
	err := s.InTx(ctx, func(q *Queries) error {
		out = out[:0]
		now := FormatTime(s.clock.now())
		for _, org := range orgs {
			prefixes, err := q.PrefixesOfOrganisation(ctx, org)
			if err != nil {
				return err
			}
			counters := make([]string, 0, len(prefixes)+len(orgCounters))
			for _, p := range prefixes {
				counters = append(counters, PrefixCounter(p.ID))
			}
			counters = append(counters, orgCounters...)
			for _, c := range counters {
				if left[[2]string{strconv.FormatInt(org, 10), c}]*2 >= size {
					continue
				}
				var last int64
				if id, ok := strings.CutPrefix(c, "prefix:"); ok {
					pid, _ := strconv.ParseInt(id, 10, 64)
					last, err = q.PrefixLease(ctx, PrefixLeaseParams{Size: size, ID: pid, OrganisationID: org})
				} else {
					last, err = q.CounterLease(ctx, CounterLeaseParams{OrganisationID: org, Name: c, Size: size})
				}
				if err != nil {
					return err
				}
				b := NumberBlock{OrganisationID: org, Counter: c, First: last - size + 1, Last: last}
				if err := q.NumberGrantRecord(ctx, NumberGrantRecordParams{Node: nodeID, OrganisationID: org, Counter: c,
					First: b.First, Last: b.Last, GrantedAt: now}); err != nil {
					return err
				}
				out = append(out, b)
			}
		}
		return nil
	})
	return out, err
}

// AcceptNumberBlocks (on a clone): keeps the blocks the hub granted (a
// block already held is kept once), then gives this node's provisional
// numbers real ones from them, every kind in provisionalKinds, oldest
// first; what no block covers stays provisional until the next exchange.
func (s *Store) AcceptNumberBlocks(ctx context.Context, blocks []NumberBlock) error {
	return s.InTx(ctx, func(q *Queries) error {
		for _, b := range blocks {
			if b.First < 1 || b.Last < b.First || b.Counter == "" || strings.HasPrefix(b.Counter, "provisional:") {
				return refuse("a number block %+v", b)
			}
			if err := q.NumberBlockAccept(ctx, NumberBlockAcceptParams{OrganisationID: b.OrganisationID, Counter: b.Counter,
				First: b.First, Last: b.Last}); err != nil {
				return err
			}
		}
		node, err := q.SyncCloneNode(ctx)
		if err != nil {
			return err
		}
		rn := renumbering{ctx: ctx, q: q, node: node, prefixes: map[int64][]PrefixesOfOrganisationRow{}}
		for _, k := range provisionalKinds {
			rows, err := k.list(ctx, q, node)
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := rn.renumber(k, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// provisionalRow is a row numbered provisionally (or, for a document, whose
// prefix number is): number is the row's counter number, formatted its
// text (empty for kinds with none).
type provisionalRow struct {
	id, org   int64
	prefixID  *int64
	typeID    *int64
	number    int64
	formatted string
}

// provisionalKind is one kind of numbered row: which counter numbers it
// (a prefix's when prefixID is set), how its text is made and how it is
// written back. Documents are numbered by the organisation's counter and,
// when made from a prefix, carry the prefix's number as their text (the
// prefix id is not kept: renumbering finds it by its template).
type provisionalKind struct {
	table, counter string
	list           func(context.Context, *Queries, int64) ([]provisionalRow, error)
	write          func(context.Context, *Queries, provisionalRow) error
	text           bool // a formatted_number made from the number
	document       bool
}

var provisionalKinds = []provisionalKind{
	{table: "work_items", counter: "work_item", text: true,
		list: func(ctx context.Context, q *Queries, node int64) ([]provisionalRow, error) {
			rows, err := q.WorkItemsProvisional(ctx, node)
			return mapRows(rows, err, func(r WorkItemsProvisionalRow) provisionalRow {
				return provisionalRow{id: r.ID, org: r.OrganisationID, prefixID: r.PrefixID}
			})
		},
		write: func(ctx context.Context, q *Queries, r provisionalRow) error {
			return q.WorkItemRenumber(ctx, WorkItemRenumberParams{Number: r.number, FormattedNumber: r.formatted, ID: r.id})
		}},
	{table: "systems", counter: "system",
		list: func(ctx context.Context, q *Queries, node int64) ([]provisionalRow, error) {
			rows, err := q.SystemsProvisional(ctx, node)
			return mapRows(rows, err, func(r SystemsProvisionalRow) provisionalRow {
				return provisionalRow{id: r.ID, org: r.OrganisationID}
			})
		},
		write: func(ctx context.Context, q *Queries, r provisionalRow) error {
			return q.SystemRenumber(ctx, SystemRenumberParams{Number: r.number, ID: r.id})
		}},
	{table: "documents", counter: "documents", document: true,
		list: func(ctx context.Context, q *Queries, node int64) ([]provisionalRow, error) {
			rows, err := q.DocumentsProvisional(ctx, node)
			return mapRows(rows, err, func(r DocumentsProvisionalRow) provisionalRow {
				return provisionalRow{id: r.ID, org: r.OrganisationID, typeID: r.TypeID, number: r.Number, formatted: r.FormattedNumber}
			})
		},
		write: func(ctx context.Context, q *Queries, r provisionalRow) error {
			if err := q.DocumentRenumber(ctx, DocumentRenumberParams{Number: r.number, FormattedNumber: r.formatted, ID: r.id}); err != nil {
				return err
			}
			if r.typeID == nil || r.number < 0 {
				return nil
			}
			// The type's count of numbers (a high-water mark) as when drawn online.
			return q.DocumentTypeNumbered(ctx, DocumentTypeNumberedParams{ID: *r.typeID, Number: r.number})
		}},
	{table: "document_merge_requests", counter: "merge_requests",
		list: func(ctx context.Context, q *Queries, node int64) ([]provisionalRow, error) {
			rows, err := q.MergeRequestsProvisional(ctx, node)
			return mapRows(rows, err, func(r MergeRequestsProvisionalRow) provisionalRow {
				return provisionalRow{id: r.ID, org: r.OrganisationID}
			})
		},
		write: func(ctx context.Context, q *Queries, r provisionalRow) error {
			return q.MergeRequestRenumber(ctx, MergeRequestRenumberParams{Number: r.number, ID: r.id})
		}},
	{table: "asset_groups", counter: "asset", text: true,
		list: func(ctx context.Context, q *Queries, node int64) ([]provisionalRow, error) {
			rows, err := q.AssetGroupsProvisional(ctx, node)
			return mapRows(rows, err, func(r AssetGroupsProvisionalRow) provisionalRow {
				return provisionalRow{id: r.ID, org: r.OrganisationID, prefixID: r.PrefixID}
			})
		},
		write: func(ctx context.Context, q *Queries, r provisionalRow) error {
			n, f := r.number, r.formatted
			return q.AssetGroupRenumber(ctx, AssetGroupRenumberParams{Number: &n, FormattedNumber: &f, ID: r.id})
		}},
}

func mapRows[T any](rows []T, err error, f func(T) provisionalRow) ([]provisionalRow, error) {
	if err != nil {
		return nil, err
	}
	out := make([]provisionalRow, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out, nil
}

// renumbering is one AcceptNumberBlocks pass: the prefixes' templates of
// the organisations met so far.
type renumbering struct {
	ctx      context.Context
	q        *Queries
	node     int64
	prefixes map[int64][]PrefixesOfOrganisationRow
}

// draw takes the next leased number of a counter; ok false when no block
// has one left (the row stays provisional).
func (rn *renumbering) draw(org int64, counter string) (int64, bool, error) {
	n, err := rn.q.NumberBlockDraw(rn.ctx, NumberBlockDrawParams{OrganisationID: org, Counter: counter})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return n, err == nil, err
}

func (rn *renumbering) orgPrefixes(org int64) ([]PrefixesOfOrganisationRow, error) {
	if ps, ok := rn.prefixes[org]; ok {
		return ps, nil
	}
	ps, err := rn.q.PrefixesOfOrganisation(rn.ctx, org)
	rn.prefixes[org] = ps
	return ps, err
}

func (rn *renumbering) prefix(org, id int64) (PrefixesOfOrganisationRow, error) {
	ps, err := rn.orgPrefixes(org)
	for _, p := range ps {
		if p.ID == id {
			return p, err
		}
	}
	return PrefixesOfOrganisationRow{NumberFormat: "{number}"}, err
}

// renumber gives r real numbers where it has provisional ones and blocks
// allow, and writes it when anything changed.
func (rn *renumbering) renumber(k provisionalKind, r provisionalRow) error {
	if k.document {
		return rn.renumberDocument(k, r)
	}
	counter := k.counter
	if r.prefixID != nil {
		counter = PrefixCounter(*r.prefixID)
	}
	n, ok, err := rn.draw(r.org, counter)
	if err != nil || !ok {
		return err
	}
	r.number = n
	if k.text {
		r.formatted = strconv.FormatInt(n, 10)
		if r.prefixID != nil {
			p, err := rn.prefix(r.org, *r.prefixID)
			if err != nil {
				return err
			}
			r.formatted = FormatNumber(p.NumberFormat, p.NumberDigits, n)
		}
	}
	return k.write(rn.ctx, rn.q, r)
}

// renumberDocument: a provisional organisation number is replaced from the
// documents counter, and the text with it when the text was made from it
// (plain or by the type's template); a text made from a prefix that reads
// this node's PROV-<node>-<n> gets the prefix's next leased number, the
// prefix found as the one whose template gives exactly that text.
func (rn *renumbering) renumberDocument(k provisionalKind, r provisionalRow) error {
	old, changed := r, false
	if r.number < 0 && (-r.number)>>32 == rn.node {
		n, ok, err := rn.draw(r.org, k.counter)
		if err != nil {
			return err
		}
		if ok {
			typeFormat := ""
			if r.typeID != nil {
				if typeFormat, err = rn.q.DocumentTypeFormat(rn.ctx, *r.typeID); err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			switch {
			case r.formatted == ProvisionalText(old.number):
				r.formatted = strconv.FormatInt(n, 10)
			case typeFormat != "" && r.formatted == FormatNumber(typeFormat, nil, old.number):
				r.formatted = FormatNumber(typeFormat, nil, n)
			}
			r.number, changed = n, true
		}
	}
	if p, ok, err := rn.documentPrefix(r); err != nil {
		return err
	} else if ok {
		n, drawn, err := rn.draw(r.org, PrefixCounter(p.ID))
		if err != nil {
			return err
		}
		if drawn {
			r.formatted, changed = FormatNumber(p.NumberFormat, p.NumberDigits, n), true
		}
	}
	if !changed {
		return nil
	}
	return k.write(rn.ctx, rn.q, r)
}

// documentPrefix finds the prefix whose template made r's text from a
// provisional number of this node (PROV-<node>-<k> in it); with several
// alike templates the lowest id (they would read alike online too).
func (rn *renumbering) documentPrefix(r provisionalRow) (PrefixesOfOrganisationRow, bool, error) {
	mark := "PROV-" + strconv.FormatInt(rn.node, 10) + "-"
	i := strings.Index(r.formatted, mark)
	if i < 0 {
		return PrefixesOfOrganisationRow{}, false, nil
	}
	digits := r.formatted[i+len(mark):]
	j := 0
	for j < len(digits) && digits[j] >= '0' && digits[j] <= '9' {
		j++
	}
	k, err := strconv.ParseInt(digits[:j], 10, 64)
	if err != nil || k < 1 || k >= 1<<32 {
		return PrefixesOfOrganisationRow{}, false, nil
	}
	pn := -(rn.node<<32 | k)
	ps, err := rn.orgPrefixes(r.org)
	if err != nil {
		return PrefixesOfOrganisationRow{}, false, err
	}
	for _, p := range ps {
		if FormatNumber(p.NumberFormat, p.NumberDigits, pn) == r.formatted {
			return p, true, nil
		}
	}
	return PrefixesOfOrganisationRow{}, false, nil
}
