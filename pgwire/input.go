package pgwire

import (
	"io"
	"net"
)

// input reads the client socket on a goroutine of its own and hands the bytes
// to the connection goroutine through a pipe.
//
// Reading ahead lets the server notice that the client went away while a
// statement runs: when the socket read fails, onLost is called (it cancels the
// connection context, and so the running Session call). The pipe is
// synchronous, so at most one read's worth of bytes waits in the reader:
// while the connection goroutine is busy the client is back-pressured as
// with a plain socket. Because the reader may be blocked handing over bytes
// the connection goroutine has not asked for yet, noticing a lost client is
// best effort: it works whenever the client sent nothing more after the
// statement, which is the usual case.
type input struct {
	pr   *io.PipeReader
	done chan struct{} // closed when the reader goroutine has returned
}

// inputChunk is the size of one socket read.
const inputChunk = 32 << 10

// startInput starts the reader goroutine on conn. onLost runs once, on the
// reader goroutine, when the socket read fails (EOF included).
func startInput(conn net.Conn, onLost func(error)) *input {
	pr, pw := io.Pipe()
	in := &input{pr: pr, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		buf := make([]byte, inputChunk)
		for {
			n, err := conn.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					// The connection goroutine closed its end: it is done.
					return
				}
			}
			if err != nil {
				onLost(err)
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return in
}

// Read implements io.Reader for the protocol decoder.
func (in *input) Read(p []byte) (int, error) { return in.pr.Read(p) }

// close releases the reader goroutine if it is blocked handing over bytes;
// it returns once the goroutine has returned. The socket must already be
// closed (or the goroutine otherwise woken) when close is called.
func (in *input) close() {
	in.pr.Close()
	<-in.done
}
