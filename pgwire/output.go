package pgwire

import (
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// flushThreshold is the buffered output size past which the writer flushes
// on its own, so that a large result streams instead of piling up in memory.
const flushThreshold = 64 << 10

// output buffers backend messages and writes them to the socket in large
// pieces: at Sync, Flush and ReadyForQuery, and whenever the buffer passes
// flushThreshold; never per row.
//
// Invariants: buf holds only whole messages, except for the one message a
// RowBuilder is building in place (open); once a write failed, err is set,
// buf stays empty and every later call is a no-op returning that error.
type output struct {
	w   io.Writer
	buf []byte
	err error
	// open is 1 + the offset in buf of a message being built in place
	// (rowWriter's DataRow between BeginRow and its end), 0 when none.
	open int
}

// send appends msg to the buffer. Encoding errors are returned and leave the
// buffer as it was.
func (o *output) send(msg pgproto3.BackendMessage) error {
	if o.err != nil {
		return o.err
	}
	b, err := msg.Encode(o.buf)
	if err != nil {
		return fmt.Errorf("pgwire: encode %T: %w", msg, err)
	}
	o.buf = b
	return o.maybeFlush()
}

// maybeFlush flushes when the buffer has grown past flushThreshold.
func (o *output) maybeFlush() error {
	if len(o.buf) >= flushThreshold {
		return o.flush()
	}
	return nil
}

// flush writes the buffer to the socket. A failed write is reported as a
// *connLostError, now and on every later call.
func (o *output) flush() error {
	if o.err != nil {
		return o.err
	}
	if len(o.buf) == 0 {
		return nil
	}
	_, err := o.w.Write(o.buf)
	if cap(o.buf) > 4*flushThreshold {
		o.buf = nil // do not keep one huge row's buffer for the connection's life
	} else {
		o.buf = o.buf[:0]
	}
	if err != nil {
		o.err = &connLostError{err: fmt.Errorf("pgwire: write: %w", err)}
		o.buf = nil
		return o.err
	}
	return nil
}

// truncate drops what was buffered after offset n (a message being built)
// and, if the buffer grew large for it, lets the memory go.
func (o *output) truncate(n int) {
	o.buf = o.buf[:n]
	if cap(o.buf) > 4*flushThreshold && n <= flushThreshold {
		o.buf = append(make([]byte, 0, flushThreshold), o.buf...)
	}
}

// dropOpen drops the message being built in place, if any: its builder
// stopped half way (a panic).
func (o *output) dropOpen() {
	if o.open > 0 {
		o.buf = o.buf[:o.open-1]
		o.open = 0
	}
}

// discard drops buffered, unsent messages (used before a last FATAL when
// the buffer may hold a half-encoded message).
func (o *output) discard() { o.buf, o.open = o.buf[:0], 0 }
