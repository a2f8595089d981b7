package reader

import (
	"slices"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// Pruning by the row filter. The row filter's conditions on columns stored
// in files are checked against each file's row-group statistics (every
// column has them) and bloom filters (the columns an index names,
// Table.IndexedCols, CREATE INDEX), as the key filter's are:
//
//   - an append table's rows are independent, so files and row groups that
//     cannot hold a matching row are skipped one by one;
//   - a primary-key table's rows are merged per unit, and a non-key column
//     of a key's newest version decides whether the key matches: skipping
//     one file could let an older version through. A unit is therefore
//     skipped only when none of its files can hold a matching row (then no
//     version of any key in it matches, so no merged row can), and is read
//     whole otherwise; columns whose merge operator computes values (sums,
//     joins) are never used, nor key columns (the key filter prunes those
//     file by file), partition columns (not in files) or the CDC column.
//
// A file without the column or without its statistics or filters proves
// nothing and is read.

// compileIndexFilter is the part of the compiled row filter m that may
// prune (above); nil when there is none.
func compileIndexFilter(t *catalog.Table, m *keyMatcher) (*keyMatcher, error) {
	if m == nil {
		return nil, nil
	}
	var ops []MergeOp
	if t.HasPK() {
		var err error
		if ops, err = TableMergeOps(t); err != nil {
			return nil, err
		}
	}
	out := &keyMatcher{}
	for _, p := range m.preds {
		// Key columns are pruned file by file by the key filter already
		// (a UNIQUE index on the primary key is recorded, not used here).
		if slices.Contains(t.RangeCols, p.name) ||
			slices.Contains(t.PKCols, p.name) || p.name == t.CDCColumn() {
			continue
		}
		if ops != nil {
			switch ops[p.col] {
			case UseLast, UseLastNotNull, Max, Min: // the merged value is some version's
			default:
				continue
			}
		}
		out.preds = append(out.preds, p)
	}
	if len(out.preds) == 0 {
		return nil, nil
	}
	return out, nil
}

// indexSkips reports whether fm, of a file being planned, holds no row
// the index filter can match; counted in st as a file skipped by index
// statistics or bloom filters. With rowGroups set (append tables) it also
// returns the row groups to read.
func (s *Scan) indexSkips(fm *fileMeta, src sourceFunc, st *ScanStats) (bool, *fileSelection, error) {
	var local ScanStats
	sel, err := s.planFile(fm, s.index, src, &local, false)
	if err != nil {
		return false, nil, err
	}
	c := local.Counts()
	st.RowGroups.Add(c.RowGroups)
	st.RowGroupsSkippedStats.Add(c.RowGroupsSkippedStats)
	st.RowGroupsSkippedBloom.Add(c.RowGroupsSkippedBloom)
	if sel == nil {
		st.FilesSkippedIndexStats.Add(c.FilesSkippedStats)
		st.FilesSkippedIndexBloom.Add(c.FilesSkippedBloom)
		return true, nil, nil
	}
	return false, sel, nil
}

// unitRuledOut reports whether no file of a primary-key unit can hold a
// row the index filter matches (metas are the files' footers, nil entries
// for files without one); the files are then counted as skipped.
func (s *Scan) unitRuledOut(files []planned) (bool, error) {
	var local ScanStats
	for _, p := range files {
		if p.fm == nil {
			return false, nil
		}
		skip, _, err := s.indexSkips(p.fm, p.fo.source, &local)
		if err != nil || !skip {
			return false, err
		}
	}
	st := s.stats()
	c := local.Counts()
	st.RowGroups.Add(c.RowGroups)
	st.RowGroupsSkippedStats.Add(c.RowGroupsSkippedStats)
	st.RowGroupsSkippedBloom.Add(c.RowGroupsSkippedBloom)
	st.FilesSkippedIndexStats.Add(c.FilesSkippedIndexStats)
	st.FilesSkippedIndexBloom.Add(c.FilesSkippedIndexBloom)
	return true, nil
}
