package pgwire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// conn is one client connection. Apart from the fields documented as shared,
// it is owned by its serving goroutine: only that goroutine calls the
// Session and writes to the socket.
type conn struct {
	srv *Server
	raw net.Conn // the accepted socket: deadlines and the final Close
	nc  net.Conn // raw, or the TLS connection over it once negotiated
	tls bool
	log *slog.Logger

	// ctx lives as long as the connection; it is cancelled with errConnLost
	// when the socket read fails, and when the connection ends.
	ctx        context.Context
	cancelConn context.CancelCauseFunc

	in  *input // the socket read ahead, once authenticated
	rd  msgReader
	out output
	// slot is set while the connection holds one of the session slots
	// (Config.MaxConnections).
	slot bool
	// key is written once by keyRegistry.register, under the registry lock.
	key        backendKey
	registered bool

	user     string
	sess     Session
	types    *pgtype.Map
	stmts    map[string]*preparedStatement
	portals  map[string]*portal
	reported map[string]string // ParameterStatus values the client last saw
	tz       timeZoneCache
	// ignoreTillSync is set after an error in the extended protocol: messages
	// are discarded until Sync.
	ignoreTillSync bool
	// pipelineTx is set while the extended protocol's implicit transaction
	// may be open: from the Execute that opened it to the Sync, the ERROR
	// or the ReadyForQuery that ends it (pipeline.go).
	pipelineTx bool
	// pipelineExecuted is set from the first Execute after a Sync (or
	// ReadyForQuery) to the next one.
	pipelineExecuted bool
	// notifier is the session's notification queue, if it has one
	// (notify.go); idle is set from a ReadyForQuery reporting an idle
	// session until the next message arrives: then notifications are sent
	// at once.
	notifier SessionNotifications
	idle     bool
	// idleTxTimeout is how long the client may keep the session waiting
	// inside a transaction block, from the ReadyForQuery that reported the
	// block to the next message (0 = no bound; SessionIdleTimeout).
	idleTxTimeout time.Duration

	// opened is when the socket was accepted; act what pg_stat_activity
	// shows of the session (shared with Server.Activity).
	opened time.Time
	act    activity

	// Shared with Shutdown and CancelRequest.
	shutdown   atomic.Bool
	mu         sync.Mutex
	cancelCall context.CancelCauseFunc // non-nil while a call runs; see call
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &conn{
		srv:        s,
		raw:        nc,
		nc:         nc,
		log:        s.log.With("remote", nc.RemoteAddr().String()),
		ctx:        ctx,
		cancelConn: cancel,
		opened:     time.Now(),
		stmts:      make(map[string]*preparedStatement),
		portals:    make(map[string]*portal),
	}
}

// requestShutdown asks the connection to end with FATAL 57P01: the running
// call is cancelled and a blocked read is woken. Safe from any goroutine.
func (c *conn) requestShutdown() {
	c.shutdown.Store(true)
	c.cancelRunningCall(errAdminShutdown)
	c.raw.SetReadDeadline(time.Now())
}

// serve runs the connection to its end; it is the connection's goroutine.
func (c *conn) serve() {
	defer c.srv.untrackConn(c)
	start := time.Now()
	c.log.Debug("pgwire: connection opened")
	err := c.run()
	c.finish(err)
	c.log.Debug("pgwire: connection closed", "duration", time.Since(start))
}

// run performs startup, authentication and the message loop. It returns why
// the connection ends. A panic of the package's own code outside a
// statement (startup, authentication, the loop itself) becomes a fatal
// error: there is no statement to fail, and the protocol state is unknown.
func (c *conn) run() (err error) {
	defer safego.RecoverTo(func(p error) {
		c.out.discard() // may hold a half-encoded message
		err = fatal(p)
	})
	c.out.w = c.nc
	// Startup, authentication and opening the session must be done within
	// the authentication timeout, as in PostgreSQL: the socket deadline
	// ends a client that stalls, the context a catalog that does.
	deadline := time.Now().Add(c.srv.cfg.AuthTimeout)
	c.raw.SetDeadline(deadline)
	startCtx, cancel := context.WithDeadline(c.ctx, deadline)
	defer cancel()
	if c.shutdown.Load() {
		// Shutdown's read deadline may just have been replaced. No startup
		// packet has been read, so there is no protocol to answer in: close
		// silently, as a startup read woken by Shutdown does.
		return nil
	}
	sm, err := c.readStartup()
	c.out.w = c.nc // TLS may have replaced the socket
	if err != nil || sm == nil {
		return err
	}
	c.user = sm.params["user"]
	c.log = c.log.With("user", c.user, "database", sm.params["database"])

	// Until the client is authenticated its messages are read straight from
	// the socket, byte-exact (nothing read ahead), and small.
	c.rd = msgReader{r: c.nc, limit: maxAuthMessageLen}
	if sm.minor > 0 || len(sm.options) > 0 {
		if err := c.out.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: sm.options}); err != nil {
			return err
		}
	}
	cred, err := c.authenticate(startCtx, c.user)
	if err != nil {
		return err
	}
	if err := c.takeSlot(startCtx); err != nil {
		return err
	}

	err = c.call(startCtx, func(ctx context.Context) error {
		s, err := c.srv.cfg.Sessions.NewSession(ctx, sm.params, cred)
		c.sess = s
		return err
	})
	if err != nil {
		if errors.As(err, new(*connLostError)) {
			return err
		}
		return fatal(err)
	}
	if c.sess == nil {
		return fatal(errors.New("pgwire: NewSession returned no session"))
	}
	if u, ok := c.sess.(PreparedStatementUser); ok {
		u.UsePreparedStatements(connStatements{c})
	}
	if err := c.raw.SetDeadline(time.Time{}); err != nil {
		return &connLostError{err: fmt.Errorf("pgwire: clear deadline: %w", err)}
	}
	if c.shutdown.Load() { // the deadline just cleared may have been Shutdown's
		return fatal(adminShutdownError())
	}
	// From now on the socket is read ahead, so that a client that goes
	// away is noticed while a statement runs (input.go).
	c.in = startInput(c.nc, c.raw, func(error) { c.cancelConn(errConnLost) })
	c.rd = msgReader{r: c.in, limit: c.srv.cfg.MaxMessageSize, skipOversized: true}
	if _, err := c.srv.keys.register(c); err != nil {
		return fatal(err)
	}
	c.registered = true
	c.act.begin(c, sm.params)
	if p, ok := c.sess.(SessionPID); ok {
		p.SetBackendPID(c.key.pid)
	}
	if n, ok := c.sess.(SessionNotifications); ok {
		c.notifier = n
		n.WatchNotifications(c.in.poke)
	}
	c.types = pgtype.NewMap()
	for _, t := range c.srv.cfg.Types {
		c.types.RegisterType(t)
	}

	c.reported = maps.Clone(c.sess.ParameterStatus())
	if v, ok := c.reported["application_name"]; ok {
		c.act.setApplicationName(v)
	}
	for _, name := range slices.Sorted(maps.Keys(c.reported)) {
		if err := c.out.send(&pgproto3.ParameterStatus{Name: name, Value: c.reported[name]}); err != nil {
			return err
		}
	}
	if err := c.out.send(&pgproto3.BackendKeyData{ProcessID: c.key.pid, SecretKey: c.key.secret[:]}); err != nil {
		return err
	}
	c.log = c.log.With("pid", c.key.pid)
	c.log.Debug("pgwire: session started")
	if err := c.readyForQuery(); err != nil {
		return err
	}
	return c.loop()
}

// loop reads and dispatches messages until the connection must end.
func (c *conn) loop() error {
	for {
		if c.shutdown.Load() {
			return fatal(adminShutdownError())
		}
		if err := c.notifyWhileIdle(); err != nil {
			return err
		}
		if err := c.awaitIdleInTransaction(); err != nil {
			return err
		}
		msg, err := c.rd.receive()
		c.idle = false
		if tooBig, ok := skippedOversized(err); ok {
			if err := c.refuseOversized(tooBig); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return c.receiveError(err)
		}
		if c.ignoreTillSync {
			switch msg.(type) {
			case *pgproto3.Sync, *pgproto3.Terminate:
			default:
				continue
			}
		}
		err = c.handleGuarded(msg)
		if err == nil {
			continue
		}
		if endsConnection(err) {
			return err
		}
		// An ERROR in the extended protocol: the pipeline's implicit
		// transaction rolls back; report the error at once, as PostgreSQL
		// does (a client that sent Flush and no Sync waits for it), then
		// skip to Sync.
		if err := c.endPipeline(false); err != nil {
			return err
		}
		if err := c.sendError(err); err != nil {
			return err
		}
		if err := c.out.flush(); err != nil {
			return err
		}
		c.ignoreTillSync = true
	}
}

// handleGuarded is handle, with a panic of the protocol's own handling of
// the message (Session calls recover in call) made the message's ERROR
// XX000, as a failing statement's: the Session is told, the half-built
// output dropped, and a simple query still ends with ReadyForQuery.
func (c *conn) handleGuarded(msg pgproto3.FrontendMessage) (err error) {
	defer safego.RecoverTo(func(p error) {
		c.out.dropOpen()
		c.abortStatement(p)
		err = p
		if _, ok := msg.(*pgproto3.Query); ok {
			if err = c.sendError(p); err == nil {
				err = c.readyForQuery()
			}
		}
	})
	return c.handle(msg)
}

// handle dispatches one message. A returned error either ends the connection
// (see endsConnection) or is an ERROR of the extended protocol.
func (c *conn) handle(msg pgproto3.FrontendMessage) error {
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.simpleQuery(m.String)
	case *pgproto3.Parse:
		return c.handleParse(m)
	case *pgproto3.Bind:
		return c.handleBind(m)
	case *pgproto3.Describe:
		return c.handleDescribe(m)
	case *pgproto3.Execute:
		return c.handleExecute(m)
	case *pgproto3.Close:
		return c.handleClose(m)
	case *pgproto3.Sync:
		return c.sync()
	case *pgproto3.Flush:
		return c.out.flush()
	case *pgproto3.Terminate:
		return errTerminate
	case *pgproto3.FunctionCall:
		// The fast-path interface is not part of the extended protocol: it
		// answers on its own, with ReadyForQuery.
		if err := c.sendError(sqlerr.Unsupported("the fast-path function call interface", "call functions with a query")); err != nil {
			return err
		}
		return c.readyForQuery()
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Outside COPY these are ignored, as in PostgreSQL.
		return nil
	default:
		return fatal(protocolViolation("unexpected message type %s", messageName(msg)))
	}
}

// endsConnection reports whether err from a handler ends the connection.
func endsConnection(err error) bool {
	return errors.Is(err, errTerminate) || errors.As(err, new(*fatalError)) || errors.As(err, new(*connLostError))
}

// receiveError is what a failure to read a message ends the connection
// with: FATAL 57P01 during Shutdown, otherwise the reader's error (a lost
// connection, or a fatal protocol violation).
func (c *conn) receiveError(err error) error {
	if c.shutdown.Load() {
		return fatal(adminShutdownError())
	}
	return err
}

// refuseOversized answers a message that exceeded Config.MaxMessageSize and
// was skipped: a Query or FunctionCall with ERROR and ReadyForQuery, a
// message of the extended protocol with ERROR and skipping to Sync, a
// CopyData outside COPY not at all (such messages are ignored).
func (c *conn) refuseOversized(tooBig *messageTooLargeError) error {
	if c.ignoreTillSync || tooBig.typ == 'd' {
		return nil
	}
	if err := c.endPipeline(false); err != nil {
		return err
	}
	switch tooBig.typ {
	case 'Q', 'F':
		if err := c.sendError(tooBig.sqlError()); err != nil {
			return err
		}
		return c.readyForQuery()
	}
	if err := c.sendError(tooBig.sqlError()); err != nil {
		return err
	}
	c.ignoreTillSync = true
	return c.out.flush()
}

// messageName names a frontend message type for error messages.
func messageName(msg pgproto3.FrontendMessage) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
}

// sendError buffers an ERROR ErrorResponse for err and logs it.
func (c *conn) sendError(err error) error {
	e := sqlerr.From(err)
	level := slog.LevelInfo
	switch {
	case errors.As(err, new(*safego.PanicError)):
		level = slog.LevelError // its stack was logged where it was recovered
	case e.Code == sqlerr.InternalError:
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, "pgwire: statement failed", "sqlstate", e.Code, "err", err)
	return c.out.send(errorResponse(err, severityError))
}

// readyForQuery ends a query cycle: a pipeline's implicit transaction that
// no Sync committed rolls back (pipeline.go), portals die with the
// transaction, then ReadyForQuery is sent and the output flushed.
func (c *conn) readyForQuery() error {
	if err := c.endPipeline(false); err != nil {
		return err
	}
	c.pipelineExecuted = false
	status := c.sess.TxStatus()
	if status == 'I' {
		c.closeAllPortals()
	}
	c.act.idle(status)
	if status == 'I' {
		if err := c.sendNotifications(); err != nil {
			return err
		}
	}
	if err := c.out.send(&pgproto3.ReadyForQuery{TxStatus: status}); err != nil {
		return err
	}
	c.idle = status == 'I'
	c.idleTxTimeout = 0
	if t, ok := c.sess.(SessionIdleTimeout); ok && status != 'I' {
		c.idleTxTimeout = t.IdleInTransactionTimeout()
	}
	return c.out.flush()
}

// awaitIdleInTransaction waits, after a ReadyForQuery that reported a
// transaction block, for the client's next message at most the session's
// idle-in-transaction timeout, and ends the connection with FATAL 25P03
// when it passes, as PostgreSQL's idle_in_transaction_session_timeout does
// (the session's Close rolls the block back).
func (c *conn) awaitIdleInTransaction() error {
	d := c.idleTxTimeout
	c.idleTxTimeout = 0
	if d <= 0 || c.in == nil || !c.in.awaitInputFor(d) {
		return nil
	}
	return fatal(sqlerr.New(sqlerr.IdleInTransactionTimeout, "terminating connection due to idle-in-transaction timeout"))
}

// notifyWhileIdle waits, while the session is idle between transactions,
// for the client's next message and sends every notification that arrives
// meanwhile at once, as PostgreSQL does for an idle LISTENing session.
func (c *conn) notifyWhileIdle() error {
	for c.idle && c.in != nil && c.in.awaitInput() {
		if err := c.sendNotifications(); err != nil {
			return err
		}
		if err := c.out.flush(); err != nil {
			return err
		}
	}
	return nil
}

// reportParameterChanges sends ParameterStatus for every value that differs
// from what the client last saw.
func (c *conn) reportParameterChanges() error {
	cur := c.sess.ParameterStatus()
	if !parametersChanged(cur, c.reported) {
		return nil // the common case, after every statement: nothing to sort
	}
	for _, name := range slices.Sorted(maps.Keys(cur)) {
		v := cur[name]
		if old, ok := c.reported[name]; ok && old == v {
			continue
		}
		c.reported[name] = v
		if name == "application_name" {
			c.act.setApplicationName(v)
		}
		if err := c.out.send(&pgproto3.ParameterStatus{Name: name, Value: v}); err != nil {
			return err
		}
	}
	return nil
}

// parametersChanged reports whether some value of cur differs from what
// the client last saw.
func parametersChanged(cur, reported map[string]string) bool {
	for name, v := range cur {
		if old, ok := reported[name]; !ok || old != v {
			return true
		}
	}
	return false
}

// finish reports why the connection ends (a FATAL ErrorResponse where there
// is one), releases the session and closes the socket.
func (c *conn) finish(err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("pgwire: panic closing connection", "panic", r, "stack", string(debug.Stack()))
		}
		c.cancelConn(errConnLost)
		if c.in != nil {
			c.in.stop()
		}
		c.nc.Close()
		c.raw.Close()
		if c.in != nil {
			c.in.close()
		}
		c.releaseSlot()
	}()

	var fe *fatalError
	var lost *connLostError
	switch {
	case err == nil, errors.Is(err, errTerminate):
	case errors.As(err, &lost):
		c.log.Debug("pgwire: client connection lost", "err", err)
	case errors.As(err, &fe):
		e := sqlerr.From(fe.err)
		level := slog.LevelWarn
		switch e.Code {
		case sqlerr.InvalidPassword, sqlerr.InvalidAuthorization, sqlerr.AdminShutdown, sqlerr.InvalidCatalogName,
			sqlerr.IdleInTransactionTimeout:
			level = slog.LevelInfo // expected in normal operation
		}
		c.log.Log(context.Background(), level, "pgwire: terminating connection", "sqlstate", e.Code, "err", fe.err)
		if c.out.send(errorResponse(fe.err, severityFatal)) == nil {
			_ = c.out.flush()
		}
	default:
		c.log.Error("pgwire: terminating connection on internal error", "err", err)
		if c.out.send(errorResponse(err, severityFatal)) == nil {
			_ = c.out.flush()
		}
	}

	if c.registered {
		c.srv.keys.unregister(c.key)
	}
	c.closeAllPortals()
	if c.sess != nil {
		c.sess.Close()
	}
}
