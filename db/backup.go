package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database at src to out while other
// processes may be writing to it: VACUUM INTO reads one snapshot. The copy is
// written beside out, fsynced, then renamed, so out is never half-written.
func Backup(ctx context.Context, src, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("database %s: %w", src, err)
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
