package reader

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// fileStream reads one data file batch by batch.
type fileStream struct {
	// order is the file's position in its unit: higher = newer.
	order int
	path  string
	obj   objstore.Reader
	rr    pqarrow.RecordReader
	// colMap maps table column index → column index in the file's batches, or -1
	// when the file does not contain the column (partial upsert, schema evolution).
	colMap []int
}

func openFileStream(ctx context.Context, store objstore.Store, f catalog.DataFile, order int, t *catalog.Table, mem memory.Allocator, batchRows int) (*fileStream, error) {
	obj, err := store.Open(ctx, f.Path)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(obj, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		obj.Close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batchRows)}, mem)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	fsch, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("read %s schema: %w", f.Path, err)
	}
	// Read only the file columns the table still has, in table order.
	colMap := make([]int, t.Schema.NumFields())
	var want []int
	for i, tf := range t.Schema.Fields() {
		colMap[i] = -1
		idx := fsch.FieldIndices(tf.Name)
		if len(idx) == 0 {
			continue
		}
		if !arrow.TypeEqual(fsch.Field(idx[0]).Type, tf.Type) {
			pf.Close()
			return nil, fmt.Errorf("read %s: column %s has type %s in the file, %s in the table", f.Path, tf.Name, fsch.Field(idx[0]).Type, tf.Type)
		}
		colMap[i] = len(want)
		want = append(want, idx[0])
	}
	rr, err := fr.GetRecordReader(ctx, want, nil)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	return &fileStream{order: order, path: f.Path, obj: obj, rr: rr, colMap: colMap}, nil
}

// nextBatch returns the next non-empty batch (retained: the caller releases
// it) or io.EOF.
func (s *fileStream) nextBatch(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !s.rr.Next() {
			if err := s.rr.Err(); err != nil && err != io.EOF {
				return nil, fmt.Errorf("read %s: %w", s.path, err)
			}
			return nil, io.EOF
		}
		b := s.rr.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		return b, nil
	}
}

func (s *fileStream) close() {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	if s.obj != nil {
		s.obj.Close()
		s.obj = nil
	}
}
