package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database at src to out while other
// processes may be writing to it: VACUUM INTO reads one snapshot, so the copy
// holds every transaction committed before it began and none half-done. The
// copy is written beside out, fsynced, then renamed, so out is never
// half-written; an existing out is replaced.
func Backup(ctx context.Context, src, out string) error {
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
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("vacuum into: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncFile(filepath.Dir(abs))
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
