package engine

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Scan units. A plain scan of one primary-key table — a direct scan without
// parameters, key filter, LIMIT or OFFSET — reads its snapshot's units
// (partition × bucket, a bucket of one file of unique keys split by row
// group: reader.ParallelUnits) independently and concatenates them. A front door
// that lets several readers fetch in parallel (Flight SQL's endpoints) asks
// for the units with PlanScanUnits and reads each with ReadScanUnit, on any
// session of the same role, on any server of the same catalog: a unit names
// its table and files, and reading it re-checks that the role sees the
// table and that the files are the table's.

// ScanPlan is the unit list of a plain scan's snapshot.
type ScanPlan struct {
	Namespace, Table, TableID string
	// Columns are the output columns, table column names in result order.
	Columns []string
	Units   []reader.Unit
}

// PlanScanUnits takes st's snapshot and lists its units when st is a plain
// scan whose Arrow result (ArrowSchema of its columns) is the table's own
// arrays; ok is false for every other statement.
func (s *Session) PlanScanUnits(ctx context.Context, st pgwire.Statement) (_ *ScanPlan, ok bool, _ error) {
	ts, isTracked := st.(*trackedStmt)
	if !isTracked {
		return nil, false, nil
	}
	if err := ts.current(ctx); err != nil { // replan.go
		return nil, false, err
	}
	q, isQuery := ts.Statement.(*duckQuery)
	if !isQuery || q.direct == nil || len(q.params) > 0 || q.direct.limit >= 0 || q.direct.offset > 0 {
		return nil, false, nil
	}
	if s.inBlock {
		return nil, false, nil // the block's own writes are the session's alone
	}
	p := &directPortal{q: q, d: q.direct}
	if !p.arrowNative(ArrowSchema(q.cols)) {
		return nil, false, nil
	}
	if err := s.takeSnapshotsWith(ctx, q.tables, nil); err != nil {
		return nil, false, err
	}
	e, found := s.e.scans.get(q.direct.handle)
	if !found || e.keys() != nil {
		return nil, false, nil
	}
	// The units a direct scan's workers share (reader.ParallelUnits): its
	// buckets, and a bucket of one file of unique keys by row group.
	scan := &reader.Scan{Store: s.e.scans.store, Table: e.table, Partitions: e.parts, Meta: s.e.scans.meta}
	units, err := scan.ParallelUnits(ctx)
	if err != nil {
		return nil, false, err
	}
	plan := &ScanPlan{Namespace: e.table.Namespace, Table: e.table.Name, TableID: e.table.ID, Units: units}
	for _, c := range q.direct.cols {
		plan.Columns = append(plan.Columns, e.table.Schema.Field(c).Name)
	}
	return plan, true, nil
}

// UnitReader reads one unit of a plain scan (OpenScanUnit).
type UnitReader struct {
	scan *reader.Scan
	unit reader.Unit
	cols []int
	sc   *arrow.Schema
}

// Schema is the schema of the unit's record batches: ArrowSchema of the
// columns as the table has them.
func (r *UnitReader) Schema() *arrow.Schema { return r.sc }

// OpenScanUnit prepares reading unit u of table namespace.name — which must
// still be the table tableID as the session's role sees it (42P01
// otherwise), with columns cols of the same types — without reading yet.
// It touches no state of the session but its role, so several units of one
// session may be read at once, beside the session's other calls.
func (s *Session) OpenScanUnit(ctx context.Context, namespace, name, tableID string, cols []string, u reader.Unit) (*UnitReader, error) {
	t, err := s.e.cat.As(s.user).TableByName(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if t.ID != tableID {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" was dropped since the scan was planned", namespace, name)
	}
	if err := s.e.checkTableDir(t); err != nil {
		return nil, err
	}
	if err := checkUnitFiles(t, u); err != nil {
		return nil, err
	}
	r := &UnitReader{unit: u, cols: make([]int, len(cols))}
	needed := make([]bool, t.Schema.NumFields())
	for i, c := range cols {
		fi := t.Schema.FieldIndices(c)
		if len(fi) != 1 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of %s.%s was dropped since the scan was planned", c, namespace, name)
		}
		r.cols[i], needed[fi[0]] = fi[0], true
	}
	r.sc = tableSchema(t, r.cols)
	for i, c := range r.cols {
		if !arrow.TypeEqual(t.Schema.Field(c).Type, r.sc.Field(i).Type) {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of %s.%s changed since the scan was planned", cols[i], namespace, name)
		}
	}
	scans := s.e.scans
	r.scan = &reader.Scan{Store: scans.store, Table: t, Partitions: []catalog.PartitionFiles{{Desc: u.Desc, Files: u.Files}},
		Mem: scans.mem, Needed: needed, OnlyNeeded: true, Unordered: true, Meta: scans.meta, Chunks: scans.chunks, Spill: scans.spill}
	return r, nil
}

// Run reads the unit and hands its merged rows to emit as record batches
// of r.Schema() of up to arrowCoalesceRows rows, released after emit
// returns.
func (r *UnitReader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	faults.Point("scanunit.read", r.scan.Table.QualifiedName())
	it, err := r.scan.Open(ctx, r.unit)
	if err != nil {
		return err
	}
	defer it.Close()
	co := arrowCoalescer{mem: r.scan.Mem, sc: r.sc, cols: r.cols}
	defer co.release()
	send := func() error {
		rec, err := co.flush()
		if err != nil || rec == nil {
			return err
		}
		err = emit(rec)
		rec.Release()
		return err
	}
	for {
		b, err := reader.NextSelected(ctx, it)
		if err == io.EOF {
			return send()
		}
		if err != nil {
			if ctx.Err() != nil {
				return sqlerr.ErrCanceled
			}
			return err
		}
		if b.Len() == 0 {
			b.Release()
			continue
		}
		co.add(b)
		if co.rows >= arrowCoalesceRows || co.bytes >= arrowCoalesceBytes {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// checkUnitFiles refuses (42501) a unit naming a file outside its table's
// directory (the reader checks each file again when it opens it).
func checkUnitFiles(t *catalog.Table, u reader.Unit) error {
	for _, f := range u.Files {
		if err := layout.CheckWithin(t.Path, f.Path); err != nil {
			return sqlerr.Wrap(sqlerr.InsufficientPrivilege, err, "data file of table "+t.QualifiedName()+" is outside the table's directory")
		}
	}
	return nil
}
