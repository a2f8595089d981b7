package pgwire

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Connection limits. A connection holds a socket from Accept on (at most
// 2×MaxConnections of them) and a session slot from authentication on (at
// most MaxConnections, the last ReservedConnections only for privileged
// roles), as PostgreSQL bounds its child processes and its backends.

var (
	errShuttingDown   = errors.New("pgwire: shutdown has begun")
	errTooManySockets = errors.New("pgwire: too many sockets")
)

// maxLingering bounds the refused sockets drained at once; lingerTime is how
// long one is.
const (
	maxLingering = 64
	lingerTime   = time.Second
)

// tooManyClientsError is PostgreSQL's answer when every slot is taken.
func tooManyClientsError() error {
	return sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already")
}

// takeSlot takes a session slot for the authenticated user or fails with
// FATAL 53300. When only reserved slots are left, the Authenticator decides
// whether the user is privileged enough to take one.
func (c *conn) takeSlot(ctx context.Context) error {
	s := c.srv
	s.mu.Lock()
	free := s.cfg.MaxConnections - s.sessions
	if free > s.cfg.ReservedConnections {
		s.sessions++
		c.slot = true
	}
	s.mu.Unlock()
	if c.slot {
		return nil
	}
	if free <= 0 {
		return fatal(tooManyClientsError())
	}
	pr, ok := s.cfg.Auth.(PrivilegedRoles)
	privileged := false
	if ok {
		err := c.call(ctx, func(ctx context.Context) error {
			var err error
			privileged, err = pr.Privileged(ctx, c.user)
			return err
		})
		if err != nil {
			if endsConnection(err) {
				return err
			}
			return fatal(err)
		}
	}
	if !privileged {
		return fatal(sqlerr.New(sqlerr.TooManyConnections,
			"remaining connection slots are reserved for roles with the SUPERUSER attribute"))
	}
	s.mu.Lock()
	if s.sessions < s.cfg.MaxConnections {
		s.sessions++
		c.slot = true
	}
	s.mu.Unlock()
	if !c.slot {
		return fatal(tooManyClientsError())
	}
	return nil
}

// releaseSlot gives the session slot back, if the connection holds one.
func (c *conn) releaseSlot() {
	if !c.slot {
		return
	}
	c.slot = false
	c.srv.mu.Lock()
	c.srv.sessions--
	c.srv.mu.Unlock()
}

// refuseSocket answers a socket beyond the socket limit with FATAL 53300
// before reading anything, as PostgreSQL's postmaster does when it cannot
// start a backend, and closes it. So that the client reads the answer
// rather than a reset (closing a socket with unread input resets it), the
// socket is drained for up to lingerTime when fewer than maxLingering
// others are; otherwise it is closed at once.
func (s *Server) refuseSocket(nc net.Conn) {
	msg, err := errorResponse(tooManyClientsError(), severityFatal).Encode(nil)
	if err == nil {
		nc.SetWriteDeadline(time.Now().Add(lingerTime))
		_, err = nc.Write(msg)
	}
	select {
	case s.lingering <- struct{}{}:
	default:
		nc.Close()
		return
	}
	safego.Go(func() {
		defer func() { <-s.lingering }()
		defer nc.Close()
		if err != nil {
			return
		}
		if cw, ok := nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		nc.SetReadDeadline(time.Now().Add(lingerTime))
		io.Copy(io.Discard, io.LimitReader(nc, maxStartupPacketLen))
	})
}
