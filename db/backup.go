package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Backup writes a consistent copy of the database at src to out while other
// processes may be writing to it: VACUUM INTO reads one snapshot, so the copy
// holds every transaction committed before it began and none half-done. The
// copy is written beside out, fsynced, then renamed, so out is never
// half-written; an existing out is replaced.
func Backup(ctx context.Context, src, out string) error {
	return BackupWithProgress(ctx, src, out, nil)
}

// BackupWithProgress is Backup reporting, about every half second, the bytes
// of the copy written so far and the size of the source (the copy is
// usually smaller: VACUUM INTO leaves free pages out). The finished copy is
// integrity-checked before it takes the name out.
func BackupWithProgress(ctx context.Context, src, out string, progress func(written, total int64)) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("database %s: %w", src, err)
	}
	// Renaming the copy over the live database would lose every write
	// made during the backup and break the running server.
	if outInfo, err := os.Stat(abs); err == nil && os.SameFile(srcInfo, outInfo) {
		return errors.New("the backup file must not be the database itself")
	}
	conn, err := sql.Open("sqlite", dsn(src, "FULL", false))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	tmp := abs + ".tmp"
	_ = os.Remove(tmp)
	total := srcInfo.Size()
	if wal, err := os.Stat(src + "-wal"); err == nil {
		total += wal.Size() // committed pages not yet checkpointed into the file
	}
	stop := watchProgress(tmp, total, progress)
	_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	stop()
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("vacuum into: %w", err)
	}
	if err := CheckCopy(ctx, tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// Litestream's local state (serve --replicate) described the replaced
	// file: it starts afresh from the restored one.
	if err := os.RemoveAll(litestreamMetaDir(abs)); err != nil {
		return err
	}
	return syncFile(filepath.Dir(abs))
}

// watchProgress polls the size of the growing copy until stopped; the last
// report is the finished size.
func watchProgress(path string, total int64, progress func(written, total int64)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		size := func() int64 {
			if fi, err := os.Stat(path); err == nil {
				return fi.Size()
			}
			return 0
		}
		for {
			select {
			case <-done:
				progress(size(), total)
				return
			case <-tick.C:
				progress(size(), total)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// CheckCopy opens a database copy read-only and checks it is sound and one
// of ours: PRAGMA integrity_check answers ok and migrations are recorded.
func CheckCopy(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return err
	}
	defer conn.Close()
	var res string
	if err := conn.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("%s is not a readable SQLite database: %w", path, err)
	}
	if res != "ok" {
		return fmt.Errorf("%s fails the integrity check: %s", path, res)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n == 0 {
		return fmt.Errorf("%s is not a workspace database (no migrations recorded)", path)
	}
	return nil
}

// BackupInto writes a copy named workspace-<UTC time>.db into dir and then
// deletes the oldest such copies beyond keep (0 keeps all). It returns the
// new copy's path.
func BackupInto(ctx context.Context, src, dir string, keep int, now time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "workspace-"+now.UTC().Format("20060102T150405Z")+".db")
	if err := Backup(ctx, src, out); err != nil {
		return "", err
	}
	if keep <= 0 {
		return out, nil
	}
	copies, err := filepath.Glob(filepath.Join(dir, "workspace-*Z.db"))
	if err != nil {
		return out, err
	}
	sort.Strings(copies) // the names sort by time
	for len(copies) > keep {
		if err := os.Remove(copies[0]); err != nil {
			return out, err
		}
		copies = copies[1:]
	}
	return out, nil
}

// Restore replaces the database at dbPath with a checked copy. It refuses
// while a server holds the database (LockForServe) and never leaves dbPath
// half-written: the copy is written beside it, fsynced, then renamed, and
// the old write-ahead log is removed so it cannot be replayed over the copy.
func Restore(ctx context.Context, from, dbPath string) error {
	if err := CheckCopy(ctx, from); err != nil {
		return err
	}
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(from); err == nil {
		if di, err := os.Stat(abs); err == nil && os.SameFile(fi, di) {
			return errors.New("the copy is the database itself")
		}
	}
	unlock, err := LockForServe(abs)
	if err != nil {
		return err
	}
	defer unlock()
	tmp := abs + ".restore"
	if err := copyFile(from, tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(abs + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// Litestream's local state (serve --replicate) described the replaced
	// file: it starts afresh from the restored one.
	if err := os.RemoveAll(litestreamMetaDir(abs)); err != nil {
		return err
	}
	return syncFile(filepath.Dir(abs))
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

var lastBackup atomic.Int64 // unix seconds of the newest scheduled backup; 0 before any

// RecordBackup notes when a scheduled backup finished, for the metrics.
func RecordBackup(t time.Time) { lastBackup.Store(t.Unix()) }

// LastBackup is when the newest scheduled backup finished (zero before any).
func LastBackup() time.Time {
	if v := lastBackup.Load(); v != 0 {
		return time.Unix(v, 0)
	}
	return time.Time{}
}

// litestreamMetaDir is where Litestream keeps its state for the database
// at path (its default: .NAME-litestream beside the file; db/replicate).
func litestreamMetaDir(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-litestream")
}
