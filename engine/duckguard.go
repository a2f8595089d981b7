package engine

import (
	"context"
	"database/sql/driver"
	"sync/atomic"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// DuckDB calls the engine's scalar and table functions on its own threads,
// through cgo: a panic there is recovered by nobody and ends the process.
// Every function is registered through a guard (guardScalar, guardTable;
// internal/safego's tree test checks the registrations), which turns a
// panic into the function's error. The error travels through DuckDB in
// scanFailures, so the statement fails with it as XX000 "internal error"
// (mapDuckDBError), and DuckDB, which only ever saw an error, goes on.

// guardScalar is f with its panics returned as errors.
func guardScalar(f duckScalar) duckScalar {
	fn := f.fn
	f.fn = func(args []driver.Value) (v any, err error) {
		defer safego.RecoverTo(func(p error) { err = scanFailures.wrap(p) })
		return fn(args)
	}
	return f
}

// guardBudget is f with the panics of its executor returned as its error.
func guardBudget(f budgetFunc) duckdb.ScalarFunc { return guardedBudgetFunc{f} }

type guardedBudgetFunc struct{ budgetFunc }

func (g guardedBudgetFunc) Executor() duckdb.ScalarFuncExecutor {
	exec := g.budgetFunc.Executor().ChunkContextExecutor
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: func(ctx context.Context, chunk *duckdb.ChunkIteratorState) (err error) {
		defer safego.RecoverTo(func(p error) { err = scanFailures.wrap(p) })
		return exec(ctx, chunk)
	}}
}

// guardTable is fn with the panics of its bind and of the sources it binds
// returned as errors.
func guardTable(fn duckdb.ParallelChunkTableFunction) duckdb.ParallelChunkTableFunction {
	bind := fn.BindArgumentsContext
	fn.BindArgumentsContext = func(ctx context.Context, named map[string]any, args ...any) (src duckdb.ParallelChunkTableSource, err error) {
		defer safego.RecoverTo(func(p error) { src, err = nil, scanFailures.wrap(p) })
		s, err := bind(ctx, named, args...)
		if err != nil {
			// A bind reads footers (units, cardinality): its errors keep
			// their SQLSTATE through DuckDB as the scan's later ones do.
			return nil, scanFailures.wrap(err)
		}
		return &guardedSource{src: s}, nil
	}
	return fn
}

// guardedSource is a table source whose methods recover their panics. The
// methods without an error result record theirs, and FillChunk, the next
// call that can fail, reports it.
type guardedSource struct {
	src    duckdb.ParallelChunkTableSource
	failed atomic.Pointer[error] // the first recorded panic; read once per chunk
}

func (g *guardedSource) fail(err error) { g.failed.CompareAndSwap(nil, &err) }

func (g *guardedSource) failure() error {
	if p := g.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (g *guardedSource) ColumnInfos() []duckdb.ColumnInfo {
	defer safego.RecoverTo(g.fail)
	return g.src.ColumnInfos()
}

func (g *guardedSource) Cardinality() *duckdb.CardinalityInfo {
	defer safego.RecoverTo(g.fail)
	return g.src.Cardinality()
}

func (g *guardedSource) Init() (info duckdb.ParallelTableSourceInfo) {
	defer safego.RecoverTo(func(err error) {
		g.fail(err)
		info = duckdb.ParallelTableSourceInfo{MaxThreads: 1}
	})
	return g.src.Init()
}

func (g *guardedSource) NewLocalState() any {
	defer safego.RecoverTo(g.fail)
	return g.src.NewLocalState()
}

func (g *guardedSource) FillChunk(local any, chunk duckdb.DataChunk) (err error) {
	if err := g.failure(); err != nil {
		return scanFailures.wrap(err)
	}
	defer safego.RecoverTo(func(p error) { err = scanFailures.wrap(p) })
	return g.src.FillChunk(local, chunk)
}
