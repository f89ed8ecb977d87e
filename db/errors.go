package db

import (
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	// ErrDiskFull: the database could not grow (the file system is full,
	// or a max_page_count is reached). Writes fail; reads go on; writes
	// succeed again by themselves once space is freed.
	ErrDiskFull = errors.New("the database's disk is full")
	// ErrClosed: a write arrived after the store was closed (a background
	// job outliving the server that owned the store).
	ErrClosed = errors.New("the database is closed")
)

// Classify maps driver errors to the store's sentinel errors by result code,
// never by message text.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errors.Join(ErrConflict, err)
		}
		if diskFullCode(se.Code()) {
			return errors.Join(ErrDiskFull, err)
		}
	}
	return err
}

// IsNotFound reports whether err means no row matched.
func IsNotFound(err error) bool {
	return errors.Is(err, sql.ErrNoRows) || errors.Is(err, ErrNotFound)
}

// IsConflict reports whether err is a uniqueness violation.
func IsConflict(err error) bool { return errors.Is(Classify(err), ErrConflict) }

// diskFullCode: SQLITE_FULL (the unix VFS answers ENOSPC with it, and
// max_page_count too), and the I/O errors a full file system gives where
// SQLite cannot tell ENOSPC apart: extending the WAL index (shm) and a
// short write. An operator sees the code in the log line.
func diskFullCode(code int) bool {
	switch code {
	case sqlite3.SQLITE_IOERR_SHMSIZE, sqlite3.SQLITE_IOERR_WRITE:
		return true
	}
	return code&0xff == sqlite3.SQLITE_FULL
}

// IsDiskFull reports whether err means the database could not grow.
func IsDiskFull(err error) bool {
	if errors.Is(err, ErrDiskFull) {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && diskFullCode(se.Code())
}
