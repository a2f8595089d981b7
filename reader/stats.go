package reader

import "sync/atomic"

// ScanStats counts what a scan read and what it skipped, for EXPLAIN
// ANALYZE and tests. Units add to it concurrently.
type ScanStats struct {
	// Files: considered, skipped by key statistics, skipped by bloom
	// filters, opened for reading.
	Files, FilesSkippedStats, FilesSkippedBloom, FilesRead atomic.Int64
	// Files skipped by the statistics and the bloom filters of indexed
	// columns (indexprune.go).
	FilesSkippedIndexStats, FilesSkippedIndexBloom atomic.Int64
	// RowGroups of the considered files: all, skipped by statistics,
	// skipped by bloom filters, skipped by the page index, read.
	RowGroups, RowGroupsSkippedStats, RowGroupsSkippedBloom, RowGroupsSkippedPages, RowGroupsRead atomic.Int64
	// Pages of the key columns' page index: considered and skipped.
	Pages, PagesSkipped atomic.Int64
	// RowsRead are rows decoded from files; RowsMerged rows the merge
	// produced; RowsOut rows that passed the key and row filters.
	RowsRead, RowsMerged, RowsOut atomic.Int64
	// MergeFiles is the most files one merge read at once; MergesSpilled
	// counts merges of a unit's oldest files ahead into spill files
	// (fanin.go).
	MergeFiles, MergesSpilled atomic.Int64
	// FilesStreamed counts files of primary-key tables read without
	// merging: keys unique in the file, no other file of its unit
	// overlapping its key range (unitplan.go).
	FilesStreamed atomic.Int64
}

// mergeOf records a merge of n files.
func (s *ScanStats) mergeOf(n int) {
	for {
		m := s.MergeFiles.Load()
		if int64(n) <= m || s.MergeFiles.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// ScanCounts is a snapshot of ScanStats.
type ScanCounts struct {
	Files, FilesSkippedStats, FilesSkippedBloom, FilesRead                                        int64
	FilesSkippedIndexStats, FilesSkippedIndexBloom                                                int64
	RowGroups, RowGroupsSkippedStats, RowGroupsSkippedBloom, RowGroupsSkippedPages, RowGroupsRead int64
	Pages, PagesSkipped                                                                           int64
	RowsRead, RowsMerged, RowsOut                                                                 int64
	MergeFiles, MergesSpilled                                                                     int64
	FilesStreamed                                                                                 int64
}

// Counts reads the counters.
func (s *ScanStats) Counts() ScanCounts {
	return ScanCounts{
		Files: s.Files.Load(), FilesSkippedStats: s.FilesSkippedStats.Load(), FilesSkippedBloom: s.FilesSkippedBloom.Load(),
		FilesRead: s.FilesRead.Load(), FilesSkippedIndexStats: s.FilesSkippedIndexStats.Load(),
		FilesSkippedIndexBloom: s.FilesSkippedIndexBloom.Load(), RowGroups: s.RowGroups.Load(), RowGroupsSkippedStats: s.RowGroupsSkippedStats.Load(),
		RowGroupsSkippedBloom: s.RowGroupsSkippedBloom.Load(), RowGroupsSkippedPages: s.RowGroupsSkippedPages.Load(),
		RowGroupsRead: s.RowGroupsRead.Load(), Pages: s.Pages.Load(), PagesSkipped: s.PagesSkipped.Load(),
		RowsRead: s.RowsRead.Load(), RowsMerged: s.RowsMerged.Load(), RowsOut: s.RowsOut.Load(),
		MergeFiles: s.MergeFiles.Load(), MergesSpilled: s.MergesSpilled.Load(), FilesStreamed: s.FilesStreamed.Load(),
	}
}

// Add adds o's counts.
func (c *ScanCounts) Add(o ScanCounts) {
	c.Files += o.Files
	c.FilesSkippedStats += o.FilesSkippedStats
	c.FilesSkippedBloom += o.FilesSkippedBloom
	c.FilesRead += o.FilesRead
	c.FilesSkippedIndexStats += o.FilesSkippedIndexStats
	c.FilesSkippedIndexBloom += o.FilesSkippedIndexBloom
	c.RowGroups += o.RowGroups
	c.RowGroupsSkippedStats += o.RowGroupsSkippedStats
	c.RowGroupsSkippedBloom += o.RowGroupsSkippedBloom
	c.RowGroupsSkippedPages += o.RowGroupsSkippedPages
	c.RowGroupsRead += o.RowGroupsRead
	c.Pages += o.Pages
	c.PagesSkipped += o.PagesSkipped
	c.RowsRead += o.RowsRead
	c.RowsMerged += o.RowsMerged
	c.RowsOut += o.RowsOut
	c.MergeFiles = max(c.MergeFiles, o.MergeFiles)
	c.MergesSpilled += o.MergesSpilled
	c.FilesStreamed += o.FilesStreamed
}
