package pgwire

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// errPeerHungUp is the input's error when the client closed its end while
// unread data was still buffered.
var errPeerHungUp = errors.New("pgwire: client hung up")

// input reads the client socket on a goroutine of its own, ahead of the
// connection goroutine, into a bounded buffer.
//
// Reading ahead lets the server notice that the client went away while a
// statement runs: when the socket read fails (EOF included), onLost is
// called, which cancels the connection context and so the running Session
// call. The buffer holds at most inputAhead bytes, so a client that sends
// faster than the server consumes is back-pressured as with a plain socket.
// While the buffer is full the socket is not read, and a FIN queued behind
// unread data would go unseen; the reader then watches the socket for the
// peer's hangup instead (hangup_linux.go: poll's POLLRDHUP, which reports
// it whatever data is pending), so a client that pipelined messages and
// then disappeared is noticed too.
type input struct {
	mu   sync.Mutex
	cond *sync.Cond // signalled when data arrives or room is freed
	buf  []byte     // unread bytes are buf[r:]
	r    int
	err  error // why reading stopped; returned once buf is drained
	// closed is set by close: the connection goroutine is done.
	closed bool
	// watching is set while the reader, with the buffer full, waits in
	// hangup.wait rather than on cond.
	watching bool
	// poked is set by poke until awaitInput sees it.
	poked bool
	// ahead bounds the buffered bytes: inputAhead, or copyInAhead while a
	// COPY FROM runs (setAhead).
	ahead  int
	hangup *hangupWatch  // nil where the platform cannot watch
	done   chan struct{} // closed when the reader goroutine has returned
}

// inputChunk is the size of one socket read; inputAhead bounds what is
// buffered beyond what the connection goroutine consumed, before
// authentication too. copyInAhead is the bound while a COPY FROM runs: with
// 64 KiB its parser ran dry whenever the reader goroutine waited for a core
// the writer's workers held, and a scale-0.4 ccf ingest took 14.25 s
// against 13.3–13.7 s with 2 MiB (bench ccf, same machine). awaitInput gives
// the room back between statements.
const (
	inputChunk  = 32 << 10
	inputAhead  = 64 << 10
	copyInAhead = 2 << 20
)

// startInput starts the reader goroutine on conn; raw is the socket under
// conn (conn itself for a connection without TLS), watched for hangups.
// onLost runs once, on the reader goroutine, when the socket read fails or
// the peer hung up.
func startInput(conn, raw net.Conn, onLost func(error)) *input {
	in := &input{done: make(chan struct{}), ahead: inputAhead, hangup: newHangupWatch(raw)}
	in.cond = sync.NewCond(&in.mu)
	safego.Go(func() { in.run(conn, onLost) })
	return in
}

// run reads the socket into the buffer. A panic here leaves the byte
// stream in an unknown state: it ends the input as a lost connection.
func (in *input) run(conn net.Conn, onLost func(error)) {
	defer close(in.done)
	defer in.hangup.release()
	defer safego.RecoverTo(func(err error) {
		in.mu.Lock()
		if in.err == nil {
			in.err = err
		}
		in.cond.Broadcast()
		in.mu.Unlock()
		onLost(err)
	})
	chunk := make([]byte, inputChunk)
	for {
		ok, lost := in.waitForRoom()
		if lost != nil {
			onLost(lost)
			return
		}
		if !ok {
			return
		}
		n, err := conn.Read(chunk)
		in.mu.Lock()
		if n > 0 {
			if in.r > 0 && in.r == len(in.buf) {
				in.buf, in.r = in.buf[:0], 0
			}
			in.buf = append(in.buf, chunk[:n]...)
		}
		if err != nil {
			in.err = err
		}
		in.cond.Broadcast()
		in.mu.Unlock()
		if err != nil {
			onLost(err)
			return
		}
	}
}

// waitForRoom blocks while the buffer is full. It returns ok=false when the
// connection goroutine closed the input, and lost≠nil (also recorded as the
// input's error) when the peer hung up meanwhile.
func (in *input) waitForRoom() (ok bool, lost error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf)-in.r >= in.ahead && !in.closed {
		if !in.hangup.watches() {
			in.cond.Wait()
			continue
		}
		in.watching = true
		in.mu.Unlock()
		gone := in.hangup.wait()
		in.mu.Lock()
		in.watching = false
		if gone && !in.closed {
			in.err = errPeerHungUp
			in.cond.Broadcast()
			return false, in.err
		}
	}
	return !in.closed, nil
}

// Read implements io.Reader for the message reader.
func (in *input) Read(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf) == in.r && in.err == nil && !in.closed {
		in.cond.Wait()
	}
	if len(in.buf) == in.r {
		if in.err == nil {
			return 0, io.ErrClosedPipe
		}
		return 0, in.err
	}
	wasFull := len(in.buf)-in.r >= in.ahead
	n := copy(p, in.buf[in.r:])
	in.r += n
	if in.r == len(in.buf) {
		in.buf, in.r = in.buf[:0], 0
	} else if in.r > in.ahead {
		// Move the rest to the front so the buffer does not grow.
		in.buf = in.buf[:copy(in.buf, in.buf[in.r:])]
		in.r = 0
	}
	if wasFull {
		in.wakeReader()
	}
	return n, nil
}

// setAhead sets the read-ahead bound (inputAhead or copyInAhead); a larger
// one lets a reader waiting for room go on.
func (in *input) setAhead(n int) {
	in.mu.Lock()
	in.ahead = n
	in.wakeReader()
	in.mu.Unlock()
}

// awaitInput blocks until unread input is buffered or reading ended (true
// or false: Read answers at once), or until poke is called meanwhile; it
// reports whether it returned for a poke with nothing to read.
func (in *input) awaitInput() (poked bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf) == in.r && in.err == nil && !in.closed && !in.poked {
		in.cond.Wait()
	}
	poked = in.poked && len(in.buf) == in.r && in.err == nil && !in.closed
	in.poked = false
	if len(in.buf) == in.r && cap(in.buf) > 2*inputChunk {
		// Between statements: an idle connection does not keep the room a
		// COPY's read-ahead grew to.
		in.buf, in.r = nil, 0
	}
	return poked
}

// awaitInputFor blocks until unread input is buffered or reading ended,
// for at most d; it reports whether d passed with neither (pokes do not
// end it: notifications wait while a transaction block is open).
func (in *input) awaitInputFor(d time.Duration) (timedOut bool) {
	expired := false // under in.mu
	t := time.AfterFunc(d, safego.Guard(func() {
		in.mu.Lock()
		expired = true
		in.cond.Broadcast()
		in.mu.Unlock()
	}))
	defer t.Stop()
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.buf) == in.r && in.err == nil && !in.closed && !expired {
		in.cond.Wait()
	}
	return len(in.buf) == in.r && in.err == nil && !in.closed
}

// nextType returns the type byte of the next message if its first byte is
// already buffered, without waiting. The message reader consumes whole
// messages, so between messages the next unread byte is a type byte.
func (in *input) nextType() (typ byte, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.buf) == in.r {
		return 0, false
	}
	return in.buf[in.r], true
}

// poke wakes the connection goroutine blocked in awaitInput (a
// notification arrived). Safe from any goroutine.
func (in *input) poke() {
	in.mu.Lock()
	in.poked = true
	in.cond.Broadcast()
	in.mu.Unlock()
}

// wakeReader wakes the reader waiting for room; in.mu is held.
func (in *input) wakeReader() {
	if in.watching {
		in.hangup.wake()
	}
	in.cond.Broadcast()
}

// stop tells the reader goroutine to end: it wakes it if it waits for room
// and keeps it from reading again. Call it before closing the socket, which
// wakes a reader blocked in its read.
func (in *input) stop() {
	in.mu.Lock()
	in.closed = true
	in.wakeReader()
	in.mu.Unlock()
}

// close stops the reader goroutine and returns once it has returned. The
// socket must already be closed when close is called.
func (in *input) close() {
	in.stop()
	<-in.done
}
