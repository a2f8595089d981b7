package engine

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/writer"
)

// Bulk ingest: a producer (COPY FROM, INSERT) builds Arrow batches of one
// table; a tableSink writes each batch's data files on its own goroutine
// while the producer builds the next, and commits every file of the ingest
// once at the end (or stages the commit in a transaction block). Files of a
// failed ingest are deleted.
//
// Memory is bounded by batches, not by the size of the ingest: at most two
// batches are alive, the one the writer writes and the one the producer
// fills (the hand-over waits for the writer), plus the writer's working set
// of a few column chunks. A batch ends at ingestBatchRows rows or at about
// ingestBatchBytes of Arrow data, whichever comes first. On a
// primary-key table the only batch of an ingest becomes data files; in a
// larger ingest every batch becomes one sorted run (an Arrow IPC file,
// writer.Writer.Runs) per (partition, bucket), and before the commit the
// runs are merged into one data file per (partition, bucket)
// (writer.MergeRuns), so readers merge one file per ingest, however large
// it was, and each row is encoded as Parquet once.
//
// Inside a transaction block a write that fits in one small batch is not
// written at all: the session buffers its rows (txn.go, bufferRows) and
// writes a table's buffered rows as one set of files later, so a client
// that sends many single-row INSERTs in a block (Spark's JDBC sink) makes a
// few files, not a few per statement.

// Batch bounds of a bulk ingest: a batch is handed to the writer when it
// reaches either. Two 32 MiB batches, the writer's working set and the Go
// heap's growth between collections keep a 10 M-row COPY under 512 MiB
// resident (tests/copy_memory_test.go: about 360 MiB for narrow rows, 390
// MiB for 150-byte rows, measured); 64 MiB batches came to 470 MiB with
// narrow rows and would pass 512 with wide ones.
const (
	ingestBatchRows  = 1 << 20
	ingestBatchBytes = 32 << 20
)

// smallWriteRows bounds a write the session buffers in a transaction block;
// bufferedFlushRows bounds the buffered rows of one table before they are
// written out.
const (
	smallWriteRows    = 16 << 10
	bufferedFlushRows = 256 << 10
)

// tableSink writes Arrow batches of one table and commits them together.
type tableSink struct {
	s *Session
	t *catalog.Table
	// w is the writer, made with the session's write intent when the first
	// batch is sent (the writer goroutine reads it after receiving that
	// batch).
	w     *writer.Writer
	parts []catalog.PartitionCommit // every file written so far, by partition
	// pending is a small first batch, held back until it is known whether
	// the whole write is small; sent counts the batches handed to the writer.
	pending arrow.RecordBatch
	sent    int
	// multi: the ingest has more than one batch (known when the second
	// arrives, before the first is sent).
	multi   bool
	batches chan arrow.RecordBatch
	done    chan struct{}
	err     error // the writer goroutine's first error; read after done
	rows    int64
	// schema is the first batch's; every batch of one ingest has it (nil
	// while no row was written).
	schema *arrow.Schema
	// keysExist: every key written already exists in the table (UPDATE,
	// CDC delete markers), so columns left out cannot end up NULL.
	keysExist bool
}

// newTableSink starts the writer goroutine; the caller must end the sink
// with commit or abort, and defers release.
func (s *Session) newTableSink(ctx context.Context, t *catalog.Table) *tableSink {
	// Unbuffered: a batch is handed over only when the writer takes it, so
	// no third batch waits in between.
	k := &tableSink{s: s, t: t, batches: make(chan arrow.RecordBatch), done: make(chan struct{})}
	batches := k.batches
	safego.Go(func() { k.run(ctx, batches) })
	return k
}

// run writes the batches until the channel closes. A panic fails the
// ingest like a write error, delivered before done closes (the batches
// left are then never received: send sees done).
func (k *tableSink) run(ctx context.Context, batches <-chan arrow.RecordBatch) {
	defer close(k.done)
	defer safego.RecoverTo(func(err error) { k.err = err })
	for rec := range batches {
		faults.Point("sink.write", k.t.QualifiedName())
		if k.err == nil {
			parts, err := k.w.Write(ctx, rec)
			if err != nil {
				k.err = err
			} else {
				k.parts = mergePartitionCommits(k.parts, parts)
			}
		}
		rec.Release()
	}
}

// write hands rec to the writer (taking over the reference). It returns
// the writer's error if an earlier batch failed; the ingest must then abort.
func (k *tableSink) write(ctx context.Context, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	if k.batches == nil {
		rec.Release()
		return errSinkClosed
	}
	k.rows += rec.NumRows()
	if k.schema == nil {
		k.schema = rec.Schema()
	}
	if r := k.s.rmwFor(k.t); r != nil && r.keys != nil {
		// The rows a read-modify-write statement writes (rmw.go).
		if err := r.keys.add(rec); err != nil {
			rec.Release()
			return err
		}
	}
	if k.pending == nil && k.sent == 0 && (rec.NumRows() <= smallWriteRows || k.t.HasPK()) {
		// Held back: only a small write may be buffered at commit (see
		// commit), and on a primary-key table the first batch's format
		// depends on whether another follows — the only batch of an
		// ingest becomes data files, every batch of a larger one a run
		// that commit merges (writer.Writer.Runs), so no batch is encoded
		// as a data file only to be merged. A larger first batch of a table
		// without a key goes to the writer at once.
		k.pending = rec
		return nil
	}
	if k.pending != nil && k.sent == 0 {
		k.multi = true
	}
	if err := k.sendPending(ctx); err != nil {
		rec.Release()
		return err
	}
	return k.send(ctx, rec)
}

// continued tells the sink that the producer has more rows after the
// batches it wrote: a first batch held back (see write) then goes to the
// writer at once, as the first run of a multi-batch ingest, instead of
// waiting for the second batch to fill. Producers call it when they go on
// after a write; write itself reaches the same conclusion later.
func (k *tableSink) continued(ctx context.Context) error {
	if k.pending == nil || k.sent > 0 || k.batches == nil {
		return nil
	}
	k.multi = true
	return k.sendPending(ctx)
}

// sendPending hands the held-back first batch to the writer.
func (k *tableSink) sendPending(ctx context.Context) error {
	if k.pending == nil {
		return nil
	}
	rec := k.pending
	k.pending = nil
	return k.send(ctx, rec)
}

func (k *tableSink) send(ctx context.Context, rec arrow.RecordBatch) error {
	if k.w == nil {
		intent, err := k.s.writeIntent(ctx)
		if err != nil {
			rec.Release()
			return err
		}
		// The first batch sent settles the format: runs when more than
		// one batch is written (the writer goroutine reads Runs only after
		// it received that batch, and it never changes).
		k.w = &writer.Writer{Store: k.s.e.store, Table: k.t, Intent: intent, Runs: k.multi && k.t.HasPK(), Mem: k.s.e.scans.mem}
	}
	k.sent++
	select {
	case k.batches <- rec:
		return nil
	case <-k.done:
		rec.Release()
		return k.err
	case <-ctx.Done():
		rec.Release()
		return ctx.Err()
	}
}

// finish waits for the writer goroutine and returns its error.
func (k *tableSink) finish() error {
	if k.pending != nil { // only when aborting: commit sends or buffers it first
		k.pending.Release()
		k.pending = nil
	}
	if k.batches != nil {
		close(k.batches)
		k.batches = nil
	}
	<-k.done
	return k.err
}

// commit waits for the last batch and commits every file written, as one
// commit of the table (MergeCommit on primary-key tables, AppendCommit
// otherwise), or stages it inside a transaction block, where a small write
// is buffered instead. An ingest of no rows wrote nothing and commits
// nothing: everything below it (schema, w, parts) exists only once a row
// was written.
func (k *tableSink) commit(ctx context.Context) error {
	faults.Point("sink.commit", k.t.QualifiedName())
	if k.rows == 0 {
		return k.finish()
	}
	omitted := k.omittedNotNull()
	checked := len(tableChecks(k.t)) > 0 // checks.go: verified on written files
	reset := k.resetColumns()            // absentkeys.go: needs the written files
	// (A read-modify-write statement's rows are checked when it runs, so
	// they are written, not buffered.)
	if len(omitted) == 0 && !checked && len(reset) == 0 && k.pending != nil && k.sent == 0 && k.s.inBlock && k.pending.NumRows() <= smallWriteRows &&
		k.s.rmwFor(k.t) == nil {
		rec := k.pending
		k.pending = nil
		_ = k.finish()
		if err := writer.CheckRecord(k.t, rec); err != nil {
			rec.Release()
			return err
		}
		return k.s.bufferRows(ctx, k.t, rec)
	}
	if err := k.sendPending(ctx); err != nil {
		k.abort(ctx)
		return err
	}
	if err := k.finish(); err != nil {
		k.abort(ctx)
		return err
	}
	if k.sent > 1 {
		// Each batch left a sorted run per bucket: merge them into one
		// (the spill-sort writer, writer.MergeRuns).
		merged, err := k.w.MergeRuns(ctx, k.parts)
		if err != nil {
			k.abort(ctx)
			return err
		}
		k.parts = merged
	}
	if len(reset) > 0 {
		if err := k.resetDeletedKeys(ctx, reset); err != nil {
			k.abort(ctx)
			return err
		}
	}
	if len(omitted) > 0 {
		if err := k.s.checkNotNull(ctx, k.t, k.parts, omitted); err != nil {
			k.abort(ctx)
			return err
		}
	}
	if checked {
		var partial []string
		for _, f := range k.t.Schema.Fields() {
			if len(k.schema.FieldIndices(f.Name)) == 0 {
				partial = append(partial, f.Name)
			}
		}
		if err := k.s.verifyChecks(ctx, k.t, k.parts, partial); err != nil {
			k.abort(ctx)
			return err
		}
	}
	parts := k.parts
	k.parts = nil
	return k.s.commitWrite(ctx, k.t, writeOp(k.t), parts)
}

// writeOp is the commit op of rows written to t.
func writeOp(t *catalog.Table) string {
	if t.HasPK() {
		return catalog.MergeCommit
	}
	return catalog.AppendCommit
}

// release ends a sink its producer left without commit or abort — a panic
// unwinding the statement: the writer goroutine stops and the files are
// deleted. After commit or abort it does nothing. Producers defer it.
func (k *tableSink) release(ctx context.Context) {
	if k.batches != nil || k.pending != nil || k.parts != nil {
		k.abort(context.WithoutCancel(ctx))
	}
}

// abort stops the sink and deletes every file it wrote.
func (k *tableSink) abort(ctx context.Context) {
	_ = k.finish()
	k.s.deleteFiles(ctx, k.parts)
	k.parts = nil
}

// errSinkClosed is returned when a batch arrives after the sink ended.
var errSinkClosed = errors.New("engine: table sink closed")

// omittedNotNull returns the NOT NULL columns of a primary-key table that
// the ingest does not write (a partial upsert): rows of keys that already
// exist keep their values there (LakeSoul), but a new key would read NULL,
// which PostgreSQL refuses (23502). The writer checks the written columns
// itself.
func (k *tableSink) omittedNotNull() []string {
	if k.keysExist || k.schema == nil || !k.t.HasPK() {
		return nil
	}
	var out []string
	for _, f := range k.t.Schema.Fields() {
		if !f.Nullable && len(k.schema.FieldIndices(f.Name)) == 0 {
			out = append(out, f.Name)
		}
	}
	return out
}
