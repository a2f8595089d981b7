// Package duckstream runs a DuckDB query as a streaming result: DuckDB
// produces the rows as the caller fetches them, a chunk at a time, so a
// result of any size costs the memory of a few chunks (DuckDB's streaming
// buffer), not of the whole result.
//
// duckdb-go only makes materialized results: its QueryContext executes a
// query to the end into a result DuckDB keeps outside its memory_limit, and
// rows are read from there. This package prepares and binds the statement
// with duckdb-go (its parameter conversions), executes it with DuckDB's
// streaming C API on duckdb-go's prepared statement, and decodes each
// fetched chunk with duckdb-go's own vector readers, so a value comes out
// exactly as database/sql rows of the same query give it.
//
// duckdb-go keeps the handles this needs unexported: the prepared
// statement of a Stmt and the connection of a Conn are read at offsets
// found by reflection, after reflection confirmed each field's name and
// type (a different duckdb-go disables the package: Available reports why,
// callers keep the materialized path); a fetched chunk is made a DataChunk
// by duckdb-go's initFromDuckDataChunk, linked by name.
//
// DuckDB allows one open streaming result per connection, and the
// connection's next statement ends it: the caller must finish or close a
// Rows before anything else runs on its connection.
package duckstream

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// initChunk makes c the reader of a chunk DuckDB returned: duckdb-go's
// (*DataChunk).initFromDuckDataChunk (duckdb-go v2.10506), which its own
// rows use for every fetched chunk.
//
//go:linkname initChunk github.com/duckdb/duckdb-go/v2.(*DataChunk).initFromDuckDataChunk
func initChunk(c *duckdb.DataChunk, in mapping.DataChunk, writable bool) error

type fieldLayout struct {
	connOff, stmtOff uintptr
	err              error
}

var (
	layoutOnce sync.Once
	layoutOf   fieldLayout
)

func layout() *fieldLayout {
	layoutOnce.Do(func() {
		l := &layoutOf
		find := func(t reflect.Type, name string, want reflect.Type) uintptr {
			f, ok := t.FieldByName(name)
			if l.err == nil && (!ok || f.Type != want || len(f.Index) != 1) {
				l.err = fmt.Errorf("duckstream: %s.%s is not a %s in this duckdb-go", t, name, want)
			}
			return f.Offset
		}
		l.connOff = find(reflect.TypeFor[duckdb.Conn](), "conn", reflect.TypeFor[mapping.Connection]())
		l.stmtOff = find(reflect.TypeFor[duckdb.Stmt](), "preparedStmt", reflect.TypeFor[*mapping.PreparedStatement]())
	})
	return &layoutOf
}

// Available reports why streaming results cannot be used (nil: they can).
func Available() error { return layout().err }

// Rows is an open streaming result.
type Rows struct {
	conn  mapping.Connection
	stmt  *duckdb.Stmt
	res   mapping.Result
	open  bool // res holds a result to destroy
	chunk duckdb.DataChunk
	raw   mapping.DataChunk // the fetched chunk chunk reads; Ptr nil when none
	row   int
	size  int
	ended bool
}

// Query prepares query on c, binds args (converted as database/sql converts
// them for duckdb-go) and starts it as a streaming result. ctx is also the
// context duckdb-go hands to the table functions the query binds, which
// keep it while the result is read: it should live as long as the Rows.
// Cancelling ctx interrupts DuckDB while Query runs.
func Query(ctx context.Context, c *duckdb.Conn, query string, args []any) (*Rows, error) {
	l := layout()
	if l.err != nil {
		return nil, l.err
	}
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		switch err := c.CheckNamedValue(&nv); {
		case errors.Is(err, driver.ErrSkip):
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return nil, fmt.Errorf("converting argument $%d type: %w", i+1, err)
			}
			nv.Value = v
		case err != nil:
			return nil, err
		}
		named[i] = nv
	}
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	stmt, ok := st.(*duckdb.Stmt)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("duckstream: prepared a %T", st)
	}
	if err := stmt.BindWithCtx(ctx, named); err != nil {
		stmt.Close()
		return nil, err
	}
	r := &Rows{conn: *(*mapping.Connection)(unsafe.Add(unsafe.Pointer(c), l.connOff)), stmt: stmt}
	prepared := *(**mapping.PreparedStatement)(unsafe.Add(unsafe.Pointer(stmt), l.stmtOff))
	if prepared == nil {
		stmt.Close()
		return nil, errors.New("duckstream: the statement has no prepared statement")
	}
	err = r.interruptible(ctx, func() error {
		r.open = true
		if bindings.ExecutePreparedStreaming(*prepared, &r.res) == mapping.StateError {
			return r.resultError()
		}
		return nil
	})
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// interruptible runs fn, interrupting DuckDB if ctx ends meanwhile; an
// interrupted call fails with ctx's error (DuckDB's interrupt error joined).
func (r *Rows) interruptible(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	stop := context.AfterFunc(ctx, safego.Guard(func() {
		defer wg.Done()
		mapping.Interrupt(r.conn)
	}))
	err := fn()
	if !stop() {
		// The interrupt was sent, perhaps after fn returned: whatever fn
		// got, the result cannot be trusted to go on.
		wg.Wait()
		return errors.Join(ctx.Err(), err)
	}
	return err
}

// resultError is the error DuckDB recorded in the result, as duckdb-go
// reports it.
func (r *Rows) resultError() error {
	msg := mapping.ResultError(&r.res)
	if msg == "" {
		msg = "duckstream: query failed"
	}
	return &duckdb.Error{Type: duckdb.ErrorType(mapping.ResultErrorType(&r.res)), Msg: msg}
}

// Columns is the number of result columns.
func (r *Rows) Columns() int { return int(mapping.ColumnCount(&r.res)) }

// Next fills dst (one element per column) with the next row's values, as
// duckdb-go's rows would give them; false after the last row. Cancelling
// ctx interrupts DuckDB while Next waits for a chunk; the Rows cannot be
// read further after an error.
func (r *Rows) Next(ctx context.Context, dst []any) (bool, error) {
	for r.row >= r.size {
		if r.ended {
			return false, nil
		}
		r.release()
		var ch mapping.DataChunk
		err := r.interruptible(ctx, func() error {
			ch = mapping.FetchChunk(r.res)
			if ch.Ptr == nil && mapping.ResultError(&r.res) != "" {
				return r.resultError()
			}
			return nil
		})
		if ch.Ptr != nil {
			r.raw = ch
			if ierr := initChunk(&r.chunk, ch, false); ierr != nil && err == nil {
				err = ierr
			}
		}
		if err != nil {
			r.ended = true
			return false, err
		}
		if ch.Ptr == nil {
			r.ended = true
			return false, nil
		}
		r.row, r.size = 0, r.chunk.GetSize()
	}
	for c := range dst {
		v, err := r.chunk.GetValue(c, r.row)
		if err != nil {
			r.ended = true
			return false, err
		}
		if b, ok := v.(duckdb.Bit); ok {
			v = b.String() // as duckdb-go's rows give a BIT
		}
		dst[c] = v
	}
	r.row++
	return true, nil
}

// release destroys the chunk last fetched.
func (r *Rows) release() {
	if r.raw.Ptr != nil {
		mapping.DestroyDataChunk(&r.raw)
		r.raw, r.chunk = mapping.DataChunk{}, duckdb.DataChunk{}
	}
	r.row, r.size = 0, 0
}

// Close ends the result and frees the statement; the connection may run
// other statements again. It may be called more than once.
func (r *Rows) Close() {
	r.release()
	if r.open {
		mapping.DestroyResult(&r.res)
		r.open = false
	}
	if r.stmt != nil {
		r.stmt.Close()
		r.stmt = nil
	}
	r.ended = true
}
