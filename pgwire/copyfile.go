package pgwire

import "io"

// NewCopyRowReader decodes rows in COPY format f from src, as COPY FROM
// STDIN does (the same parser, the same errors), for data that does not
// come from a client: a file the server reads. maxRow bounds one row's
// bytes (0: no bound).
func NewCopyRowReader(src io.Reader, f CopyFormat, maxRow int) CopyRowReader {
	r := newCopyRowReader(src, f)
	r.maxRow = maxRow
	return r
}
