package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/listen"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// LISTEN, UNLISTEN, NOTIFY and pg_notify over the server's hub (package
// listen). As in PostgreSQL, NOTIFY, LISTEN and UNLISTEN inside a
// transaction block (explicit or implicit) take effect at COMMIT, in order,
// and ROLLBACK drops them (ROLLBACK TO those after its savepoint);
// notifications reach the client between transactions
// (pgwire.SessionNotifications).

// pendingNotify is a NOTIFY of the open block.
type pendingNotify struct{ channel, payload string }

// pendingListen is a LISTEN (listen true) or UNLISTEN of the open block;
// an empty channel is UNLISTEN *.
type pendingListen struct {
	channel string
	listen  bool
}

// notifyPayloadMax is PostgreSQL's limit on a payload (bytes, exclusive).
const notifyPayloadMax = 8000

// listenReadyWait bounds how long LISTEN lakesoul_commits waits for the
// catalog listener (a catalog that does not answer does not block it).
const listenReadyWait = 10 * time.Second

// WatchNotifications implements pgwire.SessionNotifications: the session's
// notifications wait in its listener's queue (bounded, listen/queue.go).
func (s *Session) WatchNotifications(wake func()) {
	s.listener = s.e.listen.NewListener(s.user, s.pid, wake)
}

// TakeNotifications implements pgwire.SessionNotifications.
func (s *Session) TakeNotifications(maxBytes int) []pgwire.Notification {
	if s.listener == nil {
		return nil
	}
	q := s.listener.Take(maxBytes)
	out := make([]pgwire.Notification, len(q))
	for i, n := range q {
		out[i] = pgwire.Notification{PID: n.PID, Channel: n.Channel, Payload: n.Payload}
	}
	return out
}

// checkChannel validates a channel name as PostgreSQL does.
func checkChannel(channel string) error {
	switch {
	case channel == "":
		return sqlerr.New(sqlerr.InvalidParameterValue, "channel name cannot be empty")
	case len(channel) >= 64:
		return sqlerr.New(sqlerr.InvalidParameterValue, "channel name too long")
	}
	return nil
}

func (s *Session) planListen(n *pg_query.ListenStmt) (pgwire.Statement, error) {
	return &funcStmt{tag: "LISTEN", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if s.listener == nil {
			return "", nil, sqlerr.Unsupported("LISTEN on this connection", "LISTEN over the PostgreSQL protocol")
		}
		if err := checkChannel(n.Conditionname); err != nil {
			return "", nil, err
		}
		if s.inBlock {
			s.blockListens = append(s.blockListens, pendingListen{channel: n.Conditionname, listen: true})
			return "LISTEN", nil, nil
		}
		return "LISTEN", nil, s.listenNow(ctx, n.Conditionname)
	}}, nil
}

// listenNow starts listening on channel.
func (s *Session) listenNow(ctx context.Context, channel string) error {
	if ready, failed := s.listener.Listen(channel); ready != nil {
		// The server's first LISTEN lakesoul_commits waits until
		// every committer announces (at most a few seconds). A server
		// whose commit listener cannot reach the catalog says so
		// rather than listen on a channel nothing arrives on.
		select {
		case <-ready:
		case <-failed:
			err := s.e.listen.Failure()
			if err == nil {
				break // connected again meanwhile
			}
			s.listener.Unlisten(channel)
			e := sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "LISTEN %s: the server's commit listener has no catalog connection", channel)
			e.Hint = "the server retries; LISTEN again later (lakesoul.changes catches up on what was committed meanwhile)"
			s.e.log.Warn("LISTEN lakesoul_commits refused: no catalog listener", "err", err)
			return e
		case <-ctx.Done():
			return sqlerr.ErrCanceled
		case <-time.After(listenReadyWait):
		}
	}
	return nil
}

func (s *Session) planUnlisten(n *pg_query.UnlistenStmt) (pgwire.Statement, error) {
	return &funcStmt{tag: "UNLISTEN", run: func(context.Context, []any) (string, [][]any, error) {
		if s.inBlock {
			s.blockListens = append(s.blockListens, pendingListen{channel: n.Conditionname})
		} else {
			s.unlistenNow(n.Conditionname)
		}
		return "UNLISTEN", nil, nil
	}}, nil
}

// unlistenNow stops listening on channel ("": on every channel).
func (s *Session) unlistenNow(channel string) {
	switch {
	case s.listener == nil:
	case channel == "":
		s.listener.UnlistenAll()
	default:
		s.listener.Unlisten(channel)
	}
}

// applyBlockListens carries out a committed block's LISTENs and UNLISTENs.
// The block has committed: a LISTEN that fails now (the server's commit
// listener has no catalog connection) is a WARNING, not an error.
func (s *Session) applyBlockListens(ctx context.Context, ops []pendingListen) {
	for _, op := range ops {
		if !op.listen {
			s.unlistenNow(op.channel)
			continue
		}
		if err := s.listenNow(ctx, op.channel); err != nil {
			_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING", Code: sqlerr.Code(err), Message: err.Error()})
		}
	}
}

func (s *Session) planNotify(n *pg_query.NotifyStmt) (pgwire.Statement, error) {
	return &funcStmt{tag: "NOTIFY", run: func(context.Context, []any) (string, [][]any, error) {
		return "NOTIFY", nil, s.notify(n.Conditionname, n.Payload)
	}}, nil
}

// notify sends or, inside a block, queues a NOTIFY of a user channel.
func (s *Session) notify(channel, payload string) error {
	if err := checkChannel(channel); err != nil {
		return err
	}
	if listen.Reserved(channel) {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege,
			Message: fmt.Sprintf("permission denied to notify on channel %q", channel),
			Hint:    fmt.Sprintf("channels starting with %q are the server's; LISTEN %s follows commits", listen.ReservedPrefix, listen.CommitsChannel)}
	}
	if len(payload) >= notifyPayloadMax {
		return sqlerr.New(sqlerr.InvalidParameterValue, "payload string too long")
	}
	if s.inBlock {
		s.blockNotifies = append(s.blockNotifies, pendingNotify{channel, payload})
		return nil
	}
	return s.e.listen.Notify(s.pid, listen.Note{Channel: channel, Payload: payload}) // 54000 when the queues are full
}

// prepareBlockNotifies charges the NOTIFYs of the block about to commit to
// the queues of the sessions that will listen on their channels — this
// session too when the block's own LISTENs make it one — or fails with
// 54000 when they do not fit (the COMMIT fails, as PostgreSQL's does). The
// caller sends them after the commit and its LISTENs, or cancels.
func (s *Session) prepareBlockNotifies() (*listen.Pending, error) {
	notes := make([]listen.Note, len(s.blockNotifies))
	for i, n := range s.blockNotifies {
		notes[i] = listen.Note{Channel: n.channel, Payload: n.payload}
	}
	var after map[string]bool // this session's channels after the block's LISTENs
	if s.listener != nil && len(s.blockListens) > 0 {
		after = map[string]bool{}
		for _, c := range s.listener.Channels() {
			after[c] = true
		}
		for _, op := range s.blockListens {
			switch {
			case op.listen:
				after[op.channel] = true
			case op.channel == "":
				clear(after)
			default:
				delete(after, op.channel)
			}
		}
	}
	return s.e.listen.Prepare(s.pid, notes, s.listener, after)
}

// closeListener ends the session's LISTENs and drops its queue, for good:
// the session ends.
func (s *Session) closeListener() {
	if s.listener != nil {
		s.listener.Close()
	}
}

// fnNotify is pg_notify(channel, payload).
const fnNotify = "pg_notify"

// planPgNotify plans SELECT pg_notify(channel, payload) — the only form
// answered (one call as the whole target list, no FROM; arguments constants
// or parameters). ok is false when the statement does not call pg_notify;
// a call in any other form is 0A000.
func (s *Session) planPgNotify(stmt *pg_query.Node) (st pgwire.Statement, ok bool, err error) {
	found := false
	walk(stmt, func(n *pg_query.Node) {
		if fc := n.GetFuncCall(); fc != nil && isPgNotify(fc) {
			found = true
		}
	})
	if !found {
		return nil, false, nil
	}
	unsupported := sqlerr.Unsupported("pg_notify inside a query", "SELECT pg_notify('channel', 'payload') alone, or NOTIFY channel, 'payload'")
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.TargetList) != 1 || sel.WithClause != nil {
		return nil, true, unsupported
	}
	rt := sel.TargetList[0].GetResTarget()
	fc := rt.GetVal().GetFuncCall()
	if fc == nil || !isPgNotify(fc) || len(fc.Args) != 2 {
		return nil, true, unsupported
	}
	var params []uint32
	args := make([]func([]any) (string, bool), 2)
	for i, a := range fc.Args {
		if tc := a.GetTypeCast(); tc != nil {
			a = tc.Arg
		}
		switch {
		case a.GetParamRef() != nil:
			num := int(a.GetParamRef().Number)
			for len(params) < num {
				params = append(params, textOID)
			}
			args[i] = func(p []any) (string, bool) {
				v, ok := p[num-1].(string)
				return v, ok
			}
		case a.GetAConst() != nil:
			c := a.GetAConst()
			v, isNull := "", c.Isnull
			if sv := c.GetSval(); sv != nil {
				v = sv.Sval
			} else if !isNull {
				return nil, true, unsupported
			}
			args[i] = func([]any) (string, bool) { return v, !isNull }
		default:
			return nil, true, unsupported
		}
	}
	name := rt.Name
	if name == "" {
		name = fnNotify
	}
	cols := []pgwire.Column{{Name: name, TypeOID: voidOID, TypeSize: 4, TypeModifier: -1}}
	return &funcStmt{tag: "SELECT", cols: cols, params: params, run: func(_ context.Context, p []any) (string, [][]any, error) {
		channel, _ := args[0](p)
		payload, _ := args[1](p)
		if err := s.notify(channel, payload); err != nil {
			return "", nil, err
		}
		return "SELECT 1", [][]any{{""}}, nil
	}}, true, nil
}

// fnListeningChannels is pg_listening_channels().
const fnListeningChannels = "pg_listening_channels"

// planListeningChannels plans SELECT pg_listening_channels() and SELECT *
// FROM pg_listening_channels() [AS a]: the session's channels, answered by
// the server (the catalog's sessions listen on nothing of the client's).
// ok is false when the statement does not call it; another form is 0A000.
func (s *Session) planListeningChannels(stmt *pg_query.Node) (st pgwire.Statement, ok bool, err error) {
	found := false
	walk(stmt, func(n *pg_query.Node) {
		if fc := n.GetFuncCall(); fc != nil && isCatalogFunc(fc, fnListeningChannels) {
			found = true
		}
	})
	if !found {
		return nil, false, nil
	}
	unsupported := sqlerr.Unsupported("pg_listening_channels inside a query",
		"SELECT pg_listening_channels() or SELECT * FROM pg_listening_channels() alone")
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WhereClause != nil || len(sel.TargetList) != 1 ||
		sel.WithClause != nil || len(sel.GroupClause) > 0 || len(sel.SortClause) > 0 || sel.LimitCount != nil {
		return nil, true, unsupported
	}
	rt := sel.TargetList[0].GetResTarget()
	name := rt.Name
	switch len(sel.FromClause) {
	case 0:
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || !isCatalogFunc(fc, fnListeningChannels) || len(fc.Args) > 0 {
			return nil, true, unsupported
		}
	case 1:
		rf := sel.FromClause[0].GetRangeFunction()
		if rf == nil || len(rf.Functions) != 1 || rf.Ordinality {
			return nil, true, unsupported
		}
		items := rf.Functions[0].GetList().GetItems()
		if len(items) == 0 || items[0].GetFuncCall() == nil || !isCatalogFunc(items[0].GetFuncCall(), fnListeningChannels) ||
			len(items[0].GetFuncCall().Args) > 0 {
			return nil, true, unsupported
		}
		alias := fnListeningChannels
		if rf.Alias != nil {
			alias = rf.Alias.Aliasname
			if cols := rf.Alias.Colnames; len(cols) == 1 {
				alias = cols[0].GetString_().GetSval()
			}
		}
		cr := rt.GetVal().GetColumnRef()
		if cr == nil {
			return nil, true, unsupported
		}
		if name == "" {
			name = alias
		}
	default:
		return nil, true, unsupported
	}
	if name == "" {
		name = fnListeningChannels
	}
	cols := []pgwire.Column{{Name: name, TypeOID: textOID, TypeSize: -1, TypeModifier: -1}}
	return &funcStmt{tag: "SELECT", cols: cols, run: func(context.Context, []any) (string, [][]any, error) {
		var chans []string
		if s.listener != nil {
			chans = s.listener.Channels()
		}
		sort.Strings(chans)
		rows := make([][]any, len(chans))
		for i, c := range chans {
			rows[i] = []any{c}
		}
		return fmt.Sprintf("SELECT %d", len(rows)), rows, nil
	}}, true, nil
}

// isCatalogFunc reports whether fc calls pg_catalog function name.
func isCatalogFunc(fc *pg_query.FuncCall, name string) bool {
	parts, ok := funcNameParts(fc)
	return ok && parts[len(parts)-1] == name && (len(parts) == 1 || len(parts) == 2 && parts[0] == "pg_catalog")
}

func isPgNotify(fc *pg_query.FuncCall) bool {
	name, ok := funcNameParts(fc)
	return ok && name[len(name)-1] == fnNotify && (len(name) == 1 || len(name) == 2 && name[0] == "pg_catalog")
}

// OIDs of pg_notify's argument and result types.
const (
	textOID = 25
	voidOID = 2278
)
