package reader

import (
	"context"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"golang.org/x/sync/errgroup"
)

// footerReaders is how many footers FileRows reads at once.
const footerReaders = 8

// FileRows is the number of rows stored in the scan's files, from their
// footers (through Meta, which the scan then finds filled; several read at
// once). For an append table it is the number of rows an unfiltered scan
// returns; for a primary-key table an upper bound (a key upserted in n
// files counts n times, a CDC delete counts). A footer that does not parse
// fails as the scan would (footerError).
func (s *Scan) FileRows(ctx context.Context) (int64, error) {
	var files []*fileOpen
	for _, p := range s.Partitions {
		for _, f := range p.Files {
			if err := checkInTable(s.Table, f.Path); err != nil {
				return 0, err
			}
			files = append(files, &fileOpen{ctx: ctx, store: s.Store, f: f})
		}
	}
	rows := make([]int64, len(files))
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(footerReaders)
	for i, fo := range files {
		g.Go(func() error {
			defer fo.close()
			n, err := s.footerRows(fo)
			rows[i] = n
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	var total int64
	for _, n := range rows {
		total += n
	}
	return total, nil
}

// footerRows is the row count in fo's footer: from Meta, where it is
// added when missing, or parsed when the scan has no Meta.
func (s *Scan) footerRows(fo *fileOpen) (int64, error) {
	var k fileKey
	if s.Meta != nil {
		size, err := fo.size()
		if err != nil {
			return 0, err
		}
		k = fileKey{path: fo.f.Path, size: size}
		if fm := s.Meta.get(k); fm != nil {
			return fm.md.NumRows, nil
		}
	}
	obj, err := fo.open()
	if err != nil {
		return 0, err
	}
	pf, err := file.NewParquetReader(obj, file.WithReadProps(parquet.NewReaderProperties(nil)))
	if err != nil {
		return 0, footerError(fo.f.Path, obj, obj.Size(), err)
	}
	if s.Meta != nil {
		s.Meta.add(newFileMeta(k, pf.MetaData(), obj.Size()))
	}
	return pf.NumRows(), nil
}
