package writer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lakesoul-go/lakesoul/internal/arrowutil"
	"github.com/lakesoul-go/lakesoul/metrics"
)

// The run format. A sorted run (Writer.Runs) is read back exactly once, by
// the merge of the same ingest (MergeRuns), and never by a query: it is an
// uncompressed Arrow IPC stream, which costs a copy to write and a copy to
// read, where a Parquet run cost an encode, a compression and their
// inverses for every value — the merged data file is then the only file of
// the ingest that pays Parquet's encoding. Its row count is in the schema's
// metadata (runRowsKey), which the merge needs before it reads the rows (to
// size the output files).

// runBatchRows is the length of a run's record batches; a merge holds
// about one batch of every run at once.
const runBatchRows = 4096

// runReadBufferBytes is the read buffer of one run in a merge.
const runReadBufferBytes = 256 << 10

// runRowsKey is the schema metadata key of a run's row count.
const runRowsKey = "lakesoul.run_rows"

// writeRunFile writes the given rows and columns of rec to path as a run,
// runBatchRows rows per batch; it returns the file's size. With perm (see
// writeFile), each column of the run is placed in order whole, then
// written in slices.
func (w *Writer) writeRunFile(ctx context.Context, path string, schema *arrow.Schema, rec arrow.RecordBatch, cols []int, rows []int32,
	perm *arrowutil.Permutation) (int64, error) {
	ow, err := w.Store.Create(ctx, path)
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: ow}
	bw := bufio.NewWriterSize(cw, runReadBufferBytes)
	meta := arrow.NewMetadata([]string{runRowsKey}, []string{strconv.Itoa(len(rows))})
	iw := ipc.NewWriter(bw, ipc.WithSchema(arrow.NewSchema(schema.Fields(), &meta)), ipc.WithAllocator(w.Mem))
	write := func() error {
		arrs := make([]arrow.Array, len(cols))
		var whole []arrow.Array // the run's columns, when placed by perm
		defer func() {
			for _, a := range slices.Concat(arrs, whole) {
				if a != nil {
					a.Release()
				}
			}
		}()
		if perm != nil {
			for i, c := range cols {
				a, err := arrowutil.Permute(w.Mem, rec.Column(c), *perm)
				if err != nil {
					return fmt.Errorf("place column %s: %w", schema.Field(i).Name, err)
				}
				whole = append(whole, a)
			}
		}
		for start := 0; start < len(rows); start += runBatchRows {
			end := min(start+runBatchRows, len(rows))
			chunk := rows[start:end]
			for i, c := range cols {
				var a arrow.Array
				if whole != nil {
					a = array.NewSlice(whole[i], int64(start), int64(end))
				} else {
					var err error
					if a, err = arrowutil.Take(w.Mem, rec.Column(c), chunk); err != nil {
						return fmt.Errorf("gather column %s: %w", schema.Field(i).Name, err)
					}
				}
				if arrs[i] != nil {
					arrs[i].Release()
				}
				arrs[i] = a
			}
			b := array.NewRecordBatch(schema, arrs, int64(len(chunk)))
			err := iw.Write(b)
			b.Release()
			if err != nil {
				return err
			}
		}
		if err := iw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := write(); err != nil {
		return 0, errors.Join(fmt.Errorf("write run %s: %w", path, err), ow.Abort())
	}
	if err := ow.Close(); err != nil {
		return 0, err
	}
	metrics.FileWritten(int64(len(rows)), cw.n)
	return cw.n, nil
}

// openRunFile opens a run (layout.IsRunFile) for a merge.
func (w *Writer) openRunFile(ctx context.Context, order int, path string) (*runStream, error) {
	obj, err := w.Store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(obj, runReadBufferBytes), ipc.WithAllocator(w.Mem))
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("read run %s: %w", path, err)
	}
	meta := r.Schema().Metadata()
	var rows int64 = -1
	if i := meta.FindKey(runRowsKey); i >= 0 {
		if n, err := strconv.ParseInt(meta.Values()[i], 10, 64); err == nil {
			rows = n
		}
	}
	if rows < 0 {
		r.Release()
		obj.Close()
		return nil, fmt.Errorf("read run %s: no row count in its schema", path)
	}
	// Uncompressed: the file's size is the rows' size, near enough for
	// sizing the output files.
	return &runStream{order: order, path: path, obj: obj, rr: r,
		schema: plainSchema(r.Schema()), rows: rows, bytes: obj.Size()}, nil
}
