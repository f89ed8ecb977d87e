package db

import (
	"context"
	"database/sql"
)

// txStmts keeps the statements one sync transaction has prepared. Applying
// a page runs the same few statements per table for every entry (is the row
// here, insert, update these columns, delete), and each ran unprepared was
// parsed again: a page of 1,000 entries parses them once each.
// Statements of a transaction close with it.
type txStmts struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

type txStmtsKey struct{}

// withTxStmts answers ctx carrying a statement cache for tx.
func withTxStmts(ctx context.Context, tx *sql.Tx) context.Context {
	return context.WithValue(ctx, txStmtsKey{}, &txStmts{tx: tx, m: map[string]*sql.Stmt{}})
}

// cachedStmt answers the prepared statement for query when ctx carries
// tx's cache; nil (run it unprepared) otherwise.
func cachedStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	c, _ := ctx.Value(txStmtsKey{}).(*txStmts)
	if c == nil || c.tx != tx {
		return nil, nil
	}
	if st := c.m[query]; st != nil {
		return st, nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = st
	return st, nil
}

// txExec is tx.ExecContext through the cache ctx may carry.
func txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := cachedStmt(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return tx.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// txScanRow is tx.QueryRowContext(...).Scan(dest...) through the cache ctx
// may carry.
func txScanRow(ctx context.Context, tx *sql.Tx, query string, args []any, dest ...any) error {
	st, err := cachedStmt(ctx, tx, query)
	if err != nil {
		return err
	}
	if st == nil {
		return tx.QueryRowContext(ctx, query, args...).Scan(dest...)
	}
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}
