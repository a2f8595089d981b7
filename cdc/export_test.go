package cdc

// SetCopyChunkMinPages lowers the size from which initial copies are
// chunked; the returned function restores it.
func SetCopyChunkMinPages(n int64) (restore func()) {
	old := copyChunkMinPages
	copyChunkMinPages = n
	return func() { copyChunkMinPages = old }
}

// CopiedChunks is the number of chunks chunked copies read so far.
func CopiedChunks() int64 { return copiedChunks.Load() }
