package db

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"
)

// The exchange lease: one exchange with head office at a time per database
// file, whichever process runs it (the server's Sync screen and timer, a
// `sync now` in a terminal). The in-process guard cannot see another
// process; a row taken in a write transaction can, on every OS, and it is
// free again when its holder's process is gone or, failing a way to tell
// (another host sharing the file, Windows), when it expires. A file lock
// would be Unix-only.

// SyncLeaseHolder is who holds the file's exchange.
type SyncLeaseHolder struct {
	Pid       int64
	Host      string
	StartedAt time.Time
}

// TakeSyncLease takes the lease for holder (a token unique to the
// exchange) until now+ttl, when it is free, expired, or held by a process
// of this host that is gone (killed mid-exchange). When another holds it,
// it reports who.
func (s *Store) TakeSyncLease(ctx context.Context, holder string, now time.Time, ttl time.Duration) (bool, SyncLeaseHolder, error) {
	host, _ := os.Hostname()
	var other SyncLeaseHolder
	taken := false
	err := s.InTx(ctx, func(q *Queries) error {
		cur, err := q.SyncLeaseGet(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			expires, _ := ParseTime(cur.ExpiresAt)
			started, _ := ParseTime(cur.StartedAt)
			other = SyncLeaseHolder{Pid: cur.Pid, Host: cur.Host, StartedAt: started}
			if now.Before(expires) && !(cur.Host == host && processGone(cur.Pid)) {
				return nil
			}
		}
		taken = true
		return q.SyncLeasePut(ctx, SyncLeasePutParams{Holder: holder, Pid: int64(os.Getpid()), Host: host,
			StartedAt: FormatTime(now), ExpiresAt: FormatTime(now.Add(ttl))})
	})
	if err != nil || taken {
		return taken, SyncLeaseHolder{}, err
	}
	return false, other, nil
}

// processGone: no process of this host has the id (a signal 0 reaches
// none). Where that cannot be asked, false: the lease then waits for its
// expiry.
func processGone(pid int64) bool {
	if runtime.GOOS == "windows" || pid <= 0 {
		return false
	}
	p, err := os.FindProcess(int(pid))
	if err != nil {
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

// RenewSyncLease keeps holder's lease until now+ttl; false when it has
// lost it (another exchange took it).
func (s *Store) RenewSyncLease(ctx context.Context, holder string, now time.Time, ttl time.Duration) (bool, error) {
	var n int64
	err := s.InTx(ctx, func(q *Queries) error {
		var err error
		n, err = q.SyncLeaseRenew(ctx, SyncLeaseRenewParams{Holder: holder, ExpiresAt: FormatTime(now.Add(ttl))})
		return err
	})
	return n == 1, err
}

// ReleaseSyncLease ends holder's lease (nothing when it holds none).
func (s *Store) ReleaseSyncLease(ctx context.Context, holder string) error {
	return s.InTx(ctx, func(q *Queries) error { return q.SyncLeaseRelease(ctx, holder) })
}
