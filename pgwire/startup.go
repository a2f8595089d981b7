package pgwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Request codes of the untyped startup packets (protocol "versions" 1234.x).
const (
	cancelRequestCode = 80877102
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
)

// maxStartupPacketLen bounds a startup packet, as PostgreSQL does
// (MAX_STARTUP_PACKET_LENGTH).
const maxStartupPacketLen = 10000

// protocolOptionPrefix starts the names of protocol extension options.
const protocolOptionPrefix = "_pq_."

// startupMessage is a decoded StartupMessage.
type startupMessage struct {
	minor uint16 // requested minor version of protocol 3
	// params are the client's parameters without protocol options; "database"
	// is set (it defaults to the user name).
	params map[string]string
	// options are the "_pq_." protocol options the client asked for; this
	// server recognizes none of them.
	options []string
}

// readStartup runs the startup negotiation on c.nc: it answers SSLRequest
// (upgrading c.nc to TLS when configured) and GSSEncRequest, serves a
// CancelRequest, and returns the StartupMessage. It returns (nil, nil) when
// the connection carried a CancelRequest and must now be closed.
//
// Startup packets are read without buffering, so no byte past a packet is
// consumed before a TLS handshake takes over the socket.
func (c *conn) readStartup() (*startupMessage, error) {
	sslDone, gssDone := false, false
	for {
		body, err := readStartupPacket(c.nc)
		if err != nil {
			return nil, err
		}
		code := binary.BigEndian.Uint32(body)
		switch code {
		case sslRequestCode:
			if sslDone || len(body) != 4 {
				return nil, fatal(protocolViolation("unexpected SSLRequest"))
			}
			sslDone = true
			if err := c.answerSSLRequest(); err != nil {
				return nil, err
			}
		case gssEncRequestCode:
			if gssDone || len(body) != 4 {
				return nil, fatal(protocolViolation("unexpected GSSEncRequest"))
			}
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, &connLostError{err: fmt.Errorf("pgwire: answer GSSEncRequest: %w", err)}
			}
		case cancelRequestCode:
			var req pgproto3.CancelRequest
			if err := req.Decode(body); err != nil {
				return nil, &connLostError{err: fmt.Errorf("pgwire: decode CancelRequest: %w", err)}
			}
			if c.srv.keys.cancel(req.ProcessID, req.SecretKey) {
				c.log.Debug("pgwire: cancel request served", "target_pid", req.ProcessID)
			} else {
				c.log.Info("pgwire: cancel request matched no connection", "target_pid", req.ProcessID)
			}
			return nil, nil
		default:
			return parseStartupMessage(body)
		}
	}
}

// answerSSLRequest answers 'S' and runs the TLS handshake when TLS is
// configured, 'N' otherwise.
func (c *conn) answerSSLRequest() error {
	if c.srv.tlsConfig == nil {
		if _, err := c.nc.Write([]byte{'N'}); err != nil {
			return &connLostError{err: fmt.Errorf("pgwire: answer SSLRequest: %w", err)}
		}
		return nil
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return &connLostError{err: fmt.Errorf("pgwire: answer SSLRequest: %w", err)}
	}
	tc := tls.Server(c.nc, c.srv.tlsConfig)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return &connLostError{err: fmt.Errorf("pgwire: TLS handshake: %w", err)}
	}
	c.nc = tc
	c.tls = true
	return nil
}

// readStartupPacket reads one length-prefixed startup packet and returns its
// body (at least the 4-byte code or version).
func readStartupPacket(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, &connLostError{err: fmt.Errorf("pgwire: read startup packet: %w", err)}
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:]))) - 4
	if n < 4 || n > maxStartupPacketLen {
		return nil, fatal(protocolViolation("invalid length of startup packet"))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, &connLostError{err: fmt.Errorf("pgwire: read startup packet: %w", err)}
	}
	return body, nil
}

// parseStartupMessage decodes a StartupMessage body: the protocol version and
// NUL-terminated name/value pairs ending with an empty name.
func parseStartupMessage(body []byte) (*startupMessage, error) {
	version := binary.BigEndian.Uint32(body)
	major, minor := version>>16, uint16(version&0xffff)
	if major != 3 {
		return nil, fatal(sqlerr.New(sqlerr.FeatureNotSupported,
			"unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", major, minor))
	}
	sm := &startupMessage{minor: minor, params: make(map[string]string)}
	rest := body[4:]
	for {
		name, r, ok := cutCString(rest)
		if !ok {
			return nil, fatal(protocolViolation("invalid startup packet layout: expected terminator as last byte"))
		}
		if name == "" {
			if len(r) != 0 {
				return nil, fatal(protocolViolation("invalid startup packet layout: expected terminator as last byte"))
			}
			break
		}
		value, r, ok := cutCString(r)
		if !ok {
			return nil, fatal(protocolViolation("invalid startup packet layout: expected terminator as last byte"))
		}
		rest = r
		if strings.HasPrefix(name, protocolOptionPrefix) {
			sm.options = append(sm.options, name)
			continue
		}
		sm.params[name] = value
	}
	user := sm.params["user"]
	if user == "" {
		return nil, fatal(sqlerr.New(sqlerr.InvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
	}
	if sm.params["database"] == "" {
		sm.params["database"] = user
	}
	return sm, nil
}

// cutCString splits a NUL-terminated string off the front of b.
func cutCString(b []byte) (s string, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, false
	}
	return string(b[:i]), b[i+1:], true
}
