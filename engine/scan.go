package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/internal/duckarrow"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// The bridge from the lake to DuckDB is a table function, lakesoul_scan(handle),
// not a registered Arrow view: DuckDB pushes WHERE filters into Arrow scans and
// duckdb-go does not apply them (duckdb-go#24), so rows would come back
// unfiltered. A table function without filter pushdown leaves every filter to
// DuckDB, which is always correct; projection pushdown still applies.
//
// A query names a table by handle "<session token>:<table id>". The session
// registers the handle when it parses the statement and sets the snapshot (the
// file list) right before it executes; the function copies both at bind time,
// so a running scan never sees a later snapshot.

const scanFunctionName = "lakesoul_scan"

type scanEntry struct {
	table *catalog.Table
	parts []catalog.PartitionFiles
	// resolved is false until a snapshot was taken for the current execution.
	resolved bool
	// fixed entries carry a file list chosen by their creator (one partition
	// of a rewrite, a time-travel snapshot); takeSnapshots never refreshes them.
	fixed bool
	// prune, when set, holds the WHERE terms of a pruned reference; spec is
	// them resolved for the current execution (prune.go), counts what the
	// spec kept of the snapshot.
	prune  *pruneInput
	spec   *pruneSpec
	counts pruneCounts
	// stats counts what the current execution's scans read (EXPLAIN ANALYZE).
	stats *reader.ScanStats
	// changeFeed marks an incremental read (lakesoul.changes): rows of CDC
	// tables whose merged op is delete are kept, as LakeSoul's incremental
	// reads keep them (a change feed that dropped deletes would lose them
	// downstream).
	changeFeed bool
	// rowsOnly marks a reference to a lake table whose statement cannot
	// name its first column (markRowsOnlyScans): when DuckDB asks for that
	// column alone, it wants only the row count.
	rowsOnly bool
}

// keys is the key filter of the entry's current execution.
func (e *scanEntry) keys() *reader.KeyFilter {
	if e.spec == nil {
		return nil
	}
	return e.spec.keys
}

// rows is the row filter of the entry's current execution.
func (e *scanEntry) rows() *reader.RowFilter {
	if e.spec == nil {
		return nil
	}
	return e.spec.rows
}

// scanRegistry maps handles to tables and snapshots. Safe for concurrent use.
type scanRegistry struct {
	store objstore.Store
	// mem allocates the Arrow buffers of every scan and of ingest's writers
	// (COPY, import, Flight ingest): a pool, since both allocate and free
	// buffers batch after batch (arrowutil.PoolAllocator).
	mem *arrowutil.PoolAllocator
	// meta caches data files' footers, key statistics, page indexes and
	// bloom filters across all scans.
	meta *reader.MetaCache
	// chunks caches decoded column chunks of small files for keyed reads.
	chunks *reader.ChunkCache
	// bulk converts scanned batches into DuckDB vectors (scanbulk.go);
	// nil when this DuckDB build does not allow it.
	bulk *bulkBridge
	// spill is the directory of scans' spilled merges (reader.Scan.Spill).
	spill string
	mu    sync.Mutex
	m     map[string]*scanEntry
}

func newScanRegistry(store objstore.Store) *scanRegistry {
	mem := arrowutil.NewPoolAllocator()
	mem.Poison = os.Getenv("LAKESOUL_POISON_FREED") != ""
	return &scanRegistry{store: store, mem: mem, meta: reader.NewMetaCache(reader.DefaultMetaCacheBytes),
		chunks: reader.NewChunkCache(reader.DefaultChunkCacheBytes), m: map[string]*scanEntry{}}
}

func (r *scanRegistry) put(handle string, t *catalog.Table) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[handle]; ok && e.table.ID == t.ID {
		e.table = t
		return
	}
	r.m[handle] = &scanEntry{table: t}
}

// putPruned registers a handle whose snapshots are narrowed by the terms in.
func (r *scanRegistry) putPruned(handle string, t *catalog.Table, in *pruneInput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[handle] = &scanEntry{table: t, prune: in}
}

// putRowsOnly registers handle as a copy of the registered handle from
// (its table and pruning, not its snapshot) marked rowsOnly; false when
// from is not registered or has a fixed file list.
func (r *scanRegistry) putRowsOnly(handle, from string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[from]
	if !ok || e.fixed {
		return false
	}
	r.m[handle] = &scanEntry{table: e.table, prune: e.prune, rowsOnly: true}
	return true
}

// putFixed registers a handle that always scans exactly parts.
func (r *scanRegistry) putFixed(handle string, t *catalog.Table, parts []catalog.PartitionFiles) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[handle] = &scanEntry{table: t, parts: parts, resolved: true, fixed: true}
}

// putChangeFeed registers a handle that always scans exactly parts as an
// incremental read: CDC deletes are rows of the result.
func (r *scanRegistry) putChangeFeed(handle string, t *catalog.Table, parts []catalog.PartitionFiles) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[handle] = &scanEntry{table: t, parts: parts, resolved: true, fixed: true, changeFeed: true}
}

// setSnapshot gives a handle the snapshot of its next execution, narrowed
// by spec, and fresh counters.
func (r *scanRegistry) setSnapshot(handle string, parts []catalog.PartitionFiles, spec *pruneSpec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[handle]
	if !ok {
		return
	}
	e.stats = &reader.ScanStats{}
	if e.fixed {
		_, e.counts = (*pruneSpec)(nil).apply(e.parts)
		return
	}
	e.spec = spec
	e.parts, e.counts = spec.apply(parts)
	e.resolved = true
}

func (r *scanRegistry) get(handle string) (scanEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[handle]
	if !ok {
		return scanEntry{}, false
	}
	return *e, true
}

// drop removes a handle.
func (r *scanRegistry) drop(handle string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, handle)
}

// dropPrefix removes every handle of a session.
func (r *scanRegistry) dropPrefix(prefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for h := range r.m {
		if len(h) >= len(prefix) && h[:len(prefix)] == prefix {
			delete(r.m, h)
		}
	}
}

// releaseWith drops the statement-own handles among tables' (pruned
// references: each statement has its own) once owner, the statement
// holding them, is garbage. Shared handles live as long as the session.
func releaseWith[T any](r *scanRegistry, owner *T, tables map[string]*catalog.Table) {
	var own []string
	r.mu.Lock()
	for h := range tables {
		if e, ok := r.m[h]; ok && e.prune != nil {
			own = append(own, h)
		}
	}
	r.mu.Unlock()
	if len(own) == 0 {
		return
	}
	runtime.AddCleanup(owner, func(hs []string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, h := range hs {
			delete(r.m, h)
		}
	}, own)
}

// scanFailures carries the errors of lakesoul_scan through DuckDB, which
// keeps only an error's text: the scan reports its error under a number,
// and the DuckDB error mapper (duckdb.go) gives the statement the original
// error, SQLSTATE and all. The last few hundred are kept.
var scanFailures failureBox

type failureBox struct {
	mu    sync.Mutex
	next  uint64
	m     map[uint64]error
	order []uint64
}

var failureRef = regexp.MustCompile(`\(lakesoul scan failure #(\d+)\)`)

// wrap records err and returns the error DuckDB passes on: err itself
// when it has no SQLSTATE of its own (DuckDB's error then carries its text
// and the mapper classifies it as before) — except a panic, which stays
// XX000 "internal error" whatever its text (duckguard.go).
func (b *failureBox) wrap(err error) error {
	se := sqlerr.From(err)
	if se.Code == sqlerr.InternalError && !errors.As(err, new(*safego.PanicError)) {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[uint64]error{}
	}
	b.next++
	b.m[b.next] = err
	b.order = append(b.order, b.next)
	if len(b.order) > 256 {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
	return fmt.Errorf("%s (lakesoul scan failure #%d)", se.Message, b.next)
}

// recover returns the error a DuckDB error message refers to, if any.
func (b *failureBox) recover(msg string) error {
	m := failureRef.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	id, _ := strconv.ParseUint(m[1], 10, 64)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[id]
}

func registerScanFunction(conn *sql.Conn, reg *scanRegistry) error {
	varchar, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	if err != nil {
		return err
	}
	fn := duckdb.ParallelChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{varchar}},
		BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.ParallelChunkTableSource, error) {
			handle, _ := args[0].(string)
			e, ok := reg.get(handle)
			if !ok {
				return nil, fmt.Errorf("%s: unknown handle", scanFunctionName)
			}
			return newScanSource(ctx, reg, e)
		},
	}
	return duckdb.RegisterTableUDF(conn, scanFunctionName, guardTable(fn))
}

// scanSource feeds one scan of one table into DuckDB chunks. Units (partition
// × bucket) are independent, so DuckDB's threads each take the next unit and
// fill chunks from it; nextUnit is the only shared state.
type scanSource struct {
	ctx      context.Context
	reg      *scanRegistry
	scan     *reader.Scan
	units    []reader.Unit
	infos    []duckdb.ColumnInfo
	setters  []chunkSetter
	nextUnit atomic.Int64
	// projected marks the columns DuckDB asked for; learned from the first
	// chunk (before any unit opens) and handed to the reader as Needed.
	projOnce  sync.Once
	projected []bool
	// open tracks iterators still open, so a scan DuckDB abandons early
	// (LIMIT) has its files closed when the source is collected.
	open *openIterators
	// bulk hands projected columns to DuckDB as Arrow (scanbulk.go); nil:
	// every value is set one by one.
	bulk *bulkScan
	// rowsOnly is the entry's: the first column, when DuckDB asks for it
	// alone, is read from no file (NULLs fill it); nullFirst: it does,
	// and chunks are filled by fillRows.
	rowsOnly, nullFirst bool
	// card is DuckDB's estimate of the rows the scan returns (cardinality).
	card *duckdb.CardinalityInfo
}

type openIterators struct {
	mu sync.Mutex
	m  map[reader.Iterator]struct{}
}

func (o *openIterators) add(it reader.Iterator) {
	o.mu.Lock()
	o.m[it] = struct{}{}
	o.mu.Unlock()
}

func (o *openIterators) close(it reader.Iterator) {
	o.mu.Lock()
	delete(o.m, it)
	o.mu.Unlock()
	it.Close()
}

func (o *openIterators) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for it := range o.m {
		it.Close()
	}
	o.m = map[reader.Iterator]struct{}{}
}

// scanThread is one DuckDB thread's position in the scan.
type scanThread struct {
	it    reader.Iterator
	batch arrow.RecordBatch
	row   int
}

func newScanSource(ctx context.Context, reg *scanRegistry, e scanEntry) (*scanSource, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := &scanSource{
		ctx:      ctx,
		reg:      reg,
		rowsOnly: e.rowsOnly,
		scan: &reader.Scan{Store: reg.store, Table: e.table, Partitions: e.parts, Mem: reg.mem, Unordered: true,
			Keys: e.keys(), Rows: e.rows(), Meta: reg.meta, Chunks: reg.chunks, Stats: e.stats, KeepCDCDeletes: e.changeFeed, Spill: reg.spill,
			OnlyNeeded: true},
		open: &openIterators{m: map[reader.Iterator]struct{}{}},
	}
	runtime.AddCleanup(s, func(o *openIterators) { o.closeAll() }, s.open)
	for _, f := range e.table.Schema.Fields() {
		ti, set, err := duckColumn(f)
		if en := e.table.Enums[schema.EnumOID(f)]; en != nil {
			ti, set, err = enumColumn(en) // enum.go
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		s.infos = append(s.infos, duckdb.ColumnInfo{Name: f.Name, T: ti})
		s.setters = append(s.setters, set)
	}
	units, err := s.scan.ParallelUnits(ctx)
	if err != nil {
		return nil, err
	}
	s.units = units
	if s.card, err = scanCardinality(ctx, s.scan); err != nil {
		return nil, err
	}
	return s, nil
}

// scanCardinality is the row count DuckDB's optimizer plans scan with (join
// order, build sides): the rows in its files' footers (reader.FileRows;
// estimated by size beyond a budget of uncached footers). Exact only for
// an append table read without a filter; a primary-key table's count is
// an upper bound (every version of a key counts), and a filtered scan's
// too.
func scanCardinality(ctx context.Context, scan *reader.Scan) (*duckdb.CardinalityInfo, error) {
	rows, exact, err := scan.FileRows(ctx)
	if err != nil {
		return nil, err
	}
	exact = exact && !scan.Table.HasPK() && scan.Keys == nil && scan.Rows == nil
	return &duckdb.CardinalityInfo{Cardinality: uint(rows), Exact: exact}, nil
}

func (s *scanSource) ColumnInfos() []duckdb.ColumnInfo     { return s.infos }
func (s *scanSource) Cardinality() *duckdb.CardinalityInfo { return s.card }

func (s *scanSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: max(1, min(len(s.units), runtime.GOMAXPROCS(0)))}
}

func (s *scanSource) NewLocalState() any { return &scanThread{} }

// onlyFirst reports whether projected marks the first column alone.
func onlyFirst(projected []bool) bool {
	for c, p := range projected {
		if p != (c == 0) {
			return false
		}
	}
	return len(projected) > 0
}

// nextBatch advances th to its next non-empty batch, taking new units as
// needed; false when no unit is left.
func (s *scanSource) nextBatch(th *scanThread) (bool, error) {
	if th.batch != nil {
		th.batch.Release()
		th.batch = nil
	}
	for {
		if th.it == nil {
			u := int(s.nextUnit.Add(1) - 1)
			if u >= len(s.units) {
				return false, nil
			}
			it, err := s.scan.Open(s.ctx, s.units[u])
			if err != nil {
				return false, err
			}
			s.open.add(it)
			th.it = it
		}
		b, err := th.it.Next(s.ctx)
		if err == io.EOF {
			s.open.close(th.it)
			th.it = nil
			continue
		}
		if err != nil {
			return false, err
		}
		if b.NumRows() == 0 {
			// A chunk of no rows would end DuckDB's scan of this thread.
			b.Release()
			continue
		}
		th.batch, th.row = b, 0
		return true, nil
	}
}

func (s *scanSource) FillChunk(local any, chunk duckdb.DataChunk) error {
	faults.Point("scan.fill", s.scan.Table.QualifiedName())
	th := local.(*scanThread)
	s.projOnce.Do(func() {
		s.projected = make([]bool, len(s.setters))
		for c := range s.projected {
			_, err := chunk.GetVector(c)
			s.projected[c] = err == nil
		}
		s.scan.Needed = s.projected
		if s.rowsOnly && onlyFirst(s.projected) {
			// DuckDB wants some column of a scan whose statement reads
			// none (count(*), EXISTS): the reader counts rows from the
			// footers, and the column it hands over is NULL, marked so
			// in one call per chunk when its type is flat.
			s.scan.Needed = make([]bool, len(s.projected))
			s.nullFirst = duckarrow.Available() == nil && bulkType(s.scan.Table.Schema.Field(0))
		}
		s.bulk = s.reg.bulk.newScan(s.scan.Table, s.projected)
	})
	if s.nullFirst {
		return s.fillRows(th, &chunk)
	}
	if b := s.bulk; b != nil && b.enabled() {
		return s.fillBulk(th, b, &chunk)
	}
	capacity := duckdb.GetDataChunkCapacity()
	n := 0
	for n < capacity {
		if th.batch == nil || th.row >= int(th.batch.NumRows()) {
			ok, err := s.advance(th)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		take := min(capacity-n, int(th.batch.NumRows())-th.row)
		for c, set := range s.setters {
			if !s.projected[c] {
				continue
			}
			col := th.batch.Column(c)
			for i := 0; i < take; i++ {
				if err := set(chunk, c, n+i, col, th.row+i); err != nil {
					return err
				}
			}
		}
		th.row += take
		n += take
	}
	return chunk.SetSize(n)
}

// fillRows fills chunk with the next rows of th's batch (at most one
// chunk's worth) for a scan whose only column the query does not read:
// the column is marked NULL, nothing else is set.
func (s *scanSource) fillRows(th *scanThread, chunk *duckdb.DataChunk) error {
	if th.batch == nil || th.row >= int(th.batch.NumRows()) {
		ok, err := s.advance(th)
		if err != nil {
			return err
		}
		if !ok {
			return chunk.SetSize(0)
		}
	}
	take := min(duckdb.GetDataChunkCapacity(), int(th.batch.NumRows())-th.row)
	if err := duckarrow.FillNull(chunk, 0, take); err != nil {
		return err
	}
	th.row += take
	return chunk.SetSize(take)
}

// advance moves th to its next batch, as nextBatch, closing th at the end
// or on an error, which it returns as DuckDB should see it.
func (s *scanSource) advance(th *scanThread) (bool, error) {
	ok, err := s.nextBatch(th)
	if err != nil {
		s.closeThread(th)
		if s.ctx.Err() != nil {
			return false, sqlerr.ErrCanceled
		}
		return false, scanFailures.wrap(err)
	}
	if !ok {
		s.closeThread(th)
	}
	return ok, nil
}

func (s *scanSource) closeThread(th *scanThread) {
	if th.batch != nil {
		th.batch.Release()
		th.batch = nil
	}
	if th.it != nil {
		s.open.close(th.it)
		th.it = nil
	}
}

// chunkSetter copies value i of arr into DuckDB's chunk at (col, row).
type chunkSetter func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error

func setNullable[T any](get func(arrow.Array, int) T) chunkSetter {
	return func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
		if arr.IsNull(i) {
			return chunk.SetValue(col, row, nil)
		}
		return duckdb.SetChunkValue(chunk, col, row, get(arr, i))
	}
}

// duckInterval is DuckDB's value of a lake interval (schema.IntervalType).
func duckInterval(v arrow.MonthDayNanoInterval) duckdb.Interval {
	return duckdb.Interval{Months: v.Months, Days: v.Days, Micros: schema.IntervalMicros(v)}
}

// duckColumn returns the DuckDB type of a lake column and its setter. A
// uuid column (text in its files) is DuckDB's UUID, so it compares, sorts
// and combines as PostgreSQL's uuid does; text that is no uuid fails the
// scan with 22P02.
func duckColumn(f arrow.Field) (duckdb.TypeInfo, chunkSetter, error) {
	simple := func(t duckdb.Type, set chunkSetter) (duckdb.TypeInfo, chunkSetter, error) {
		ti, err := duckdb.NewTypeInfo(t)
		return ti, set, err
	}
	if oid, _ := schema.PGTypeOf(f); oid == schema.OIDUUID {
		if _, ok := f.Type.(*arrow.StringType); ok {
			return simple(duckdb.TYPE_UUID, func(chunk duckdb.DataChunk, col, row int, arr arrow.Array, i int) error {
				if arr.IsNull(i) {
					return chunk.SetValue(col, row, nil)
				}
				s := arr.(*array.String).Value(i)
				u, err := uuid.Parse(s)
				if err != nil {
					return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", s)
				}
				return duckdb.SetChunkValue(chunk, col, row, duckdb.UUID(u))
			})
		}
	}
	switch t := f.Type.(type) {
	case *arrow.Int64Type:
		return simple(duckdb.TYPE_BIGINT, setNullable(func(a arrow.Array, i int) int64 { return a.(*array.Int64).Value(i) }))
	case *arrow.Int32Type:
		return simple(duckdb.TYPE_INTEGER, setNullable(func(a arrow.Array, i int) int32 { return a.(*array.Int32).Value(i) }))
	case *arrow.Int16Type:
		return simple(duckdb.TYPE_SMALLINT, setNullable(func(a arrow.Array, i int) int16 { return a.(*array.Int16).Value(i) }))
	case *arrow.Int8Type:
		return simple(duckdb.TYPE_TINYINT, setNullable(func(a arrow.Array, i int) int8 { return a.(*array.Int8).Value(i) }))
	case *arrow.Float64Type:
		return simple(duckdb.TYPE_DOUBLE, setNullable(func(a arrow.Array, i int) float64 { return a.(*array.Float64).Value(i) }))
	case *arrow.Float32Type:
		return simple(duckdb.TYPE_FLOAT, setNullable(func(a arrow.Array, i int) float32 { return a.(*array.Float32).Value(i) }))
	case *arrow.BooleanType:
		return simple(duckdb.TYPE_BOOLEAN, setNullable(func(a arrow.Array, i int) bool { return a.(*array.Boolean).Value(i) }))
	case *arrow.StringType:
		return simple(duckdb.TYPE_VARCHAR, setNullable(func(a arrow.Array, i int) string { return a.(*array.String).Value(i) }))
	case *arrow.BinaryType:
		return simple(duckdb.TYPE_BLOB, setNullable(func(a arrow.Array, i int) []byte { return a.(*array.Binary).Value(i) }))
	case *arrow.Date32Type:
		return simple(duckdb.TYPE_DATE, setNullable(func(a arrow.Array, i int) time.Time {
			return a.(*array.Date32).Value(i).ToTime()
		}))
	case *arrow.TimestampType:
		dtype := duckdb.TYPE_TIMESTAMP
		if t.TimeZone != "" {
			dtype = duckdb.TYPE_TIMESTAMP_TZ
		}
		toTime, err := t.GetToTimeFunc()
		if err != nil {
			return nil, nil, err
		}
		return simple(dtype, setNullable(func(a arrow.Array, i int) time.Time {
			return toTime(a.(*array.Timestamp).Value(i)).UTC()
		}))
	case *arrow.Decimal128Type:
		ti, err := duckdb.NewDecimalInfo(uint8(t.Precision), uint8(t.Scale))
		w, sc := uint8(t.Precision), uint8(t.Scale)
		return ti, setNullable(func(a arrow.Array, i int) duckdb.Decimal {
			return duckdb.Decimal{Width: w, Scale: sc, Value: new(big.Int).Set(a.(*array.Decimal128).Value(i).BigInt())}
		}), err
	case *arrow.MonthDayNanoIntervalType:
		return simple(duckdb.TYPE_INTERVAL, setNullable(func(a arrow.Array, i int) duckdb.Interval {
			return duckInterval(a.(*array.MonthDayNanoInterval).Value(i))
		}))
	case *arrow.FixedSizeListType:
		if t.Elem().ID() == arrow.FLOAT32 {
			return vectorColumn(int(t.Len())) // vectorops.go
		}
	case *arrow.ListType:
		return arrayColumn(t) // arraycols.go
	}
	return nil, nil, fmt.Errorf("type %s cannot be scanned", f.Type)
}
