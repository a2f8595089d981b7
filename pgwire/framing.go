package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// maxAuthMessageLen bounds the body of a message sent before authentication
// succeeded (password, SASL responses), as PostgreSQL's
// PG_MAX_AUTH_TOKEN_LENGTH does: a SCRAM message is well under 1 KiB, and an
// unauthenticated client must not make the server buffer more.
const maxAuthMessageLen = 65535

// reusedBodyLen is the largest message body read into the reader's reused
// buffer; a larger body gets a buffer of its own, dropped with the message,
// so one big message does not pin its size for the rest of the connection.
const reusedBodyLen = 64 << 10

// messageTooLargeError is a frontend message whose declared length exceeds
// the limit. After authentication the reader skips its body, so the
// connection can answer an ERROR and go on; before, it is fatal.
type messageTooLargeError struct {
	typ     byte // the message type
	size    int  // declared body length
	limit   int
	skipped bool // the body was consumed: the stream is at the next message
}

func (e *messageTooLargeError) Error() string {
	return fmt.Sprintf("pgwire: %c message of %d bytes exceeds the limit of %d bytes", e.typ, e.size, e.limit)
}

// sqlError is what the client is told.
func (e *messageTooLargeError) sqlError() *sqlerr.Error {
	if !e.skipped {
		return protocolViolation("invalid message length: %d bytes, at most %d allowed", e.size, e.limit)
	}
	return &sqlerr.Error{Code: sqlerr.ProgramLimitExceeded,
		Message: fmt.Sprintf("message of %d bytes exceeds the server's limit of %d bytes", e.size, e.limit),
		Hint:    "Send less data per message, or raise the server's --max-message-size.", Err: e}
}

// msgReader decodes frontend messages (after the startup packet) from r with
// a bound on their size. It replaces pgproto3.Backend's Receive so that the
// server decides what an oversized message costs: nothing is buffered for
// it, and after authentication its body is skipped rather than the
// connection dropped.
//
// A returned message and the byte slices in it are valid until the next
// call of receive.
type msgReader struct {
	r io.Reader
	// limit is the largest body accepted; skipOversized makes receive
	// consume the body of a larger message (after authentication).
	limit         int
	skipOversized bool
	// authType tells what a 'p' message is (it is ambiguous on the wire).
	authType uint32

	hdr [5]byte
	buf []byte // reused for bodies up to reusedBodyLen

	bind         pgproto3.Bind
	close        pgproto3.Close
	copyData     pgproto3.CopyData
	copyDone     pgproto3.CopyDone
	copyFail     pgproto3.CopyFail
	describe     pgproto3.Describe
	execute      pgproto3.Execute
	flush        pgproto3.Flush
	functionCall pgproto3.FunctionCall
	parse        pgproto3.Parse
	query        pgproto3.Query
	sync         pgproto3.Sync
	terminate    pgproto3.Terminate
}

// receive reads and decodes the next message. Errors:
//   - *connLostError: the socket failed or ended, also within a message;
//   - *messageTooLargeError: the declared length exceeds the limit;
//   - a fatal 08P01: an unknown message type, an invalid length, or a body
//     that does not decode.
func (m *msgReader) receive() (pgproto3.FrontendMessage, error) {
	if _, err := io.ReadFull(m.r, m.hdr[:]); err != nil {
		return nil, &connLostError{err: fmt.Errorf("pgwire: read message header: %w", err)}
	}
	typ := m.hdr[0]
	n := int(int32(binary.BigEndian.Uint32(m.hdr[1:])))
	msg := m.message(typ)
	if msg == nil {
		return nil, fatal(protocolViolation("invalid frontend message type %d", typ))
	}
	if n < 4 {
		return nil, fatal(protocolViolation("invalid message length %d", n))
	}
	n -= 4
	if n > m.limit {
		tooBig := &messageTooLargeError{typ: typ, size: n, limit: m.limit}
		if !m.skipOversized {
			return nil, fatal(tooBig.sqlError())
		}
		if _, err := io.CopyN(io.Discard, m.r, int64(n)); err != nil {
			return nil, &connLostError{err: fmt.Errorf("pgwire: skip oversized message: %w", err)}
		}
		tooBig.skipped = true
		return nil, tooBig
	}
	var body []byte
	if n <= reusedBodyLen {
		if cap(m.buf) < n {
			m.buf = make([]byte, 0, reusedBodyLen)
		}
		body = m.buf[:n]
	} else {
		body = make([]byte, n)
	}
	if _, err := io.ReadFull(m.r, body); err != nil {
		return nil, &connLostError{err: fmt.Errorf("pgwire: read message body: %w", err)}
	}
	if err := msg.Decode(body); err != nil {
		return nil, fatal(sqlerr.Wrap(codeProtocolViolation, err, "invalid frontend message"))
	}
	return msg, nil
}

// message returns the value to decode a message of type typ into, nil for a
// type the protocol does not have.
func (m *msgReader) message(typ byte) pgproto3.FrontendMessage {
	switch typ {
	case 'B':
		return &m.bind
	case 'C':
		return &m.close
	case 'D':
		return &m.describe
	case 'E':
		return &m.execute
	case 'F':
		return &m.functionCall
	case 'H':
		return &m.flush
	case 'P':
		return &m.parse
	case 'Q':
		return &m.query
	case 'S':
		return &m.sync
	case 'X':
		return &m.terminate
	case 'd':
		return &m.copyData
	case 'c':
		return &m.copyDone
	case 'f':
		return &m.copyFail
	case 'p':
		switch m.authType {
		case pgproto3.AuthTypeSASL:
			return &pgproto3.SASLInitialResponse{}
		case pgproto3.AuthTypeSASLContinue:
			return &pgproto3.SASLResponse{}
		case pgproto3.AuthTypeCleartextPassword:
			return &pgproto3.PasswordMessage{}
		}
		// After authentication a password message is out of place; it is
		// still framed as one, so that the loop can refuse it.
		return &pgproto3.PasswordMessage{}
	}
	return nil
}

// skippedOversized reports whether err is a message that was too large and
// has been skipped, so that the connection can go on.
func skippedOversized(err error) (*messageTooLargeError, bool) {
	var tooBig *messageTooLargeError
	if errors.As(err, &tooBig) && tooBig.skipped {
		return tooBig, true
	}
	return nil, false
}
