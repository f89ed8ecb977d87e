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
// block already held is kept once), then gives provisional work item and
// system numbers real ones from them, oldest first; what no block covers
// stays provisional until the next exchange.
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
		formats := map[int64]PrefixesOfOrganisationRow{}
		items, err := q.WorkItemsProvisional(ctx, node)
		if err != nil {
			return err
		}
		for _, w := range items {
			counter := "work_item"
			if w.PrefixID != nil {
				counter = PrefixCounter(*w.PrefixID)
			}
			n, err := q.NumberBlockDraw(ctx, NumberBlockDrawParams{OrganisationID: w.OrganisationID, Counter: counter})
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			formatted := strconv.FormatInt(n, 10)
			if w.PrefixID != nil {
				p, ok := formats[*w.PrefixID]
				if !ok {
					ps, err := q.PrefixesOfOrganisation(ctx, w.OrganisationID)
					if err != nil {
						return err
					}
					for _, x := range ps {
						formats[x.ID] = x
					}
					p = formats[*w.PrefixID]
				}
				formatted = FormatNumber(p.NumberFormat, p.NumberDigits, n)
			}
			if err := q.WorkItemRenumber(ctx, WorkItemRenumberParams{Number: n, FormattedNumber: formatted, ID: w.ID}); err != nil {
				return err
			}
		}
		systems, err := q.SystemsProvisional(ctx, node)
		if err != nil {
			return err
		}
		for _, sy := range systems {
			n, err := q.NumberBlockDraw(ctx, NumberBlockDrawParams{OrganisationID: sy.OrganisationID, Counter: "system"})
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if err := q.SystemRenumber(ctx, SystemRenumberParams{Number: n, ID: sy.ID}); err != nil {
				return err
			}
		}
		return nil
	})
}
