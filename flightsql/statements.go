package flightsql

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// Statements. A query is planned by the caller's engine session when its
// FlightInfo is asked for (so planning errors and the schema come back at
// once) and kept under a handle of that client; the endpoint's ticket names
// the handle, and DoGet executes it — or returns what it produced when it
// had to run earlier to keep the client's statements in order (order.go).
// Prepared statements are handles that
// stay until closed, with the parameters the client last bound.

// chunkBuffer is how many record batches a DoGet may have ready ahead of
// the client.
const chunkBuffer = 4

// planOne parses text into exactly one statement on c's session. Call with
// c.mu held.
func planOne(ctx context.Context, c *client, text string) (pgwire.Statement, error) {
	stmts, err := c.sess.Parse(ctx, text, nil)
	if err != nil {
		return nil, flightError(err)
	}
	if len(stmts) != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "expected one statement, got %d", len(stmts))
	}
	return stmts[0], nil
}

// resultSchema is the Arrow schema of st's result (empty for statements
// without rows).
func resultSchema(ctx context.Context, st pgwire.Statement) (*arrow.Schema, error) {
	cols, err := st.Describe(ctx)
	if err != nil {
		return nil, flightError(err)
	}
	return engine.ArrowSchema(cols), nil
}

// planInTxn plans text as the one statement of a command naming
// transaction txn (empty for none), and returns it with its result schema.
// Call with c.mu held.
func planInTxn(ctx context.Context, c *client, txn []byte, text string) (pgwire.Statement, *arrow.Schema, error) {
	if err := checkTxn(c, txn); err != nil {
		return nil, nil, err
	}
	st, err := planOne(ctx, c, text)
	if err != nil {
		return nil, nil, err
	}
	sc, err := resultSchema(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	return st, sc, nil
}

func (s *Server) flightInfo(sc *arrow.Schema, desc *flight.FlightDescriptor, tickets ...[]byte) *flight.FlightInfo {
	info := &flight.FlightInfo{Schema: flight.SerializeSchema(sc, s.mem), FlightDescriptor: desc,
		TotalRecords: -1, TotalBytes: -1}
	for _, t := range tickets {
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: t}})
	}
	return info
}

// GetFlightInfoStatement plans a query and returns its endpoints.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	st, sc, err := planInTxn(ctx, c, cmd.GetTransactionId(), cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	if tickets, ok, err := s.unitTickets(ctx, c, st, sc); err != nil {
		return nil, err
	} else if ok {
		return s.flightInfo(sc, desc, tickets...), nil
	}
	h := &handle{stmt: st}
	id, err := c.addHandle(h)
	if err != nil {
		return nil, err
	}
	if c.plannedForDoGet(ctx, h); h.res != nil && h.res.err != nil {
		err := h.res.err
		c.dropHandle(id)
		return nil, err
	}
	tkt, err := flightsql.CreateStatementQueryTicket([]byte(queryTicketPrefix + id))
	if err != nil {
		return nil, err
	}
	return s.flightInfo(sc, desc, tkt), nil
}

// GetSchemaStatement plans a query for its schema only.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	c := clientFrom(ctx)
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	st, err := planOne(ctx, c, cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	sc, err := resultSchema(ctx, st)
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.mem)}, nil
}

// queryTicketPrefix marks a ticket naming a query handle; unit tickets
// (tickets.go) have their own.
const queryTicketPrefix = "q:"

// DoGetStatement executes a planned query (its handle is used once) or
// reads one unit of a parallel scan.
func (s *Server) DoGetStatement(ctx context.Context, tkt flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	c := clientFrom(ctx)
	raw := string(tkt.GetStatementHandle())
	if id, ok := strings.CutPrefix(raw, queryTicketPrefix); ok {
		if err := c.lock(ctx); err != nil {
			return nil, nil, err
		}
		h, err := c.handleOf(id)
		if err != nil {
			c.unlock()
			return nil, nil, err
		}
		if res := h.takeResult(); res != nil {
			c.dropHandle(id)
			return c.replayResult(ctx, h.stmt, res)
		}
		c.dropHandle(id)
		rctx, done := c.startRunning(ctx, id)
		return s.stream(rctx, c, h.stmt, nil, done)
	}
	return s.doGetUnit(ctx, c, tkt.GetStatementHandle())
}

// stream executes st on c's session and returns its batches on a channel.
// It is called with the session locked and unlocks it when the statement
// ends, after calling done (if set).
func (s *Server) stream(ctx context.Context, c *client, st pgwire.Statement, params []any, done func()) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	end := func() {
		if done != nil {
			done()
		}
		c.unlock()
	}
	sc, err := resultSchema(ctx, st)
	if err != nil {
		end()
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, chunkBuffer)
	safego.Go(func() {
		defer close(ch)
		defer end()
		// A panic ends the stream with its error, as any failure, and
		// the session is unlocked.
		err := safego.Call(func() error {
			_, err := c.sess.ExecuteArrow(ctx, st, params, func(rec arrow.RecordBatch) error {
				rec.Retain()
				select {
				case ch <- flight.StreamChunk{Data: rec}:
					return nil
				case <-ctx.Done():
					rec.Release()
					return ctx.Err()
				}
			})
			return err
		})
		if err != nil {
			// Always delivered: the framework drains the channel to its
			// end even after the call ended, and a stream that stopped
			// must not look complete.
			ch <- flight.StreamChunk{Err: flightError(err)}
		}
	})
	return sc, ch, nil
}

// DoPutCommandStatementUpdate executes a statement without a result
// (INSERT, UPDATE, DELETE, MERGE, DDL, …) and returns the rows it affected.
func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return 0, err
	}
	defer c.unlock()
	if err := checkTxn(c, cmd.GetTransactionId()); err != nil {
		return 0, err
	}
	st, err := planOne(ctx, c, cmd.GetQuery())
	if err != nil {
		return 0, err
	}
	return execUpdate(ctx, c, st, nil)
}

// execUpdate runs st to its end, dropping any rows, and returns the count
// of its command tag (0 for tags without one). Call with the session locked.
func execUpdate(ctx context.Context, c *client, st pgwire.Statement, params []any) (int64, error) {
	tag, err := c.sess.ExecuteArrow(ctx, st, params, func(arrow.RecordBatch) error { return nil })
	if err != nil {
		return 0, flightError(err)
	}
	return tagCount(tag), nil
}

// tagCount is the row count at the end of a command tag ("INSERT 0 5" → 5).
func tagCount(tag string) int64 {
	f := strings.Fields(tag)
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// CreatePreparedStatement plans a statement and keeps it until closed.
func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var res flightsql.ActionCreatePreparedStatementResult
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return res, err
	}
	defer c.unlock()
	st, sc, err := planInTxn(ctx, c, req.GetTransactionId(), req.GetQuery())
	if err != nil {
		return res, err
	}
	oids := st.ParamOIDs()
	pcols := make([]pgwire.Column, len(oids))
	for i, oid := range oids {
		pcols[i] = pgwire.Column{Name: fmt.Sprintf("$%d", i+1), TypeOID: oid, TypeModifier: -1}
	}
	id, err := c.addHandle(&handle{stmt: st, prepared: true})
	if err != nil {
		return res, err
	}
	res.Handle = []byte(id)
	res.DatasetSchema = sc
	res.ParameterSchema = engine.ArrowSchema(pcols)
	return res, nil
}

// ClosePreparedStatement drops a prepared statement.
func (s *Server) ClosePreparedStatement(ctx context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return err
	}
	defer c.unlock()
	if _, err := c.handleOf(string(req.GetPreparedStatementHandle())); err != nil {
		return err
	}
	c.dropHandle(string(req.GetPreparedStatementHandle()))
	return nil
}

// preparedHandle is the caller's prepared statement named by a command.
// Call with the session locked.
func preparedHandle(c *client, raw []byte) (*handle, error) {
	h, err := c.handleOf(string(raw))
	if err != nil {
		return nil, err
	}
	if !h.prepared {
		return nil, status.Error(codes.NotFound, "not a prepared statement handle")
	}
	return h, nil
}

// DoPutPreparedStatementQuery binds parameters (the first row of the
// batches sent) to a prepared query.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	h, err := preparedHandle(c, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	rows, err := paramRows(rdr, h.stmt.ParamOIDs())
	if err != nil {
		return nil, err
	}
	if len(rows) > 1 {
		return nil, status.Errorf(codes.InvalidArgument, "a query binds one row of parameters, got %d", len(rows))
	}
	h.params = nil
	if len(rows) == 1 {
		h.params = rows[0]
	}
	return cmd.GetPreparedStatementHandle(), nil
}

// GetFlightInfoPreparedStatement returns the one endpoint of a prepared query.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	h, err := preparedHandle(c, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	sc, err := resultSchema(ctx, h.stmt)
	if err != nil {
		return nil, err
	}
	// A prepared plain scan without parameters (the ADBC driver prepares
	// every query) gets its units' endpoints as an unprepared one does, so
	// other connections and servers can read them in parallel.
	if len(h.params) == 0 && len(h.stmt.ParamOIDs()) == 0 {
		if tickets, ok, err := s.unitTickets(ctx, c, h.stmt, sc); err != nil {
			return nil, err
		} else if ok {
			return s.flightInfo(sc, desc, tickets...), nil
		}
	}
	if c.plannedForDoGet(ctx, h); h.res != nil && h.res.err != nil {
		err := h.res.err
		h.forget()
		return nil, err
	}
	return s.flightInfo(sc, desc, desc.Cmd), nil
}

// GetSchemaPreparedStatement returns a prepared statement's result schema.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sc, err := preparedSchema(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.mem)}, nil
}

// preparedSchema is the result schema of the caller's prepared statement
// named by raw; it locks the session for the call.
func preparedSchema(ctx context.Context, raw []byte) (*arrow.Schema, error) {
	c := clientFrom(ctx)
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	h, err := preparedHandle(c, raw)
	if err != nil {
		return nil, err
	}
	return resultSchema(ctx, h.stmt)
}

// DoGetPreparedStatement executes a prepared query with its bound parameters.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	c := clientFrom(ctx)
	if err := c.lock(ctx); err != nil {
		return nil, nil, err
	}
	h, err := preparedHandle(c, cmd.GetPreparedStatementHandle())
	if err != nil {
		c.unlock()
		return nil, nil, err
	}
	if res := h.takeResult(); res != nil {
		return c.replayResult(ctx, h.stmt, res)
	}
	return s.stream(ctx, c, h.stmt, h.params, nil)
}

// DoPutPreparedStatementUpdate executes a prepared statement once per row
// of parameters sent (once when none are) and returns the rows affected.
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return 0, err
	}
	defer c.unlock()
	h, err := preparedHandle(c, cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, err
	}
	rows, err := paramRows(rdr, h.stmt.ParamOIDs())
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		rows = [][]any{h.params}
	}
	var total int64
	for _, p := range rows {
		n, err := execUpdate(ctx, c, h.stmt, p)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// CancelFlightInfo cancels a query: a running DoGet of its endpoint stops
// (Canceled), one not fetched yet is dropped. Parallel-scan endpoints are
// independent streams a client cancels by ending its own calls.
func (s *Server) CancelFlightInfo(ctx context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	c := clientFrom(ctx)
	st := flight.CancelStatusNotCancellable
	for _, ep := range req.GetInfo().GetEndpoint() {
		tkt, err := flightsql.GetStatementQueryTicket(ep.GetTicket())
		if err != nil {
			return flight.CancelFlightInfoResult{}, status.Error(codes.InvalidArgument, "not a statement ticket")
		}
		id, ok := strings.CutPrefix(string(tkt.GetStatementHandle()), queryTicketPrefix)
		if !ok {
			continue
		}
		if c.cancelRunning(id) {
			st = flight.CancelStatusCancelled
			continue
		}
		if err := c.lock(ctx); err != nil {
			return flight.CancelFlightInfoResult{}, err
		}
		if _, err := c.handleOf(id); err == nil {
			c.dropHandle(id)
			st = flight.CancelStatusCancelled
		}
		c.unlock()
	}
	return flight.CancelFlightInfoResult{Status: st}, nil
}
