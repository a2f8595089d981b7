package engine

import (
	"context"
	"database/sql/driver"
	"testing"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// panickySource is a table source whose every method panics.
type panickySource struct{}

func (panickySource) ColumnInfos() []duckdb.ColumnInfo      { panic("ColumnInfos") }
func (panickySource) Cardinality() *duckdb.CardinalityInfo  { panic("Cardinality") }
func (panickySource) Init() duckdb.ParallelTableSourceInfo  { panic("Init") }
func (panickySource) NewLocalState() any                    { panic("NewLocalState") }
func (panickySource) FillChunk(any, duckdb.DataChunk) error { panic("FillChunk") }

// guardedFailure checks that err, as DuckDB passes it on, is recovered by
// the DuckDB error mapper as XX000 "internal error".
func guardedFailure(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	got := scanFailures.recover(err.Error())
	if e := sqlerr.From(got); got == nil || e.Code != sqlerr.InternalError || e.Message != "internal error" {
		t.Errorf("%s: %v is carried as %v", what, err, got)
	}
}

// The guards of DuckDB's callbacks (duckguard.go) return every panic as the
// callback's error, which the statement gets as XX000; without them the
// panic would end the process on DuckDB's thread.
func TestDuckDBCallbackGuards(t *testing.T) {
	f := guardScalar(duckScalar{fn: func([]driver.Value) (any, error) { panic("scalar") }})
	_, err := f.fn(nil)
	guardedFailure(t, "scalar function", err)

	err = guardBudget(budgetFunctions["repeat"]).Executor().ChunkContextExecutor(context.Background(), nil)
	guardedFailure(t, "budgeted function", err)

	tf := guardTable(duckdb.ParallelChunkTableFunction{
		BindArgumentsContext: func(context.Context, map[string]any, ...any) (duckdb.ParallelChunkTableSource, error) {
			panic("bind")
		}})
	_, err = tf.BindArgumentsContext(context.Background(), nil)
	guardedFailure(t, "table function bind", err)

	src := &guardedSource{src: panickySource{}}
	src.ColumnInfos()
	src.Cardinality()
	if info := src.Init(); info.MaxThreads != 1 {
		t.Errorf("Init after a panic: %+v", info)
	}
	src.NewLocalState()
	guardedFailure(t, "FillChunk after ColumnInfos panicked", src.FillChunk(nil, duckdb.DataChunk{}))
	fresh := &guardedSource{src: panickySource{}}
	guardedFailure(t, "FillChunk", fresh.FillChunk(nil, duckdb.DataChunk{}))
}
