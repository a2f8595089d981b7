package reader

// MergeAlways makes s merge every primary-key unit whole, never streaming
// a file (unitplan.go): the reference the streamed reads are compared with.
func MergeAlways(s *Scan) { s.mergeAlways = true }

// SetSplitFileBytes sets the size from which ParallelUnits splits files by
// row group, for the rest of the test.
func SetSplitFileBytes(t interface{ Cleanup(func()) }, n int64) {
	old := splitFileBytes
	splitFileBytes = n
	t.Cleanup(func() { splitFileBytes = old })
}

// DecodeAll makes s decode every wanted column of every row, without late
// materialisation: the reference reads with it are compared with.
func DecodeAll(s *Scan) { s.decodeAll = true }
