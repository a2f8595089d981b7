package reader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/schema"
)

// Bounded fan-in. A merge holds a batch and read buffers per column of
// every file it merges, so its memory grows with the files of a unit: a
// bucket that took a hundred upserts since its last compaction would hold
// a hundred files' buffers. With Scan.Spill set, a unit of more than
// MaxFanIn files is merged in steps: its oldest MaxFanIn files are merged
// (in key order, every version and CDC delete kept) into a spill file,
// which then stands in for them as the unit's oldest file, until at most
// MaxFanIn files are left for the final merge.
//
// Only a prefix of the snapshot may be merged ahead: a row merged from
// files that lack a column has it NULL, which is what the full merge gives
// when nothing older has the column, but would overwrite an older file's
// value if anything older were still to come. Merge operators and CDC
// deletes combine associatively, as compaction relies on too.

// MaxFanIn is the most files one merge reads at once when the scan may
// spill. At about a megabyte of buffers per file of the ccf workload, a
// unit's merge then stays near 64 MiB whatever its files.
const MaxFanIn = 64

// spillRowGroupRows bounds the row groups of a spill file, which its writer
// buffers.
const spillRowGroupRows = 64 << 10

// premerge merges the oldest files of a unit ahead until at most MaxFanIn
// are left; it takes files over (closing them on error).
func (s *Scan) premerge(ctx context.Context, files []planned, consts []*rangeValue) ([]planned, error) {
	for len(files) > MaxFanIn {
		group := files[:MaxFanIn]
		rest := files[MaxFanIn:]
		p, err := s.spillMerge(ctx, group, consts)
		if err != nil {
			closePlanned(rest)
			return nil, err
		}
		files = append([]planned{p}, rest...)
	}
	return files, nil
}

// spillMerge merges group, the oldest files of a unit, into a spill file
// and returns it planned in their place (newest of them in order).
func (s *Scan) spillMerge(ctx context.Context, group []planned, consts []*rangeValue) (_ planned, err error) {
	sub := &Scan{Store: s.Store, Table: s.Table, Mem: s.Mem, BatchRows: s.BatchRows, KeepCDCDeletes: true,
		Stats: s.Stats, keys: s.keys, Needed: make([]bool, s.Table.Schema.NumFields())}
	var fields []arrow.Field
	var cols []int
	for c, f := range s.Table.Schema.Fields() {
		sub.Needed[c] = s.needs(c)
		if sub.Needed[c] && consts[c] == nil {
			fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
			cols = append(cols, c)
		}
	}
	order := group[len(group)-1].order
	s.stats().MergesSpilled.Add(1)
	it, err := sub.merge(ctx, group, consts)
	if err != nil {
		return planned{}, err
	}
	defer it.Close()
	f, err := os.CreateTemp(s.Spill, "lakesoul-merge-*.parquet")
	if err != nil {
		return planned{}, fmt.Errorf("spill a merge: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	sch := schema.FileSchema(arrow.NewSchema(fields, nil)) // intervals in their file form
	fw, err := pqarrow.NewFileWriter(sch, f, parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false), parquet.WithStoreDecimalAsInteger(true),
		parquet.WithStats(false), parquet.WithMaxRowGroupLength(spillRowGroupRows), parquet.WithAllocator(s.Mem)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(s.Mem)))
	if err != nil {
		return planned{}, fmt.Errorf("spill a merge: %w", err)
	}
	for {
		b, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return planned{}, errors.Join(err, fw.Close())
		}
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			arrs[i] = schema.IntervalFileArray(s.Mem, b.Column(c))
		}
		rec := array.NewRecordBatch(sch, arrs, b.NumRows())
		err = fw.WriteBuffered(rec)
		rec.Release()
		for _, a := range arrs {
			a.Release()
		}
		b.Release()
		if err != nil {
			return planned{}, errors.Join(fmt.Errorf("spill a merge: %w", err), fw.Close())
		}
	}
	if err := fw.Close(); err != nil { // closes f too
		return planned{}, fmt.Errorf("spill a merge: %w", err)
	}
	st, err := os.Stat(f.Name())
	if err != nil {
		return planned{}, fmt.Errorf("spill a merge: %w", err)
	}
	fo := &fileOpen{ctx: ctx, store: objstore.Local{}, f: catalog.DataFile{Path: objstore.LocalURI(f.Name()), Size: st.Size()}}
	return planned{fo: fo, order: order, spilled: true}, nil
}

// removeSpilled removes a spill file once its stream has it open (or is
// done with it): the open file is read to its end all the same.
func removeSpilled(uri string) {
	if p, err := objstore.LocalPath(uri); err == nil {
		os.Remove(p)
	}
}
