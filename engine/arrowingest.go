package engine

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// IngestArrow writes the record batches next yields (io.EOF after the last)
// into table namespace.name as COPY FROM does: upsert on primary-key
// tables (columns left out keep their values), append otherwise, through
// the ingest sink in bounded batches (small client batches are gathered up
// to the sink's batch size), committed once at the end — or, on any error,
// nothing, and the files written are deleted. Every batch must have the
// first one's columns, each a column of the table by name with the table's
// Arrow type (42703, 42804 otherwise). Values of varchar(n) and char(n)
// columns follow PostgreSQL's assignment, as COPY's (charRule: 22001, or
// spaces cut). The caller releases the batches
// next returns; it returns the rows written.
func (s *Session) IngestArrow(ctx context.Context, namespace, name string, next func() (arrow.RecordBatch, error)) (_ int64, err error) {
	if err := s.checkWritable("INSERT"); err != nil {
		return 0, s.fail(err)
	}
	ctx, stop := s.statementContext(ctx)
	defer func() {
		s.statementEnded(ctx)
		err = s.fail(stop(err))
	}()
	defer safego.Recover(&err) // a panic fails the ingest above like an error
	t, err := s.resolveTable(ctx, namespace, name)
	if err != nil {
		return 0, err
	}
	sink := s.newTableSink(ctx, t)
	defer sink.release(ctx)
	var (
		sc      *arrow.Schema
		pending []arrow.RecordBatch
		rows    int64
		size    int64
		total   int64
	)
	release := func() {
		for _, r := range pending {
			r.Release()
		}
		pending, rows, size = nil, 0, 0
	}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		joined, err := concatRecords(pending)
		release()
		if err != nil {
			return err
		}
		rec := array.NewRecordBatch(sc, joined.Columns(), joined.NumRows()) // the table's fields
		joined.Release()
		// varchar(n) and char(n) values as an assignment stores them.
		assigned, err := charAssignRecord(rec, s.e.scans.mem) // charassign.go
		rec.Release()
		if err != nil {
			return err
		}
		return sink.write(ctx, assigned)
	}
	fail := func(err error) (int64, error) {
		release()
		sink.abort(ctx)
		if ctx.Err() != nil && !errors.Is(err, sqlerr.ErrCanceled) {
			return 0, sqlerr.ErrCanceled
		}
		return 0, err
	}
	for {
		rec, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		if sc == nil {
			if sc, err = ingestSchema(t.Schema, rec.Schema()); err != nil {
				return fail(err)
			}
		} else if !sameColumns(sc, rec.Schema()) {
			return fail(sqlerr.New(sqlerr.DatatypeMismatch, "every batch of an ingest must have the columns of the first"))
		}
		rec.Retain()
		pending = append(pending, rec)
		rows += rec.NumRows()
		size += recordBytes(rec)
		total += rec.NumRows()
		if rows >= ingestBatchRows || size >= ingestBatchBytes {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	if err := sink.commit(ctx); err != nil {
		return 0, err
	}
	return total, nil
}

// ingestSchema is the schema batches of in are written with: each column
// the table's field of that name (with its metadata), which must have the
// same type.
func ingestSchema(table, in *arrow.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, in.NumFields())
	seen := map[string]bool{}
	for i, f := range in.Fields() {
		idx := table.FieldIndices(f.Name)
		if len(idx) != 1 || seen[f.Name] {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of the ingested data is not a column of the table (or repeats)", f.Name)
		}
		seen[f.Name] = true
		tf := table.Field(idx[0])
		if !arrow.TypeEqual(tf.Type, f.Type) {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "column %q is %s in the table, %s in the ingested data", f.Name, tf.Type, f.Type)
		}
		fields[i] = tf
	}
	return arrow.NewSchema(fields, nil), nil
}

// sameColumns reports whether in has sc's column names and types, in order.
func sameColumns(sc, in *arrow.Schema) bool {
	if sc.NumFields() != in.NumFields() {
		return false
	}
	for i, f := range in.Fields() {
		if f.Name != sc.Field(i).Name || !arrow.TypeEqual(f.Type, sc.Field(i).Type) {
			return false
		}
	}
	return true
}

// recordBytes is the size of rec's buffers, nested arrays' (a vector's
// floats, a list's values) included.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, ch := range d.Children() {
		n += dataBytes(ch)
	}
	return n
}
