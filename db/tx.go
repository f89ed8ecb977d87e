package db

import (
	"context"
	"database/sql"
	"fmt"
)

// InTx runs fn in one write transaction (BEGIN IMMEDIATE through the DSN) and
// commits; it returns only after COMMIT returned, so a caller may answer 2xx.
func (s *Store) InTx(ctx context.Context, fn func(q *Queries) error) (err error) {
	tx, err := s.Writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(s.w.WithTx(tx)); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ReadTx runs fn in one read transaction on the reader pool, so several
// queries see one snapshot.
func (s *Store) ReadTx(ctx context.Context, fn func(q *Queries) error) error {
	tx, err := s.Reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(s.R.WithTx(tx))
}

// ReadTxSQL is ReadTx that also hands out the transaction, for the dynamic
// (OData-filtered) list queries, so a count and its page see one snapshot.
func (s *Store) ReadTxSQL(ctx context.Context, fn func(tx *sql.Tx, q *Queries) error) error {
	tx, err := s.Reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(tx, s.R.WithTx(tx))
}
