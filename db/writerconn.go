package db

import (
	"context"
	"database/sql/driver"
	"fmt"
)

// The writer's connection hands the driver context.Background instead of
// the caller's context. On cancellation the driver interrupts the running
// statement, and SQLite rolls back the whole transaction under an
// interrupted write: with group commit that transaction is shared, so a
// client that hung up mid-statement failed every other write of its batch.
// A write that began runs to its end instead (InTx still refuses to start
// one whose caller already left), which also spares a goroutine per
// statement that the driver starts to watch a cancellable context.

// sqliteConn is what database/sql uses of the driver's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.SessionResetter
	driver.Validator
	driver.Pinger
}

type sqliteStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type writerConn struct{ sqliteConn }

func newWriterConn(c driver.Conn) (driver.Conn, error) {
	sc, ok := c.(sqliteConn)
	if !ok {
		return nil, fmt.Errorf("the sqlite driver's connection lacks a context method database/sql uses")
	}
	return writerConn{sc}, nil
}

func wrapStmt(s driver.Stmt, err error) (driver.Stmt, error) {
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sqliteStmt)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("the sqlite driver's statement lacks a context method")
	}
	return writerStmt{ss}, nil
}

func (c writerConn) Prepare(query string) (driver.Stmt, error) {
	return wrapStmt(c.sqliteConn.PrepareContext(context.Background(), query))
}

func (c writerConn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return wrapStmt(c.sqliteConn.PrepareContext(context.Background(), query))
}

func (c writerConn) BeginTx(_ context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.sqliteConn.BeginTx(context.Background(), opts)
}

func (c writerConn) ExecContext(_ context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.sqliteConn.ExecContext(context.Background(), query, args)
}

func (c writerConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.sqliteConn.QueryContext(context.Background(), query, args)
}

type writerStmt struct{ sqliteStmt }

func (s writerStmt) ExecContext(_ context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.sqliteStmt.ExecContext(context.Background(), args)
}

func (s writerStmt) QueryContext(_ context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.sqliteStmt.QueryContext(context.Background(), args)
}
