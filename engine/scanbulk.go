package engine

import (
	"context"
	"database/sql"
	"log/slog"
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/duckarrow"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Rows reach DuckDB in bulk: lakesoul_scan hands each projected column of
// a merged batch to DuckDB as Arrow (internal/duckarrow), so a chunk's
// vectors are the batch's buffers — no value crosses cgo on its own.
// DuckDB keeps the buffers until it drops the vectors. Columns whose
// DuckDB type has no Arrow twin (uuid: text in the files, UUID in DuckDB,
// checked on the way) are set value by value in the same chunk, and a
// DuckDB build whose handles duckarrow cannot reach keeps the value path
// for everything. The table function is unchanged otherwise: it declares
// no filter pushdown, so DuckDB still applies every WHERE (duckdb-go#24).
//
// A chunk holds a slice of one batch (a vector references one Arrow
// array): a merge's batches are up to reader.DefaultBatchRows rows, so
// most chunks are full.

// bulkBridge is the engine's connection for Arrow conversions: it runs no
// queries, its settings only shape conversions.
type bulkBridge struct {
	conn *sql.Conn
	c    duckarrow.Conn
}

// newBulkBridge opens the conversion connection of db; nil (and the
// reason) when the bulk path is unavailable.
func newBulkBridge(ctx context.Context, db *sql.DB) (*bulkBridge, error) {
	if err := duckarrow.Available(); err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c, err := duckarrow.ConnOf(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &bulkBridge{conn: conn, c: c}, nil
}

func (b *bulkBridge) close() {
	if b != nil {
		b.conn.Close()
	}
}

// bulkScan is one scan's split of its projected columns: cols go over as
// Arrow (schema is theirs, converted), values are set one by one.
type bulkScan struct {
	bridge *bulkBridge
	schema *duckarrow.Schema
	fields []arrow.Field
	cols   []int
	values []int
	// off is set when a conversion failed (a DuckDB that maps a type
	// otherwise): the scan continues value by value.
	off atomic.Bool
}

// newScan plans the bulk columns of a scan of t projecting projected; nil
// when there are none (or no bridge).
func (b *bulkBridge) newScan(t *catalog.Table, projected []bool) *bulkScan {
	if b == nil {
		return nil
	}
	bs := &bulkScan{bridge: b}
	for c, f := range t.Schema.Fields() {
		switch {
		case !projected[c]:
		case bulkType(f):
			bs.cols = append(bs.cols, c)
			bs.fields = append(bs.fields, f)
		default:
			bs.values = append(bs.values, c)
		}
	}
	if len(bs.cols) == 0 {
		return nil
	}
	sch, err := duckarrow.NewSchema(b.c, arrow.NewSchema(bs.fields, nil))
	if err != nil {
		slog.Warn("lakesoul_scan: columns go to DuckDB value by value", "table", t.QualifiedName(), "err", err)
		return nil
	}
	bs.schema = sch
	runtime.AddCleanup(bs, func(s *duckarrow.Schema) { s.Close() }, sch)
	return bs
}

func (bs *bulkScan) enabled() bool { return !bs.off.Load() }

// bulkType reports whether a column's values go to DuckDB as Arrow: its
// Arrow type converts to the DuckDB type duckColumn declares for it.
func bulkType(f arrow.Field) bool {
	if oid, _ := schema.PGTypeOf(f); oid == schema.OIDUUID || schema.EnumOID(f) != 0 {
		return false // uuid: UUID in DuckDB; enum: DuckDB's ENUM (enum.go)
	}
	switch t := f.Type.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type, *arrow.Float32Type, *arrow.Float64Type,
		*arrow.BooleanType, *arrow.StringType, *arrow.BinaryType, *arrow.Date32Type:
		return true
	case *arrow.TimestampType:
		return t.Unit == arrow.Microsecond // DuckDB's TIMESTAMP; other units are types of their own
	case *arrow.Decimal128Type:
		return t.Precision <= 38
	}
	return false
}

// fillBulk fills chunk with the next rows of th's batch (at most one
// chunk's worth): the bulk columns by reference, the others by value.
func (s *scanSource) fillBulk(th *scanThread, bs *bulkScan, chunk *duckdb.DataChunk) error {
	if th.batch == nil || th.row >= int(th.batch.NumRows()) {
		ok, err := s.advance(th)
		if err != nil {
			return err
		}
		if !ok {
			return chunk.SetSize(0)
		}
	}
	take := min(duckarrow.MaxRows(), int(th.batch.NumRows())-th.row)
	cols := make([]arrow.Array, len(bs.cols))
	for i, c := range bs.cols {
		cols[i] = array.NewSlice(th.batch.Column(c), int64(th.row), int64(th.row+take))
	}
	rec := array.NewRecordBatch(arrow.NewSchema(bs.fields, nil), cols, int64(take))
	releaseArrays(cols)
	err := duckarrow.Fill(bs.bridge.c, bs.schema, rec, chunk, bs.cols)
	rec.Release()
	if err != nil {
		// Nothing was referenced: this chunk and the rest go by value.
		if !bs.off.Swap(true) {
			slog.Warn("lakesoul_scan: columns go to DuckDB value by value", "table", s.scan.Table.QualifiedName(), "err", err)
		}
		return s.FillChunk(th, *chunk)
	}
	for _, c := range bs.values {
		set, col := s.setters[c], th.batch.Column(c)
		for i := range take {
			if err := set(*chunk, c, i, col, th.row+i); err != nil {
				return err
			}
		}
	}
	th.row += take
	return chunk.SetSize(take)
}

func releaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}
