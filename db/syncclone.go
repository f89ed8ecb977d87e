package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The clone (docs/sync.md, Pairing and clone): the hub writes a copy of its
// database holding only the paired organisations' replicated rows, the
// accounts they need and their part of the change log; the node opens it
// under the node id the hub assigned. The log comes along so the
// later-wins rule on the node knows which columns a later change already
// set, exactly as on the hub.

// SyncWriteClone writes to path (which must not exist) a copy of this
// database for a node paired for orgs, with node as its node id. What is
// not the organisations' is deleted from the copy, which is then vacuumed
// so no freed page keeps another organisation's rows. It returns how many
// rows were dropped because they referred to rows that stayed behind (a
// share to another organisation).
func (s *Store) SyncWriteClone(ctx context.Context, path string, orgs []int64, node int64) (dropped int, err error) {
	if len(orgs) == 0 {
		return 0, errors.New("sync clone: no organisations")
	}
	if err := s.copyInto(ctx, path); err != nil {
		return 0, fmt.Errorf("sync clone: copy: %w", err)
	}
	c, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=foreign_keys(0)&_pragma=temp_store(MEMORY)")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	ob, _ := json.Marshal(orgs)
	if dropped, err = pruneClone(ctx, c, string(ob), node); err != nil {
		return 0, fmt.Errorf("sync clone: %w", err)
	}
	if _, err := c.ExecContext(ctx, `VACUUM`); err != nil {
		return 0, fmt.Errorf("sync clone: vacuum: %w", err)
	}
	return dropped, c.Close()
}

// copyInto copies one consistent snapshot of the database to path, taken
// by a reader (writes go on): readers are query-only, which VACUUM INTO's
// write to another file needs lifted on that connection for the copy.
func (s *Store) copyInto(ctx context.Context, path string) error {
	conn, err := s.Reader.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA query_only = 0`); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, path)
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA query_only = 1`); rerr != nil {
		// A reader that could write must not go back to the pool.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(err, rerr)
	}
	return err
}

func pruneClone(ctx context.Context, c *sql.DB, orgsJSON string, node int64) (int, error) {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
	var tables []string
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return 0, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	inOrgs := `(SELECT value FROM json_each('` + strings.ReplaceAll(orgsJSON, "'", "") + `'))`
	members := `(SELECT user_id FROM organisation_members WHERE organisation_id IN ` + inOrgs + `)`
	var noOrg []string
	// Rows of an organisation first; rows found through a parent after
	// their parents; rows of no organisation last, kept when referred to.
	for pass := 0; pass < 2; pass++ {
		for _, name := range tables {
			p, ok := SyncCatalogue[name]
			if !ok {
				return 0, fmt.Errorf("table %s has no sync policy", name)
			}
			q := `DELETE FROM ` + quoteIdent(name)
			switch {
			case pass == 1 && p.Policy == Replicated && p.OrgVia != nil:
				err = exec(q + ` WHERE coalesce(` + quoteIdent(p.OrgVia.Column) + `, -1) NOT IN (SELECT id FROM ` + quoteIdent(p.OrgVia.Table) + `)`)
			case pass == 1:
				continue
			case name == "schema_migrations" || name == "sync_received":
				// The copy holds what the hub held of every origin.
			case name == "meta":
				err = exec(`DELETE FROM meta WHERE key IN ('node_id', 'sync_clone')`)
				if err == nil {
					err = exec(`INSERT INTO meta(key, value) VALUES ('node_id', ?)`, strconv.FormatInt(node, 10))
				}
			case name == "sync_changes":
				err = exec(q + ` WHERE NOT (coalesce(org, -1) IN ` + inOrgs + ` OR (org IS NULL AND tbl = 'users' AND json_extract(pk, '$[0]') IN ` + members + `))`)
			case p.Policy == Local || p.Policy == Derived:
				err = exec(q) // derived tables are rebuilt by the node
			case p.Org != "":
				err = exec(q + ` WHERE coalesce(` + quoteIdent(p.Org) + `, -1) NOT IN ` + inOrgs)
			case p.OrgVia == nil:
				noOrg = append(noOrg, name)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	// Rows of no organisation: an account stays when it is a member's or
	// a kept row refers to it (a creator who left); its e-mail addresses,
	// identities and second factor only for members, and a password only
	// for members, who sign in on the node. Blobs stay when a kept row
	// refers to them, chunks when a kept revision reaches them.
	// Files last: a file stays when a kept row names it, the accounts
	// kept included (their avatars).
	sort.SliceStable(noOrg, func(i, j int) bool { return noOrg[j] == "blobs" && noOrg[i] != "blobs" })
	for _, name := range noOrg {
		var err error
		switch name {
		case "blobs":
			var refs []string
			refs, err = referrers(ctx, tx, tables, "blobs")
			for table, cols := range blobColumns {
				for _, c := range cols {
					refs = append(refs, `SELECT `+quoteIdent(c)+` AS v FROM `+quoteIdent(table))
				}
			}
			if err == nil {
				sort.Strings(refs)
				err = exec(`DELETE FROM blobs WHERE hash NOT IN ` + refsIn(refs))
			}
		case "users":
			var refs []string
			refs, err = referrers(ctx, tx, tables, "users")
			if err == nil {
				err = exec(`DELETE FROM users WHERE id NOT IN ` + members + ` AND id NOT IN ` + refsIn(refs))
			}
			if err == nil {
				err = exec(`UPDATE users SET password_hash = '' WHERE id NOT IN ` + members)
			}
		case "document_chunks":
			err = keepReachableChunks(ctx, tx)
		case "user_emails", "user_identities", "user_totp_secrets":
			err = exec(`DELETE FROM ` + quoteIdent(name) + ` WHERE user_id NOT IN ` + members)
		default:
			var refs []string
			var pk string
			refs, err = referrers(ctx, tx, tables, name)
			if err == nil {
				err = tx.QueryRowContext(ctx, `SELECT name FROM pragma_table_info(?) WHERE pk = 1`, name).Scan(&pk)
			}
			if err == nil {
				err = exec(`DELETE FROM ` + quoteIdent(name) + ` WHERE ` + quoteIdent(pk) + ` NOT IN ` + refsIn(refs))
			}
		}
		if err != nil {
			return 0, err
		}
	}
	// Rows that refer to rows left behind (a share to another
	// organisation's member, a row of a deleted parent) cannot stand in
	// the copy: dropped, and counted for the log.
	dropped := 0
	for round := 0; ; round++ {
		if round > 20 {
			return 0, errors.New("references still broken after 20 rounds")
		}
		type bad struct {
			table string
			rowid sql.NullInt64
		}
		var bads []bad
		rows, err := tx.QueryContext(ctx, `SELECT "table", rowid FROM pragma_foreign_key_check`)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var b bad
			if err := rows.Scan(&b.table, &b.rowid); err != nil {
				rows.Close()
				return 0, err
			}
			bads = append(bads, b)
		}
		rows.Close()
		if len(bads) == 0 {
			break
		}
		for _, b := range bads {
			if !b.rowid.Valid {
				return 0, fmt.Errorf("a %s row refers to a row the clone does not hold", b.table)
			}
			if err := exec(`DELETE FROM `+quoteIdent(b.table)+` WHERE rowid = ?`, b.rowid.Int64); err != nil {
				return 0, err
			}
			dropped++
		}
	}
	return dropped, tx.Commit()
}

// refsIn is the set of values the referrers' SELECTs give, without NULL
// (a NULL in a NOT IN list makes it match nothing, keeping every row).
func refsIn(refs []string) string {
	if len(refs) == 0 {
		return `(SELECT 0 WHERE 0)`
	}
	return `(SELECT v FROM (` + strings.Join(refs, " UNION ") + `) WHERE v IS NOT NULL)`
}

// referrers lists, for each foreign key of any table to target, the
// SELECT of the values it refers to.
func referrers(ctx context.Context, tx *sql.Tx, tables []string, target string) ([]string, error) {
	var out []string
	for _, name := range tables {
		rows, err := tx.QueryContext(ctx, `SELECT "from", coalesce("to", 'id') FROM pragma_foreign_key_list(?) WHERE "table" = ?`, name, target)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var from, to string
			if err := rows.Scan(&from, &to); err != nil {
				rows.Close()
				return nil, err
			}
			if name != target {
				out = append(out, `SELECT `+quoteIdent(from)+` AS v FROM `+quoteIdent(name))
			}
		}
		rows.Close()
	}
	return out, nil
}

// SyncFinishClone makes a copy written by SyncWriteClone a node: its
// entries count as received, its audit entries go on chains of its own,
// and what the copy left out is rebuilt (derived tables and counts).
func (s *Store) SyncFinishClone(ctx context.Context, orgs []int64) error {
	if err := s.SyncRecordClonedLog(ctx); err != nil {
		return err
	}
	return s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		if err := RebuildDerived(ctx, tx); err != nil {
			return err
		}
		for _, r := range syncOrgRebuilds {
			for _, org := range orgs {
				if _, err := tx.ExecContext(ctx, r.SQL, org); err != nil {
					return fmt.Errorf("recount %v: %w", r.Columns, err)
				}
			}
		}
		return nil
	})
}

// SyncPending counts the entries of orgs a node holding vector lacks.
func (s *Store) SyncPending(ctx context.Context, vector map[int64]int64, orgs []int64) (int64, error) {
	own, err := s.SyncVector(ctx)
	if err != nil {
		return 0, err
	}
	minHLC, vb, ob := vectorArgs(own, vector, orgs)
	return s.R.SyncChangesPending(ctx, SyncChangesPendingParams{MinHlc: minHLC, VectorJson: vb, OrgsJson: ob})
}
