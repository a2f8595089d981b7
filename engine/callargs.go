package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Arguments of calls the server makes on a user's behalf.
//
// CALL lakesoul.rollback('s.t', TIMESTAMPTZ '…'), lakesoul.snapshot(…) in a
// FROM clause and the administration functions take argument expressions
// the user wrote, but the call itself is a statement the server writes
// (catalogtx.go): each argument becomes one of its bind parameters.
//   - A constant ('s.t', 3, true, NULL) is passed as its text with the type
//     PostgreSQL resolves for the parameter, as it would for the literal.
//   - A client parameter ($n) that is a whole argument is passed through.
//   - Any other expression is evaluated first, in a read-only transaction on
//     the user's own login, and passed with the type it evaluated to.
// So the only user-written SQL text that runs is evaluated with the user's
// rights and nothing else.

type argKind int

const (
	argConst argKind = iota
	argClientParam
	argEval
)

// argSource is where one server parameter's value comes from.
type argSource struct {
	kind  argKind
	text  *string // argConst: the constant's text, nil for NULL
	index int     // argClientParam: client parameter (0-based); argEval: column of eval
}

// boundArgs are a call's arguments as parameters $first… of a server statement.
type boundArgs struct {
	// list is the argument list to put into the statement: "$2, version => $3".
	list string
	// oids are the parameter types, first to last (0: PostgreSQL resolves it;
	// setResolved replaces them with what it resolved).
	oids []uint32
	srcs []argSource
	// names are the arguments' names ("" for a positional one).
	names []string
	// eval selects the expressions to evaluate ("" when there are none).
	eval string
	// clientParams is the number of client parameters ($1…$n) referenced.
	clientParams int
}

// bindArgs binds args (a FuncCall's arguments) as parameters numbered from
// first. clientOIDs are the types the client declared for its parameters.
func (s *Session) bindArgs(ctx context.Context, args []*pg_query.Node, first int, clientOIDs []uint32) (*boundArgs, error) {
	b := &boundArgs{}
	var evals []string
	var evalAt []int // server parameter index of each evaluated expression
	var list []string
	for _, a := range args {
		name := ""
		val := a
		if na := a.GetNamedArgExpr(); na != nil {
			name, val = na.Name, na.Arg
		}
		placeholder := "$" + strconv.Itoa(first+len(b.srcs))
		if name != "" {
			placeholder = pgx.Identifier{name}.Sanitize() + " => " + placeholder
		}
		list = append(list, placeholder)
		b.names = append(b.names, name)
		switch {
		case val.GetAConst() != nil && val.GetAConst().GetBsval() == nil: // bit strings: evaluated
			text, isNull := constText(val.GetAConst())
			src := argSource{kind: argConst}
			if !isNull {
				src.text = &text
			}
			b.srcs = append(b.srcs, src)
			b.oids = append(b.oids, 0)
		case val.GetParamRef() != nil:
			n := int(val.GetParamRef().Number)
			if n < 1 {
				return nil, sqlerr.New(sqlerr.SyntaxError, "invalid parameter $%d", n)
			}
			b.clientParams = max(b.clientParams, n)
			var oid uint32
			if n <= len(clientOIDs) {
				oid = clientOIDs[n-1]
			}
			b.srcs = append(b.srcs, argSource{kind: argClientParam, index: n - 1})
			b.oids = append(b.oids, oid)
		default:
			hasParam := false
			walk(val, func(n *pg_query.Node) { hasParam = hasParam || n.GetParamRef() != nil })
			if hasParam {
				return nil, sqlerr.Unsupported("parameters inside argument expressions", "a parameter as a whole argument ($1), or constants")
			}
			text, err := deparsePGExpr(val)
			if err != nil {
				return nil, err
			}
			b.srcs = append(b.srcs, argSource{kind: argEval, index: len(evals)})
			b.oids = append(b.oids, 0)
			evalAt = append(evalAt, len(b.srcs)-1)
			evals = append(evals, "("+text+")")
		}
	}
	b.list = strings.Join(list, ", ")
	if len(evals) == 0 {
		return b, nil
	}
	b.eval = "SELECT " + strings.Join(evals, ", ")
	err := s.withUserTx(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", b.eval, nil)
		if err != nil {
			return err
		}
		for i, f := range sd.Fields {
			b.oids[evalAt[i]] = f.DataTypeOID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// setResolved records the parameter types PostgreSQL resolved when the
// server statement was prepared (resolved[0] is parameter first).
func (b *boundArgs) setResolved(resolved []uint32) {
	copy(b.oids, resolved)
}

// clientParamOIDs returns the types of the client's parameters: those of the
// server parameters they feed (text for one referenced nowhere).
func (b *boundArgs) clientParamOIDs() []uint32 {
	out := make([]uint32, b.clientParams)
	for i := range out {
		out[i] = pgtype.TextOID
	}
	for i, src := range b.srcs {
		if src.kind == argClientParam {
			out[src.index] = b.oids[i]
		}
	}
	return out
}

// argValues returns the parameters' values in text format: constants as
// written, client parameters encoded for their server type, expressions as
// the user's login evaluates them now.
func (s *Session) argValues(ctx context.Context, b *boundArgs, clientArgs []any) ([][]byte, error) {
	if len(clientArgs) < b.clientParams {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(clientArgs), b.clientParams)
	}
	var evaluated [][]byte
	if b.eval != "" {
		err := s.withUserTx(ctx, func(tx pgx.Tx) error {
			rr := tx.Conn().PgConn().ExecParams(ctx, b.eval, nil, nil, nil, nil)
			for rr.NextRow() {
				for _, v := range rr.Values() {
					evaluated = append(evaluated, bytes.Clone(v)) // nil stays NULL, '' stays ''
				}
			}
			_, err := rr.Close()
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	m := pgtype.NewMap()
	out := make([][]byte, len(b.srcs))
	for i, src := range b.srcs {
		switch src.kind {
		case argConst:
			if src.text != nil {
				out[i] = []byte(*src.text)
			}
		case argClientParam:
			a := clientArgs[src.index]
			if a == nil {
				continue
			}
			v, err := m.Encode(b.oids[i], pgtype.TextFormatCode, a, nil)
			if err != nil {
				return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err, fmt.Sprintf("parameter $%d", src.index+1))
			}
			out[i] = v
		case argEval:
			if src.index < len(evaluated) {
				out[i] = evaluated[src.index]
			}
		}
	}
	return out, nil
}

// constText returns the text of a constant as PostgreSQL's literal input
// would read it, and whether it is NULL.
func constText(c *pg_query.A_Const) (string, bool) {
	switch {
	case c.Isnull:
		return "", true
	case c.GetSval() != nil:
		return c.GetSval().Sval, false
	case c.GetIval() != nil:
		return strconv.FormatInt(int64(c.GetIval().Ival), 10), false
	case c.GetFval() != nil:
		return c.GetFval().Fval, false
	case c.GetBoolval() != nil:
		return strconv.FormatBool(c.GetBoolval().Boolval), false
	}
	return "", true
}

// deparsePGExpr renders one expression as PostgreSQL text (deparseExpr
// spells it for DuckDB).
func deparsePGExpr(n *pg_query.Node) (string, error) {
	text, err := pg_query.Deparse(singleStatementTree(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
		TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: n}}}}}}}))
	if err != nil {
		return "", fmt.Errorf("deparse argument: %w", err)
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}
