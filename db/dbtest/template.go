// Package dbtest holds what the test binaries of several packages share:
// a database migrated once per binary and copied for each test.
package dbtest

import (
	"os"
	"path/filepath"
	"sync"
)

// Template is a database file made once by Build (migrations and whatever a
// first start stores, such as the signing key), then copied for each test:
// running every migration per test was most of a test's set-up time.
type Template struct {
	// Build makes the template at path and closes it, so the file alone is
	// whole (closing the last connection checkpoints the write-ahead log).
	Build func(path string) error

	once sync.Once
	dir  string
	path string
	err  error
}

// CopyTo writes a fresh copy of the template to path, unless a database
// is there already (a test reopening its own file).
func (tp *Template) CopyTo(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tp.once.Do(func() {
		tp.dir, tp.err = os.MkdirTemp("", "workspace-template-")
		if tp.err != nil {
			return
		}
		tp.path = filepath.Join(tp.dir, "template.db")
		tp.err = tp.Build(tp.path)
	})
	if tp.err != nil {
		return tp.err
	}
	data, err := os.ReadFile(tp.path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Remove deletes the template; TestMain calls it after the tests ran.
func (tp *Template) Remove() {
	if tp.dir != "" {
		os.RemoveAll(tp.dir)
	}
}
