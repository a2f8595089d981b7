package cdc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Streaming from a PostgreSQL slot (pgoutput, protocol version 1: whole
// transactions, in commit order).
//
// Two goroutines share the work. The receiver owns the replication
// connection: it reads messages and hands them to the applier over a small
// channel, answers the walsender's keepalives and sends status updates
// every statusInterval — also while the applier is busy and the channel is
// full (backpressure: the receiver then stops reading, TCP stops the
// walsender, and the status updates keep it from timing out). The status
// reports as flushed only the position the lake committed, so the slot
// keeps every change the lake does not hold yet.
//
// The applier decodes the messages in order; keepalives travel the same
// channel as markers, so when one arrives every change before its WAL end
// has been seen: an idle subscription may store that position.

const (
	// statusInterval is how often the receiver reports its position; each
	// report asks for a keepalive back, whose WAL end lets an idle
	// subscription move on.
	statusInterval = time.Second
	// idleAdvance is how often an idle subscription stores the source's
	// newer position.
	idleAdvance = 2 * time.Second
)

type walMsg struct {
	data      []byte // a pgoutput message (XLogData payload), nil for a keepalive
	walEnd    pglogrepl.LSN
	keepalive bool
}

// pgStream streams changes after the stored position until ctx ends or an
// error.
func (a *applier) pgStream(ctx context.Context) error {
	start, err := pglogrepl.ParseLSN(a.position)
	if err != nil {
		return fmt.Errorf("subscription %s: position %q: %w", a.sub.Name, a.position, err)
	}
	rc, err := connectReplication(ctx, a.sub.Connection)
	if err != nil {
		return err
	}
	defer rc.Close(context.WithoutCancel(ctx))
	pubs := ""
	for i, p := range a.sub.Publications {
		if i > 0 {
			pubs += ","
		}
		pubs += quoteIdent(p)
	}
	err = pglogrepl.StartReplication(ctx, rc, a.sub.SlotName, start, pglogrepl.StartReplicationOptions{
		Mode:       pglogrepl.LogicalReplication,
		PluginArgs: []string{"proto_version '1'", "publication_names '" + pubs + "'"},
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == sqlerr.UndefinedObject {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"replication slot %q no longer exists on the publisher: the changes after %s cannot be replicated; drop the subscription and create it again",
				a.sub.SlotName, a.position)
		}
		return sourceError("start replication", err)
	}
	var flushed atomic.Uint64
	flushed.Store(uint64(start))
	a.committed = func(pos string) {
		if lsn, err := pglogrepl.ParseLSN(pos); err == nil {
			flushed.Store(uint64(lsn))
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan walMsg, 256)
	recvErr := make(chan error, 1)
	safego.Go(func() { recvErr <- safego.Call(func() error { return receive(rctx, rc, msgs, &flushed) }) })

	s := &pgState{a: a, rels: map[uint32]*tableState{}, pos: start}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastAdvance := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-recvErr:
			return err
		case m := <-msgs:
			if m.walEnd > s.walEnd {
				s.walEnd = m.walEnd
				a.sourcePos = s.walEnd.String()
			}
			if m.keepalive {
				if !s.inTxn && a.batch.empty() && m.walEnd > s.pos && time.Since(lastAdvance) >= idleAdvance {
					if err := a.advance(ctx, m.walEnd.String()); err != nil {
						return err
					}
					s.pos = m.walEnd
					lastAdvance = time.Now()
				}
				continue
			}
			if err := s.handle(ctx, m.data); err != nil {
				return err
			}
		case <-tick.C:
		}
		if !s.inTxn && a.due() {
			if err := a.commit(ctx); err != nil {
				return err
			}
			s.pos, _ = pglogrepl.ParseLSN(a.position)
			lastAdvance = time.Now()
		}
	}
}

// receive reads the replication stream into msgs (see above).
func receive(ctx context.Context, rc *pgconn.PgConn, msgs chan<- walMsg, flushed *atomic.Uint64) error {
	status := func() error {
		pos := pglogrepl.LSN(flushed.Load())
		err := pglogrepl.SendStandbyStatusUpdate(ctx, rc, pglogrepl.StandbyStatusUpdate{WALWritePosition: pos, ReplyRequested: true})
		return sourceError("send a status update", err)
	}
	next := time.Now().Add(statusInterval)
	deliver := func(m walMsg) error {
		for {
			wait := time.Until(next)
			select {
			case msgs <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(max(wait, 0)):
				if err := status(); err != nil {
					return err
				}
				next = time.Now().Add(statusInterval)
			}
		}
	}
	for {
		if time.Now().After(next) {
			if err := status(); err != nil {
				return err
			}
			next = time.Now().Add(statusInterval)
		}
		dctx, cancel := context.WithDeadline(ctx, next)
		raw, err := rc.ReceiveMessage(dctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return sourceError("receive changes", err)
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return sourceError("replication", pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				k, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return err
				}
				if k.ReplyRequested {
					if err := status(); err != nil {
						return err
					}
					next = time.Now().Add(statusInterval)
				}
				select { // a marker; dropped when the applier is behind
				case msgs <- walMsg{walEnd: k.ServerWALEnd, keepalive: true}:
				default:
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return err
				}
				// The message buffer is the connection's: copy it out.
				if err := deliver(walMsg{data: append([]byte(nil), x.WALData...), walEnd: x.ServerWALEnd}); err != nil {
					return err
				}
			}
		}
	}
}

// pgState is the applier's view of the pgoutput stream.
type pgState struct {
	a    *applier
	rels map[uint32]*tableState
	// pos is the stored position; walEnd the newest the source reported.
	pos, walEnd pglogrepl.LSN
	inTxn       bool
	// skip: the open transaction is already in the lake.
	skip     bool
	txnFinal pglogrepl.LSN
}

func (s *pgState) handle(ctx context.Context, data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("decode pgoutput message: %w", err)
	}
	a := s.a
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		s.inTxn = true
		s.txnFinal = m.FinalLSN
		s.skip = m.FinalLSN < s.pos
	case *pglogrepl.CommitMessage:
		s.inTxn = false
		if !s.skip {
			a.batch.commitTxn(m.TransactionEndLSN.String(), m.CommitTime)
		}
	case *pglogrepl.RelationMessage:
		return s.relation(ctx, m)
	case *pglogrepl.InsertMessage:
		if ts := s.target(m.RelationID); ts != nil {
			return s.change(ctx, ts, opInsert, tupleValues(m.Tuple))
		}
	case *pglogrepl.UpdateMessage:
		ts := s.target(m.RelationID)
		if ts == nil {
			return nil
		}
		vals := tupleValues(m.NewTuple)
		if m.OldTuple != nil {
			old := tupleValues(m.OldTuple)
			if !sameKey(ts, old, vals) {
				// The key changed: the old key's row is gone.
				if err := s.change(ctx, ts, opDelete, keyOnly(ts, old)); err != nil {
					return err
				}
				return s.change(ctx, ts, opInsert, vals)
			}
		}
		return s.change(ctx, ts, opUpdate, vals)
	case *pglogrepl.DeleteMessage:
		if ts := s.target(m.RelationID); ts != nil {
			return s.change(ctx, ts, opDelete, keyOnly(ts, tupleValues(m.OldTuple)))
		}
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if ts := s.target(id); ts != nil {
				a.batch.truncate(ctx, ts)
			}
		}
	}
	return nil
}

// target is the table a change of relation id goes to; nil when the
// change is skipped (already applied, the table stopped, or in its copy).
func (s *pgState) target(id uint32) *tableState {
	if s.skip {
		return nil
	}
	ts := s.rels[id]
	if ts == nil || ts.failed || ts.t == nil {
		return nil
	}
	if ts.syncedAt != "" {
		if at, err := pglogrepl.ParseLSN(ts.syncedAt); err == nil && s.txnFinal < at {
			return nil
		}
	}
	return ts
}

func (s *pgState) change(ctx context.Context, ts *tableState, op string, vals []value) error {
	if err := s.a.batch.add(ctx, ts, op, vals); err != nil {
		return s.a.tableError(ctx, ts, err)
	}
	return nil
}

// relation follows a Relation message: the table's columns now. A table
// the subscription does not know yet (a new table of a FOR ALL TABLES
// publication) joins it: its lake table is created and its changes apply
// from here on.
func (s *pgState) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	a := s.a
	source := m.Namespace + "." + m.RelationName
	cols := make([]Column, len(m.Columns))
	for i, c := range m.Columns {
		cols[i] = Column{Name: c.Name, TypeOID: c.DataType, TypeMod: c.TypeModifier}
	}
	ts := a.tables[source]
	if ts == nil || ts.t == nil {
		if s.skip {
			return nil
		}
		// A table new to the subscription: register it and start the run
		// over, which copies it (pgSyncTables) before streaming again.
		row := catalog.SubscriptionTable{SourceTable: source, Namespace: a.sub.TargetSchema, TableName: m.RelationName}
		if err := checkTargetNames(a.knownSources(source)); err != nil {
			return a.ignoreTable(ctx, m.RelationID, s, source, err)
		}
		if _, err := a.env.Catalog.AddSubscriptionTable(ctx, a.sub.Name, row); err != nil {
			if sqlerr.Code(err) == sqlerr.DuplicateObject {
				return a.ignoreTable(ctx, m.RelationID, s, source, err)
			}
			return err
		}
		return errResync
	}
	s.rels[m.RelationID] = ts
	if ts.failed {
		return nil
	}
	// pgoutput marks the replica identity, which may be every column
	// (REPLICA IDENTITY FULL): the key is the one the table was created with.
	changed := len(cols) != len(ts.cols)
	for i := range cols {
		found := false
		for _, o := range ts.cols {
			if o.Name == cols[i].Name {
				cols[i].Key, cols[i].Num, found = o.Key, o.Num, true
			}
		}
		changed = changed || !found
	}
	if changed {
		// Columns came or went: their numbers at the source tell a rename
		// from a drop and an add.
		if err := a.numberColumns(ctx, m.RelationID, cols); err != nil {
			return err
		}
	}
	nt, err := evolve(ts.t, ts.cols, cols)
	if err != nil {
		return a.tableError(ctx, ts, err)
	}
	ts.cols = cols
	if nt != nil {
		return a.batch.alter(ctx, ts, nt)
	}
	return nil
}

// errResync ends a run so that the next one copies the tables that joined
// the subscription.
var errResync = errors.New("cdc: new tables to copy")

// ignoreTable leaves a new source table out (its lake table would clash
// with another table): its changes are skipped, the others go on.
func (a *applier) ignoreTable(ctx context.Context, id uint32, s *pgState, source string, cause error) error {
	a.env.logger().Warn("subscription skips a new source table", "subscription", a.sub.Name, "table", source, "error", cause)
	ts := &tableState{source: source, failed: true}
	a.tables[source] = ts
	s.rels[id] = ts
	return nil
}

// knownSources are the source tables the subscription knows plus one.
func (a *applier) knownSources(extra string) []sourceTable {
	var out []sourceTable
	for k := range a.tables {
		out = append(out, splitSource(k))
	}
	return append(out, splitSource(extra))
}

func splitSource(k string) sourceTable {
	for i := 0; i < len(k); i++ {
		if k[i] == '.' {
			return sourceTable{Schema: k[:i], Name: k[i+1:]}
		}
	}
	return sourceTable{Name: k}
}

// numberColumns sets the source's column numbers of cols (table oid) as
// the source's catalog has them now.
func (a *applier) numberColumns(ctx context.Context, oid uint32, cols []Column) error {
	nc, err := connectPG(ctx, a.sub.Connection)
	if err != nil {
		return err
	}
	defer nc.Close(context.WithoutCancel(ctx))
	current, err := tableColumns(ctx, nc, oid)
	if err != nil {
		return err
	}
	for i := range cols {
		for _, c := range current {
			if c.Name == cols[i].Name {
				cols[i].Num = c.Num
			}
		}
	}
	return nil
}

func tupleValues(t *pglogrepl.TupleData) []value {
	if t == nil {
		return nil
	}
	vals := make([]value, len(t.Columns))
	for i, c := range t.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeText:
			vals[i] = value{kind: valText, data: c.Data}
		case pglogrepl.TupleDataTypeToast:
			vals[i] = value{kind: valUnchanged}
		default:
			vals[i] = value{kind: valNull}
		}
	}
	return vals
}

// sameKey reports whether two versions of a row have the same key.
func sameKey(ts *tableState, a, b []value) bool {
	if len(a) != len(ts.cols) || len(b) != len(ts.cols) {
		return true
	}
	for i, c := range ts.cols {
		if c.Key > 0 && (a[i].kind != b[i].kind || string(a[i].data) != string(b[i].data)) {
			return false
		}
	}
	return true
}

// keyOnly is a row's key columns, the others NULL (a delete).
func keyOnly(ts *tableState, vals []value) []value {
	out := make([]value, len(ts.cols))
	for i, c := range ts.cols {
		out[i] = value{kind: valNull}
		if c.Key > 0 && i < len(vals) {
			out[i] = vals[i]
		}
	}
	return out
}
