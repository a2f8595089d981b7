package reader

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// countReader yields batches of no columns whose row counts are a file's
// (or its selected row groups'), read from the footer: what a scan that
// needs no column of the file (count(*) of an append table) reads of it,
// without decoding a page.
type countReader struct {
	rows  []int64 // rows left per row group, in order
	batch int64
	cur   arrow.RecordBatch
}

var noColumns = arrow.NewSchema(nil, nil)

func newCountReader(md *metadata.FileMetaData, rowGroups []int, batchRows int64) *countReader {
	r := &countReader{batch: batchRows}
	if rowGroups == nil {
		for g := range md.NumRowGroups() {
			r.rows = append(r.rows, md.RowGroup(g).NumRows())
		}
	} else {
		for _, g := range rowGroups {
			r.rows = append(r.rows, md.RowGroup(g).NumRows())
		}
	}
	return r
}

func (r *countReader) Next() bool {
	r.release()
	for len(r.rows) > 0 && r.rows[0] == 0 {
		r.rows = r.rows[1:]
	}
	if len(r.rows) == 0 {
		return false
	}
	n := min(r.rows[0], r.batch)
	r.rows[0] -= n
	r.cur = array.NewRecordBatch(noColumns, nil, n)
	return true
}

func (r *countReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *countReader) Err() error                     { return nil }
func (r *countReader) Release()                       { r.release() }

func (r *countReader) release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
