package engine

import (
	"bufio"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Arrow result spills: record batches a columnar front door must keep until
// its client asks for them (a Flight SQL query that ran before its DoGet)
// go to a file of the same temp space as held cursors' rows (spill.go),
// as an Arrow IPC stream, and are read back one batch at a time. Every
// byte written is reserved first, so the file never grows past the temp
// space limit (53100 instead); the file is unlinked when created, so it
// goes with its descriptor whatever ends the server.

// ArrowSpill is a spill file of record batches of one schema: written
// with Write, then read with Reader, deleted by Close.
type ArrowSpill struct {
	space *resultSpace
	f     *os.File
	bw    *bufio.Writer
	w     *ipc.Writer
	size  int64 // bytes reserved
	err   error // the first write failure, returned by every later call
}

// NewArrowSpill creates an empty spill of batches of schema sc.
func (e *Engine) NewArrowSpill(sc *arrow.Schema) (*ArrowSpill, error) {
	f, err := e.createSpillFile("lakesoul-arrow-*")
	if err != nil {
		return nil, err
	}
	s := &ArrowSpill{space: &e.results, f: f}
	s.bw = bufio.NewWriterSize(reservingWriter{s}, 64<<10)
	s.w = ipc.NewWriter(s.bw, ipc.WithSchema(sc))
	return s, nil
}

// reservingWriter reserves in the temp space what it writes to the file.
type reservingWriter struct{ s *ArrowSpill }

func (w reservingWriter) Write(p []byte) (int, error) {
	if err := w.s.space.reserve(int64(len(p))); err != nil {
		return 0, err
	}
	w.s.size += int64(len(p))
	n, err := w.s.f.Write(p)
	if err != nil {
		return n, sqlerr.From(err)
	}
	return n, nil
}

// Write appends rec to the file.
func (s *ArrowSpill) Write(rec arrow.RecordBatch) error {
	if s.err == nil {
		s.err = s.writeErr(s.w.Write(rec))
	}
	return s.err
}

// writeErr is a write failure with its SQLSTATE: the temp space's own
// (53100) as it is, a file system's mapped (sqlerr.From).
func (s *ArrowSpill) writeErr(err error) error {
	if err == nil {
		return nil
	}
	return sqlerr.From(err)
}

// Reader ends writing and returns a reader of the batches written, in
// order, with buffers from mem. Call it once.
func (s *ArrowSpill) Reader(mem memory.Allocator) (*ipc.Reader, error) {
	if s.err == nil {
		s.err = s.writeErr(s.w.Close())
	}
	if s.err == nil {
		s.err = s.writeErr(s.bw.Flush())
	}
	if s.err != nil {
		return nil, s.err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, sqlerr.From(err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(s.f, 64<<10), ipc.WithAllocator(mem))
	if err != nil {
		return nil, spillCorrupt(err)
	}
	return r, nil
}

// Size is the bytes the file holds (and the temp space reserved for it).
func (s *ArrowSpill) Size() int64 { return s.size }

// Close deletes the file and gives its space back.
func (s *ArrowSpill) Close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
		s.space.release(s.size)
		s.size = 0
	}
}
