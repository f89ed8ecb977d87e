package db

import (
	"context"
	"os"
	"testing"

	"workspace/db/dbtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	migratedTemplate.Remove()
	os.Exit(code)
}

// migratedTemplate is a database migrated once per test binary: running
// every migration took about 2 s of each test under -race. Tests about the
// migrations themselves (TestSchemaMatchesMigrations, TestMigrateIsIdempotent)
// still migrate a fresh file.
var migratedTemplate = dbtest.Template{Build: func(path string) error {
	s, err := Open(context.Background(), Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		return err
	}
	// Closing the last connection checkpoints the log into the file.
	return s.Close()
}}

// fresh puts a copy of the migrated template at path (a new database a
// test opens) and returns path. The copy shares the template's stored node
// id: a test that needs its own passes NodeID.
func fresh(t *testing.T, path string) string {
	t.Helper()
	if err := migratedTemplate.CopyTo(path); err != nil {
		t.Fatalf("template database: %v", err)
	}
	return path
}
