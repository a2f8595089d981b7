package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Prepared statements are the connection's (pgwire keeps them); DEALLOCATE
// and DISCARD ALL reach them through the handle pgwire gives the session.

var _ pgwire.PreparedStatementUser = (*Session)(nil)

// UsePreparedStatements implements pgwire.PreparedStatementUser.
func (s *Session) UsePreparedStatements(p pgwire.PreparedStatements) { s.prepared = p }

// planDeallocate plans DEALLOCATE [PREPARE] name | ALL. An unknown name is
// 26000, as in PostgreSQL.
func (s *Session) planDeallocate(n *pg_query.DeallocateStmt) (pgwire.Statement, error) {
	return &funcStmt{tag: "DEALLOCATE", run: func(context.Context, []any) (string, [][]any, error) {
		if n.Isall {
			if s.prepared != nil {
				s.prepared.DeallocateAll()
			}
			s.sqlPrepared = nil
			return "DEALLOCATE ALL", nil, nil
		}
		_, mine := s.sqlPrepared[n.Name]
		delete(s.sqlPrepared, n.Name)
		if s.prepared == nil && !mine || s.prepared != nil && !s.prepared.Deallocate(n.Name) {
			return "", nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", n.Name)
		}
		return "DEALLOCATE", nil, nil
	}}, nil
}

// planDiscard plans DISCARD. DISCARD TEMP drops the session's temporary
// tables; DISCARD ALL does too, ends its LISTENs, closes every cursor,
// resets the settings and drops the prepared statements, and like
// PostgreSQL refuses to run inside a transaction block; the session caches
// no plans or sequences, so the other forms have nothing to discard.
func (s *Session) planDiscard(n *pg_query.DiscardStmt) (pgwire.Statement, error) {
	tag := map[pg_query.DiscardMode]string{
		pg_query.DiscardMode_DISCARD_ALL: "DISCARD ALL", pg_query.DiscardMode_DISCARD_PLANS: "DISCARD PLANS",
		pg_query.DiscardMode_DISCARD_SEQUENCES: "DISCARD SEQUENCES", pg_query.DiscardMode_DISCARD_TEMP: "DISCARD TEMP",
	}[n.Target]
	if tag == "" {
		return nil, sqlerr.Unsupported("this DISCARD", "DISCARD ALL | PLANS | SEQUENCES | TEMP")
	}
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if n.Target == pg_query.DiscardMode_DISCARD_TEMP {
			if err := s.discardTemps(ctx); err != nil { // temptable.go
				return "", nil, err
			}
			s.changeTempFuncs(func(m map[string]*tempFunction) { clear(m) }) // tempfunc.go
		}
		if n.Target != pg_query.DiscardMode_DISCARD_ALL {
			return tag, nil, nil
		}
		if err := s.preventTransactionBlock(ctx, "DISCARD ALL"); err != nil {
			return "", nil, err
		}
		if err := s.closeTemps(); err != nil {
			return "", nil, err
		}
		s.tempFuncs = nil
		s.unlistenNow("") // UNLISTEN *, as PostgreSQL's DISCARD ALL
		s.closeCursors(true)
		s.settings = s.defaultSettings(nil)
		if s.prepared != nil {
			s.prepared.DeallocateAll()
		}
		s.sqlPrepared = nil
		return tag, nil, nil
	}}, nil
}

// sqlPrepared is a statement SQL PREPARE made: its parse tree with $n, and
// the declared parameter types. EXECUTE plans the tree with the arguments
// in place of $n (cast to the declared types), so arguments are read as
// PostgreSQL reads constants in a statement.
//
// cols is the result PREPARE described: an EXECUTE whose plan would return
// other columns (after DDL) is PostgreSQL's 0A000 "cached plan must not
// change result type" (replan.go).
type sqlPrepared struct {
	node  *pg_query.Node
	types []*pg_query.TypeName
	cols  []pgwire.Column
}

// catalogParamTypes are the parameter types of catalog queries that lake
// columns do not have (pg_dump prepares its per-object queries with oid
// parameters); a catalog query gets them as PostgreSQL's, a lake query fails
// to plan with them.
var catalogParamTypes = map[string]uint32{"oid": 26, "regclass": 2205, "regtype": 2206, "regproc": 24, "name": 19}

// planPrepare plans PREPARE name [(types)] AS statement: the statement is
// planned now (its errors are PREPARE's) and joins the connection's prepared
// statements, where EXECUTE, DEALLOCATE and the extended protocol find it.
func (s *Session) planPrepare(ctx context.Context, n *pg_query.PrepareStmt) (pgwire.Statement, error) {
	var oids []uint32
	var types []*pg_query.TypeName
	for _, a := range n.Argtypes {
		tn := a.GetTypeName()
		t := typeNameType(tn)
		if !t.known() {
			oid, ok := catalogParamTypes[strings.ToLower(typeNameString(tn))]
			if !ok || len(tn.ArrayBounds) > 0 {
				return nil, sqlerr.New(sqlerr.UndefinedObject, "type %q is not supported for a prepared statement parameter", typeNameString(tn))
			}
			t.oid = oid
		}
		oids = append(oids, t.oid)
		types = append(types, tn)
	}
	inner := proto.Clone(n.Query).(*pg_query.Node)
	st, err := s.plan(ctx, n.Query, oids)
	if err != nil {
		return nil, err
	}
	text, err := deparseNode(inner)
	if err != nil {
		return nil, err
	}
	cols, err := st.Describe(ctx)
	if err != nil {
		return nil, err
	}
	tracked := &trackedStmt{Statement: st, s: s, writes: statementWrites(inner)}
	return &funcStmt{tag: "PREPARE", run: func(context.Context, []any) (string, [][]any, error) {
		_, dup := s.sqlPrepared[n.Name]
		if dup || s.prepared != nil && !s.prepared.Add(n.Name, text, tracked) {
			return "", nil, sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement %q already exists", n.Name)
		}
		if s.sqlPrepared == nil {
			s.sqlPrepared = map[string]sqlPrepared{}
		}
		s.sqlPrepared[n.Name] = sqlPrepared{node: inner, types: types, cols: cols}
		return "PREPARE", nil, nil
	}}, nil
}

// planExecute plans EXECUTE name [(args)] of a statement SQL PREPARE made.
func (s *Session) planExecute(ctx context.Context, n *pg_query.ExecuteStmt) (pgwire.Statement, error) {
	p, ok := s.sqlPrepared[n.Name]
	if ok && s.prepared != nil {
		_, ok = s.prepared.Lookup(n.Name) // dropped by the protocol's Close?
	}
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", n.Name)
	}
	refs := paramRefs(p.node)
	want := max(len(p.types), len(refs))
	for k := range refs {
		want = max(want, int(k))
	}
	if len(n.Params) != want {
		e := sqlerr.New(sqlerr.SyntaxError, "wrong number of parameters for prepared statement %q", n.Name)
		e.Detail = fmt.Sprintf("Expected %d parameters but got %d.", want, len(n.Params))
		return nil, e
	}
	tree := proto.Clone(p.node).(*pg_query.Node)
	for k, nodes := range paramRefs(tree) {
		for _, ref := range nodes {
			arg := proto.Clone(n.Params[k-1]).(*pg_query.Node)
			if int(k) <= len(p.types) {
				arg = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
					Arg: arg, TypeName: proto.Clone(p.types[k-1]).(*pg_query.TypeName), Location: -1}}}
			}
			ref.Node = arg.Node
		}
	}
	writes := statementWrites(tree)
	st, err := s.plan(ctx, tree, nil)
	if err != nil {
		return nil, err
	}
	cols, err := st.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if !sameResultType(p.cols, cols) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	return &trackedStmt{Statement: st, s: s, writes: writes}, nil
}
