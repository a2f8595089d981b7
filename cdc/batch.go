package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/writer"
)

// A batch collects whole source transactions — one or several, never part
// of one — and lands them with one lakesoul.cdc_commit: their rows in every
// table, their schema changes and the position after the last of them,
// together or not at all.
//
// Rows are buffered per table in Arrow builders and written out as data
// files (under the batch's write intent) whenever a table's buffer holds
// runRows rows, so a large source transaction is bounded in memory by
// files, not by its size; the files become visible only with the commit.
// A run is a sequence of one table's rows carrying the same columns: a row
// whose unchanged TOASTed values PostgreSQL did not send starts a run
// without those columns, a partial upsert that keeps their old values on
// read. Runs are written in arrival order, so later rows win.

// runRows bounds the rows of a table buffered before they are written;
// copyRunRows during the initial copy (fewer, larger files).
const (
	runRows     = 64 << 10
	copyRunRows = 256 << 10
)

// value is one column of a source row.
type value struct {
	kind byte // valNull, valText or valUnchanged
	data []byte
}

const (
	valNull      = 'n'
	valText      = 't'
	valUnchanged = 'u' // a TOASTed value the source did not send: keep the old one
	valBinary    = 'b' // PostgreSQL's binary send format (the initial copy)
)

// Row ops, the values of the CDC column.
const (
	opInsert = "insert"
	opUpdate = "update"
	opDelete = "delete"
)

type run struct {
	cols  []int // source columns present, in source order
	rb    *array.RecordBuilder
	n     int
	bs    []array.Builder // rb's field builders and their types
	types []arrow.DataType
	op    *array.StringBuilder // the CDC column's, or nil
}

// takes reports whether a row with vals continues r: the columns it
// carries (those not valUnchanged) are exactly r's. It does not allocate:
// it runs once per source row.
func (r *run) takes(vals []value) bool {
	j := 0
	for i, v := range vals {
		if v.kind == valUnchanged {
			continue
		}
		if j == len(r.cols) || r.cols[j] != i {
			return false
		}
		j++
	}
	return j == len(r.cols)
}

type tableBatch struct {
	ts        *tableState
	run       *run
	parts     []catalog.PartitionCommit
	truncated bool
	w         *writer.Writer
}

type batch struct {
	env    *Env
	intent *catalog.WriteIntent
	tables []*tableBatch
	alters []*tableState
	states []catalog.CDCTableState
	rows   int
	txns   int
	// end is the position after the batch's last transaction; commitAt its
	// commit time at the source.
	end      string
	commitAt time.Time
	opened   time.Time
	// copying: the initial copy (larger runs).
	copying bool

	// The file writer (flushRun): jobs, the runs not yet written, its
	// first error.
	jobs    chan writeJob
	pending sync.WaitGroup
	mu      sync.Mutex
	err     error
}

func newBatch(env *Env) *batch { return &batch{env: env} }

func (b *batch) empty() bool {
	return b.txns == 0 && len(b.alters) == 0 && len(b.states) == 0
}

func (b *batch) table(ts *tableState) *tableBatch {
	for _, tb := range b.tables {
		if tb.ts == ts {
			return tb
		}
	}
	tb := &tableBatch{ts: ts}
	b.tables = append(b.tables, tb)
	return tb
}

// add buffers one row change of ts. vals are the row's columns in source
// order (for a delete, the key columns; the others are NULL).
func (b *batch) add(ctx context.Context, ts *tableState, op string, vals []value) error {
	if ts.failed {
		return nil
	}
	if err := checkRow(ts, op, vals); err != nil {
		return err
	}
	tb := b.table(ts)
	if tb.run != nil && !tb.run.takes(vals) {
		if err := b.flushRun(ctx, tb); err != nil {
			return err
		}
	}
	if tb.run == nil {
		r, err := newRun(ts, presentColumns(vals))
		if err != nil {
			return err
		}
		tb.run = r
	}
	if err := tb.run.appendRow(ts, op, vals); err != nil {
		return err
	}
	b.rows++
	limit := runRows
	if b.copying {
		limit = copyRunRows
	}
	if tb.run.n >= limit {
		return b.flushRun(ctx, tb)
	}
	return nil
}

// checkRow checks that a row change of ts can be buffered at all.
func checkRow(ts *tableState, op string, vals []value) error {
	if len(vals) != len(ts.cols) {
		return fmt.Errorf("table %s: a row of %d columns, the table has %d", ts.source, len(vals), len(ts.cols))
	}
	if ts.t.CDCColumn() == "" && op != opInsert {
		return incompatible("%s of a row in a table without a primary key cannot be applied (the lake table is an append table)", op)
	}
	return nil
}

// presentColumns are the source columns a row carries (not valUnchanged).
func presentColumns(vals []value) []int {
	var cols []int
	for i, v := range vals {
		if v.kind != valUnchanged {
			cols = append(cols, i)
		}
	}
	return cols
}

// newRun starts a run of ts's rows carrying the source columns cols (and
// the CDC column when ts has one).
func newRun(ts *tableState, cols []int) (*run, error) {
	cdc := ts.t.CDCColumn() != ""
	fields := make([]arrow.Field, 0, len(cols)+1)
	for _, i := range cols {
		idx := ts.t.Schema.FieldIndices(ts.cols[i].Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("table %s: column %q is missing from the lake table", ts.source, ts.cols[i].Name)
		}
		fields = append(fields, ts.t.Schema.Field(idx[0]))
	}
	if cdc {
		fields = append(fields, arrow.Field{Name: OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	r := &run{cols: cols, rb: array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))}
	for j := range cols {
		r.bs = append(r.bs, r.rb.Field(j))
		r.types = append(r.types, fields[j].Type)
	}
	if cdc {
		r.op = r.rb.Field(len(cols)).(*array.StringBuilder)
	}
	return r, nil
}

// appendRow appends one row change to r, which takes(vals).
func (r *run) appendRow(ts *tableState, op string, vals []value) error {
	for j, i := range r.cols {
		v := vals[i]
		if v.kind == valNull {
			r.bs[j].AppendNull()
			continue
		}
		appendValue := appendText
		if v.kind == valBinary {
			appendValue = appendBinary
		}
		if err := appendValue(r.bs[j], r.types[j], v.data); err != nil {
			// Keep the builders' columns the same length: the row is lost
			// with the table, which stops.
			return incompatible("column %q: %v", ts.cols[i].Name, err)
		}
	}
	if r.op != nil {
		r.op.Append(op)
	}
	r.n++
	return nil
}

// flushRun hands tb's buffered rows to the batch's file writer (handOver).
func (b *batch) flushRun(ctx context.Context, tb *tableBatch) error {
	r := tb.run
	if r == nil {
		return nil
	}
	tb.run = nil
	return b.handOver(ctx, tb, r)
}

// handOver gives run r of tb's table to the batch's file writer, which
// writes it as data files under the batch's intent on its own goroutine
// while the next rows are decoded, and releases r. At most one run waits
// for the writer (the hand-over blocks beyond it), so memory holds about
// three runs — more while a chunked copy builds a run per chunk.
func (b *batch) handOver(ctx context.Context, tb *tableBatch, r *run) error {
	defer r.rb.Release()
	if r.n == 0 {
		return b.writeErr()
	}
	if err := b.writeErr(); err != nil {
		return err
	}
	if b.intent == nil {
		intent, err := b.env.Catalog.BeginWrite(ctx)
		if err != nil {
			return err
		}
		b.intent = intent
	}
	if tb.w == nil || tb.w.Table != tb.ts.t {
		tb.w = &writer.Writer{Store: b.env.Store, Table: tb.ts.t, Intent: b.intent}
	}
	if b.jobs == nil {
		b.jobs = make(chan writeJob, 1)
		jobs := b.jobs
		safego.Go(func() { b.writeFiles(context.WithoutCancel(ctx), jobs) })
	}
	b.pending.Add(1)
	select {
	case b.jobs <- writeJob{tb: tb, w: tb.w, rec: r.rb.NewRecordBatch()}:
		return nil
	case <-ctx.Done():
		b.pending.Done()
		return ctx.Err()
	}
}

// writeJob is one run for the file writer.
type writeJob struct {
	tb  *tableBatch
	w   *writer.Writer
	rec arrow.RecordBatch
}

// writeFiles writes runs in the order they came (so later rows' files come
// later); after its first error it only releases them. A panic of a write
// is that write's error.
func (b *batch) writeFiles(ctx context.Context, jobs <-chan writeJob) {
	for j := range jobs {
		if b.writeErr() == nil {
			var parts []catalog.PartitionCommit
			err := safego.Call(func() (err error) {
				parts, err = j.w.Write(ctx, j.rec)
				return err
			})
			if err != nil {
				b.mu.Lock()
				b.err = fmt.Errorf("write %s: %w", j.w.Table.QualifiedName(), err)
				b.mu.Unlock()
			} else {
				j.tb.parts = mergeParts(j.tb.parts, parts)
			}
		}
		j.rec.Release()
		b.pending.Done()
	}
}

func (b *batch) writeErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// drain waits until the file writer wrote every run handed to it; only
// then may the tables' parts be read. It returns the writer's error.
func (b *batch) drain() error {
	b.pending.Wait()
	return b.writeErr()
}

func mergeParts(dst, more []catalog.PartitionCommit) []catalog.PartitionCommit {
	for _, p := range more {
		if i := slices.IndexFunc(dst, func(q catalog.PartitionCommit) bool { return q.Desc == p.Desc }); i >= 0 {
			dst[i].Ops = append(dst[i].Ops, p.Ops...)
		} else {
			dst = append(dst, p)
		}
	}
	return dst
}

// truncate replicates a TRUNCATE of ts: the batch's earlier rows of ts are
// dropped and the commit empties the table before the later ones.
func (b *batch) truncate(ctx context.Context, ts *tableState) {
	if ts.failed {
		return
	}
	tb := b.table(ts)
	if tb.run != nil {
		tb.run.rb.Release()
		tb.run = nil
	}
	_ = b.drain()
	deleteFiles(ctx, b.env, tb.parts)
	tb.parts = nil
	tb.truncated = true
}

// alter makes t the lake table of ts from now on: rows buffered so far are
// written in the old schema, the change is committed with the batch.
func (b *batch) alter(ctx context.Context, ts *tableState, t *catalog.Table) error {
	if tb := b.table(ts); tb.run != nil {
		if err := b.flushRun(ctx, tb); err != nil {
			return err
		}
	}
	ts.t = t
	if !slices.Contains(b.alters, ts) {
		b.alters = append(b.alters, ts)
	}
	b.states = append(b.states, catalog.CDCTableState{SourceTable: ts.source, Columns: columnsJSON(ts.cols)})
	return nil
}

// dropTable forgets the batch's rows of a table that stopped.
func (b *batch) dropTable(ctx context.Context, ts *tableState) {
	i := slices.IndexFunc(b.tables, func(tb *tableBatch) bool { return tb.ts == ts })
	if i < 0 {
		return
	}
	tb := b.tables[i]
	if tb.run != nil {
		tb.run.rb.Release()
		tb.run = nil
	}
	_ = b.drain()
	deleteFiles(ctx, b.env, tb.parts)
	b.tables = slices.Delete(b.tables, i, i+1)
	b.alters = slices.DeleteFunc(b.alters, func(t *tableState) bool { return t == ts })
}

// commitTxn notes the end of a source transaction.
func (b *batch) commitTxn(end string, at time.Time) {
	if b.txns == 0 && b.opened.IsZero() {
		b.opened = time.Now()
	}
	b.txns++
	b.end, b.commitAt = end, at
}

// commit lands the batch at position b.end, from prev; it returns whether
// the position was stored before (a re-sent commit). The batch is spent
// either way; on failure its files are deleted unless the outcome is
// unknown.
func (b *batch) commit(ctx context.Context, sub string, token uuid.UUID, prev, sourcePos string) (already bool, err error) {
	defer b.release(ctx)
	var commits []catalog.TableCommit
	for _, tb := range b.tables {
		if err := b.flushRun(ctx, tb); err != nil {
			b.abort(ctx)
			return false, err
		}
	}
	if err := b.drain(); err != nil {
		b.abort(ctx)
		return false, err
	}
	for _, tb := range b.tables {
		t := tb.ts.t
		if tb.truncated {
			parts, err := b.env.Catalog.LiveFiles(ctx, t.ID, nil)
			if err != nil {
				b.abort(ctx)
				return false, err
			}
			var del []catalog.PartitionCommit
			for _, p := range parts {
				v := p.Version
				del = append(del, catalog.PartitionCommit{Desc: p.Desc, CommitID: uuid.New(), ReadVersion: &v})
			}
			if len(del) > 0 {
				commits = append(commits, catalog.TableCommit{TableID: t.ID, Op: catalog.DeleteCommit, Parts: del})
			}
		}
		if len(tb.parts) > 0 {
			if b.env.VerifyChecks != nil {
				if err := b.env.VerifyChecks(ctx, t, tb.parts); err != nil {
					b.abort(ctx)
					return false, fmt.Errorf("table %s.%s: %w", t.Namespace, t.Name, err)
				}
			}
			op := catalog.AppendCommit
			if t.HasPK() {
				op = catalog.MergeCommit
			}
			commits = append(commits, catalog.TableCommit{TableID: t.ID, Op: op, Parts: tb.parts})
		}
	}
	alters := make([]catalog.CDCAlter, len(b.alters))
	for i, ts := range b.alters {
		alters[i] = catalog.CDCAlter{Table: ts.t}
	}
	already, err = b.env.Catalog.CommitCDC(ctx, &catalog.CDCBatch{
		Subscription: sub, Token: token, PrevPosition: prev, Position: b.end,
		Commits: commits, Alters: alters, Tables: b.states, Intent: b.intent,
		SourcePosition: sourcePos, SourceCommitAt: b.commitAt,
	})
	if err != nil && !errors.Is(err, catalog.ErrCommitOutcomeUnknown) {
		b.abort(ctx)
	}
	return already, err
}

// abort deletes the batch's files.
func (b *batch) abort(ctx context.Context) {
	_ = b.drain()
	for _, tb := range b.tables {
		deleteFiles(ctx, b.env, tb.parts)
		tb.parts = nil
	}
}

// release frees the builders, stops the file writer and ends the write
// intent.
func (b *batch) release(ctx context.Context) {
	for _, tb := range b.tables {
		if tb.run != nil {
			tb.run.rb.Release()
			tb.run = nil
		}
	}
	_ = b.drain()
	if b.jobs != nil {
		close(b.jobs)
		b.jobs = nil
	}
	b.intent.Release(ctx)
	b.intent = nil
}

func deleteFiles(ctx context.Context, env *Env, parts []catalog.PartitionCommit) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range parts {
		for _, f := range p.Ops {
			if f.Op == "add" {
				_ = env.Store.Delete(ctx, f.Path)
			}
		}
	}
}
