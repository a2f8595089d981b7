package engine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/internal/duckstream"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// duckConn is a session's DuckDB connection.
//
// Query results stream (duckPortal, internal/duckstream): DuckDB produces
// rows as they are fetched. DuckDB keeps one streaming result open per
// connection and ends it when the connection prepares or runs anything
// else, while a cursor or a suspended portal may stay open across the
// session's other statements. So the connection knows the holder of its
// open stream, and every other use of it parks the holder first: the
// stream's remaining rows move to a spill file the holder reads from then
// on (spill.go). All DuckDB work of a session goes through these methods;
// the field of the underlying *sql.Conn is private to this file.
type duckConn struct {
	conn *sql.Conn
	// holder's stream is open on the connection; nil when none is.
	holder streamHolder
}

// streamHolder is a portal with a streaming result open on a connection.
type streamHolder interface {
	// park moves the rest of the stream off the connection (its rows to a
	// spill file, or an error the holder reports when it is read next) and
	// closes the stream.
	park(ctx context.Context)
}

// yield parks the open stream, if any: the connection is free afterwards.
func (d *duckConn) yield(ctx context.Context) {
	if h := d.holder; h != nil {
		d.holder = nil
		h.park(ctx)
	}
}

// stream runs start, which opens a streaming result for h, on the driver
// connection, after parking any other stream; h holds the connection
// afterwards (until it calls released).
func (d *duckConn) stream(ctx context.Context, h streamHolder, start func(*duckdb.Conn) error) error {
	d.yield(ctx)
	err := d.conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("not a DuckDB connection (%T)", dc)
		}
		return start(c)
	})
	if err == nil {
		d.holder = h
	}
	return err
}

// released records that h's stream is closed (ended, parked or dropped).
func (d *duckConn) released(h streamHolder) {
	if d.holder == h {
		d.holder = nil
	}
}

// query runs query as a stream its statement reads to the end (the rows an
// INSERT … SELECT writes): DuckDB produces them as they are read. Nothing
// else may use the connection meanwhile; if something did, the read fails
// rather than end early.
func (d *duckConn) query(ctx context.Context, query string, args []any) (*stmtStream, error) {
	st := &stmtStream{d: d}
	err := d.stream(ctx, st, func(c *duckdb.Conn) error {
		var err error
		st.rows, err = duckstream.Query(ctx, c, query, args)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// stmtStream is a stream query opened.
type stmtStream struct {
	d    *duckConn
	rows *duckstream.Rows
	err  error
}

// park implements streamHolder: the statement reading the stream fails.
func (st *stmtStream) park(context.Context) {
	st.rows.Close()
	st.err = &sqlerr.Error{Code: sqlerr.InternalError, Message: "the statement's rows were cut off: its DuckDB connection was used while they were read"}
}

// Next reads the next row's values (as duckdb-go's rows give them) into
// dst; false after the last. The stream is closed after its last row or
// an error.
func (st *stmtStream) Next(ctx context.Context, dst []any) (bool, error) {
	if st.err != nil {
		return false, st.err
	}
	ok, err := st.rows.Next(ctx, dst)
	if !ok || err != nil {
		st.Close()
	}
	return ok, err
}

// Close ends the stream and frees the connection.
func (st *stmtStream) Close() {
	st.rows.Close()
	st.d.released(st)
}

func (d *duckConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.yield(ctx)
	return d.conn.ExecContext(ctx, query, args...)
}

func (d *duckConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.yield(ctx)
	return d.conn.QueryContext(ctx, query, args...)
}

func (d *duckConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	d.yield(ctx)
	return d.conn.QueryRowContext(ctx, query, args...)
}

// Raw runs f on the driver connection (to prepare a statement, or to mark
// the connection bad).
func (d *duckConn) Raw(ctx context.Context, f func(driverConn any) error) error {
	d.yield(ctx)
	return d.conn.Raw(f)
}

// Close returns the connection to the pool; the holder's stream, if any,
// must have been closed.
func (d *duckConn) Close() error { return d.conn.Close() }
