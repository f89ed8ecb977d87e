package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"

	"modernc.org/sqlite"
)

// Table names a table whose changes the store follows for caches that must
// not wait for the next write of any kind (under constant writes the write
// generation moves every few milliseconds, so a cache keyed by it misses).
type Table uint8

const (
	TableUsers Table = iota
	TableIntegrations
	TableAccessVersions
	tableCount
)

var trackedTables = map[string]Table{
	"users":           TableUsers,
	"integrations":    TableIntegrations,
	"access_versions": TableAccessVersions,
}

// changes is what the writer connection's pre-update hook and the write
// loop keep. SQLite calls the hook for every row a statement (or a trigger
// it fires) is about to change, on the writer connection only: other
// processes' commits are noticed through PRAGMA data_version instead.
type changes struct {
	// rows counts row changes per table as they happen, rolled back or not:
	// the stamp of a memo kept inside the writer.
	rows [tableCount]atomic.Uint64
	// dirty has bit t set while the running batch changed table t.
	dirty atomic.Uint32
	// versions move (by 2, staying even) after a batch that changed the
	// table ended, before any of its members is answered.
	versions [tableCount]atomic.Uint64
	// epoch moves whenever something the hook cannot see happened: a member
	// was rolled back to its savepoint (its row changes undone), a batch was
	// aborted, another process committed.
	epoch atomic.Uint64
	// cap records replicated rows' changes for the sync log (sync.go).
	cap capture
}

func (c *changes) rowChanged(table string) {
	if t, ok := trackedTables[table]; ok {
		c.rows[t].Add(1)
		c.dirty.Or(1 << t)
	}
}

// batchEnded publishes the tables the batch changed to readers' caches.
func (c *changes) batchEnded() {
	d := c.dirty.Swap(0)
	for t := Table(0); t < tableCount; t++ {
		if d&(1<<t) != 0 {
			c.versions[t].Add(2)
		}
	}
}

// outsideChange: a rollback or another process's commit; every memo and
// cache that follows a table starts again.
func (c *changes) outsideChange() {
	c.epoch.Add(1)
	for t := Table(0); t < tableCount; t++ {
		c.versions[t].Add(2)
	}
}

// TableVersion is an even number that moves after every write batch that
// changed table t has ended (committed or not) and before its writers are
// answered, and when another process committed. A cache outside the writer
// may serve a row of t read after the version was read as long as the
// version is unchanged: unlike WriteGeneration it ignores writes to other
// tables and stays valid while a batch runs (a running batch's changes are
// nobody's answer yet).
func (s *Store) TableVersion(t Table) uint64 { return s.changes.versions[t].Load() }

// WriterStamp is for memos kept inside write transactions (InTx functions
// only): it changes with every row change of table t made on the writer,
// with every rollback and with every commit of another process, so a memo
// of rows of t read when the stamp was X is still what the table holds
// while the stamp is X.
func (s *Store) WriterStamp(t Table) [2]uint64 {
	return [2]uint64{s.changes.epoch.Load(), s.changes.rows[t].Load()}
}

// WriterEpoch is WriterStamp for a memo that keeps itself current through
// its own writes (the audit chain heads): it moves only on rollbacks and
// other processes' commits.
func (s *Store) WriterEpoch() uint64 { return s.changes.epoch.Load() }

// hookedConnector opens writer connections with the pre-update hook set
// (and without the callers' cancellation: writerconn.go), so a connection
// database/sql opens again after an error is the same.
type hookedConnector struct {
	dsn     string
	changes *changes
}

type preUpdateHooker interface {
	RegisterPreUpdateHook(sqlite.PreUpdateHookFn)
}

func (c hookedConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := (&sqlite.Driver{}).Open(c.dsn)
	if err != nil {
		return nil, err
	}
	h, ok := conn.(preUpdateHooker)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("the sqlite driver has no pre-update hook")
	}
	h.RegisterPreUpdateHook(func(d sqlite.SQLitePreUpdateData) {
		c.changes.rowChanged(d.TableName)
		c.changes.cap.preUpdate(&d)
	})
	wc, err := newWriterConn(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return wc, nil
}

func (c hookedConnector) Driver() driver.Driver { return &sqlite.Driver{} }

func openWriter(dsn string, ch *changes) *sql.DB {
	return sql.OpenDB(hookedConnector{dsn: dsn, changes: ch})
}
