package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
)

// Pruning the change log (docs/sync.md, "Pruning the log"): an entry every
// node holds and older than the retention is no longer needed to send, and
// the merge rules judge the same without it (every change made after it by
// any node saw it). The hub keeps what any node that exchanged within the
// retention lacks; a node away longer must be cloned again (the hub says
// so). A laptop keeps what the hub lacks.

// DefaultSyncRetention is how long the log keeps entries every node holds.
const DefaultSyncRetention = 30 * 24 * time.Hour

// SyncAcknowledged is, per origin of the log, the clock up to which every
// node that must still be served holds it: on the hub, the nodes (not
// revoked) that exchanged, or were paired, since `since` (one paired but
// not exchanging yet holds what its clone held: everything up to its
// pairing); with none, everything; on a laptop, what the hub held at the
// last exchange. An origin a node's vector does not name is held by it up
// to 0 (nothing pruned).
func (s *Store) SyncAcknowledged(ctx context.Context, since time.Time) (map[int64]int64, error) {
	origins := []int64{s.NodeID()}
	rows, err := s.Reader.QueryContext(ctx, `SELECT origin FROM sync_received`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var o int64
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return nil, err
		}
		origins = append(origins, o)
	}
	rows.Close()
	ack := map[int64]int64{}
	for _, o := range origins {
		ack[o] = math.MaxInt64
	}
	hold := func(vector string, pairedFloor int64) error {
		var v map[string]int64
		if err := json.Unmarshal([]byte(vector), &v); err != nil {
			return err
		}
		for _, o := range origins {
			h, ok := v[strconv.FormatInt(o, 10)]
			if !ok && len(v) == 0 {
				h = pairedFloor
			}
			ack[o] = min(ack[o], h)
		}
		return nil
	}
	var hubVector string
	err = s.Reader.QueryRowContext(ctx, `SELECT hub_vector FROM sync_hub`).Scan(&hubVector)
	if err == nil {
		return ack, hold(hubVector, 0)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	nodes, err := s.Reader.QueryContext(ctx, `SELECT vector, paired_at FROM sync_nodes
		WHERE revoked_at IS NULL AND coalesce(last_exchange_at, paired_at) >= ?`, FormatTime(since))
	if err != nil {
		return nil, err
	}
	defer nodes.Close()
	for nodes.Next() {
		var vector, paired string
		if err := nodes.Scan(&vector, &paired); err != nil {
			return nil, err
		}
		t, err := ParseTime(paired)
		if err != nil {
			return nil, err
		}
		if err := hold(vector, t.UnixMilli()<<16); err != nil {
			return nil, err
		}
	}
	return ack, nodes.Err()
}

// PruneSyncLog deletes the log's entries older than cutoff (a clock) that
// ack says every node holds (per origin; an origin it does not name is
// kept), and notes how far each origin was pruned. It returns how many entries went.
func (s *Store) PruneSyncLog(ctx context.Context, ack map[int64]int64, cutoff int64) (int64, error) {
	var pruned int64
	err := s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		for o, upto := range ack {
			upto = min(upto, cutoff)
			res, err := tx.ExecContext(ctx, `DELETE FROM sync_changes WHERE hlc <= ? AND origin = ?`, upto, o)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			if n == 0 {
				continue
			}
			pruned += n
			if _, err := tx.ExecContext(ctx, `INSERT INTO sync_pruned(origin, hlc) VALUES (?, ?)
				ON CONFLICT(origin) DO UPDATE SET hlc = max(hlc, excluded.hlc)`, o, upto); err != nil {
				return err
			}
		}
		return nil
	})
	return pruned, err
}
