package reader

// MergeAlways makes s merge every primary-key unit whole, never streaming
// a file (unitplan.go): the reference the streamed reads are compared with.
func MergeAlways(s *Scan) { s.mergeAlways = true }
