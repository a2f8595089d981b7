package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Plans shared by texts that differ in literals. Clients of the simple
// protocol (psql, pgbench -M simple, ORMs that inline values) send
// `SELECT v FROM t WHERE id = 42`, then `… id = 43`: each text is new to
// the exact-text cache (plancache.go), so each would be parsed, bound and
// prepared in DuckDB again. A session therefore also keeps plans by the
// text's token shape — its tokens with every literal replaced by a marker
// of its token kind — planned with some of the literals as parameters.
//
// A literal becomes a parameter only where that cannot change what the
// statement means: a bare constant compared (=, <>, <, <=, >, >=, IN, NOT
// IN) with a column of the statement's one table, of a type whose
// comparison with that column PostgreSQL resolves the same for the literal
// and for a parameter of the literal's own type —
//   - an integer literal (int4, or int8 when it needs 64 bits) against an
//     int2, int4 or int8 column;
//   - a plain string literal ('…', no escapes) against a text or varchar
//     column (the unknown literal and a text parameter both compare as
//     text; bpchar's padding rules are left alone).
//
// Every other literal — typed (DATE '…', '…'::t), negated, in the select
// list, LIMIT, ORDER BY or a function's arguments, whose type could choose
// an overload — stays part of the key: a text reuses the plan only when
// those literals are spelled exactly as when it was planned. The shape
// keeps every other token as written, so an IN list of another length, a
// different operator or name is another shape.
//
// A shape's plan is reused as a prepared statement's plan is (replan.go):
// while the session's plan generation — DDL of this server, the session's
// own statements that may change what a name means (temporary tables,
// SET search_path, SET ROLE, ROLLBACK) — is the one it was planned at; SET
// and RESET drop it, as every kept plan. Each execution checks its table
// as a prepared statement's does (checkPlanTables, checkPlanFiles) and
// takes its snapshot as the session's role, so the catalog's row-level
// security decides what it reads. Unlike the exact-text cache, the name is
// not looked up again for each text (a catalog round trip, the cost that
// dominated a reused point select): a table another server drops and
// creates again under the same name is met as a prepared statement meets
// it.
//
// The literals of a text are found by PostgreSQL's own scanner
// (pg_query.Scan); when a shape is first planned, each literal made a
// parameter is checked against the parser's value of the same constant, so
// the values a later text binds are read as PostgreSQL reads them.

// literalKey marks plan-cache entries keyed by token shape.
const literalKey = "\x00literals"

// literalToken is one literal of a scanned text.
type literalToken struct {
	kind  pg_query.Token
	start int32
	raw   string
}

// literalShape is a text's token shape (literal tokens replaced by markers,
// comments dropped) and its literals in order; ok is false for texts with
// parameter references ($1), which the exact-text cache keeps.
func literalShape(text string) (shape string, lits []literalToken, ok bool) {
	res, err := pg_query.Scan(text)
	if err != nil {
		return "", nil, false
	}
	var b strings.Builder
	b.Grow(len(text) + 16)
	for _, tok := range res.Tokens {
		raw := text[tok.Start:tok.End]
		switch tok.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			continue
		case pg_query.Token_PARAM:
			return "", nil, false
		case pg_query.Token_ICONST, pg_query.Token_FCONST, pg_query.Token_SCONST, pg_query.Token_USCONST,
			pg_query.Token_BCONST, pg_query.Token_XCONST:
			lits = append(lits, literalToken{kind: tok.Token, start: tok.Start, raw: raw})
			b.WriteByte(1)
			b.WriteString(strconv.Itoa(int(tok.Token)))
		default:
			b.WriteString(raw)
		}
		b.WriteByte(0)
	}
	return b.String(), lits, true
}

// literalPlan binds a shape's plan to one text's literals.
type literalPlan struct {
	// param[i] is the parameter number (1-based) literal i is bound to,
	// 0 for a literal kept as written: fixed[i].
	param []int
	fixed []string
	// oids are the parameters' types, by number.
	oids []uint32
	gen  planGen
}

// args reads the values of lits as the plan's parameters; false when a
// kept literal differs or a parameter literal's value is not of its type.
func (lp *literalPlan) args(lits []literalToken) ([]any, bool) {
	if len(lits) != len(lp.param) {
		return nil, false
	}
	args := make([]any, len(lp.oids))
	for i, l := range lits {
		n := lp.param[i]
		if n == 0 {
			if l.raw != lp.fixed[i] {
				return nil, false
			}
			continue
		}
		v, ok := literalValue(l, lp.oids[n-1])
		if !ok {
			return nil, false
		}
		args[n-1] = v
	}
	return args, true
}

// literalValue reads literal l as a value of parameter type oid, in the Go
// type pgwire decodes such a parameter to: int32 (int4) and int64 (int8)
// from decimal digits only, string from a plain quoted string without
// backslashes or continuation lines. Any other spelling is not read (the
// text is then planned as written).
func literalValue(l literalToken, oid uint32) (any, bool) {
	switch oid {
	case schema.OIDInt4, schema.OIDInt8:
		if (l.kind != pg_query.Token_ICONST && l.kind != pg_query.Token_FCONST) || !allDigits(l.raw) {
			return nil, false
		}
		bits := 64
		if oid == schema.OIDInt4 {
			if l.kind != pg_query.Token_ICONST {
				return nil, false
			}
			bits = 32
		} else if l.kind != pg_query.Token_FCONST {
			return nil, false // an integer of 32 bits is int4 to PostgreSQL
		}
		v, err := strconv.ParseInt(l.raw, 10, bits)
		if err != nil {
			return nil, false
		}
		if bits == 32 {
			return int32(v), true
		}
		return v, true
	case schema.OIDText:
		if l.kind != pg_query.Token_SCONST {
			return nil, false
		}
		return plainString(l.raw)
	}
	return nil, false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainString reads '…' with doubled quotes; false for any other form
// (E'…', U&'…', $$…$$, a backslash, strings continued across lines).
func plainString(raw string) (any, bool) {
	if len(raw) < 2 || raw[0] != '\'' || raw[len(raw)-1] != '\'' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	if strings.IndexByte(inner, '\\') >= 0 {
		return nil, false
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c == '\'' {
			if i+1 >= len(inner) || inner[i+1] != '\'' {
				return nil, false
			}
			i++
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// literalParamTypes finds the constants of sel that may become parameters
// (see above), by their location in the text, with the parameter type each
// gets; t is the table of sel's one FROM item, written with qualifier qual
// (its alias, else its name).
func literalParamTypes(sel *pg_query.SelectStmt, t *catalog.Table, qual string) map[int32]paramConst {
	out := map[int32]paramConst{}
	var visit func(n *pg_query.Node)
	visit = func(n *pg_query.Node) {
		if b := n.GetBoolExpr(); b != nil {
			for _, a := range b.Args {
				visit(a)
			}
			return
		}
		e := n.GetAExpr()
		if e == nil || len(e.Name) != 1 || e.Lexpr == nil || e.Rexpr == nil {
			return
		}
		op := e.Name[0].GetString_()
		if op == nil {
			return
		}
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			switch op.Sval {
			case "=", "<>", "<", "<=", ">", ">=":
			default:
				return
			}
			if col, ok := columnOf(t, e.Lexpr, qual); ok {
				constParam(out, col, e.Rexpr)
			} else if col, ok := columnOf(t, e.Rexpr, qual); ok {
				constParam(out, col, e.Lexpr)
			}
		case pg_query.A_Expr_Kind_AEXPR_IN:
			col, ok := columnOf(t, e.Lexpr, qual)
			list := e.Rexpr.GetList()
			if !ok || list == nil {
				return
			}
			for _, item := range list.Items {
				constParam(out, col, item)
			}
		}
	}
	if sel.WhereClause != nil {
		visit(sel.WhereClause)
	}
	return out
}

// paramConst is a constant that becomes a parameter: the parameter's type
// and the constant's value as the parser read it.
type paramConst struct {
	oid   uint32
	value any
}

// columnOf resolves n, a column reference written `col` or `qual.col`, to
// its column of t.
func columnOf(t *catalog.Table, n *pg_query.Node, qual string) (arrow.Field, bool) {
	ref := n.GetColumnRef()
	if ref == nil || len(ref.Fields) == 0 || ref.Fields[len(ref.Fields)-1].GetAStar() != nil {
		return arrow.Field{}, false
	}
	cols, ok := refColumns(t, ref, qual)
	if !ok || len(cols) != 1 {
		return arrow.Field{}, false
	}
	return t.Schema.Field(cols[0]), true
}

// constParam records n as a parameter when it is a bare constant whose
// comparison with column col means the same as a parameter's of its type.
func constParam(out map[int32]paramConst, col arrow.Field, n *pg_query.Node) {
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return
	}
	colOID, _ := schema.PGTypeOf(col)
	switch colOID {
	case schema.OIDInt2, schema.OIDInt4, schema.OIDInt8:
		if iv := c.GetIval(); iv != nil {
			out[c.Location] = paramConst{oid: schema.OIDInt4, value: iv.Ival}
		} else if fv := c.GetFval(); fv != nil && allDigits(fv.Fval) {
			if v, err := strconv.ParseInt(fv.Fval, 10, 64); err == nil {
				out[c.Location] = paramConst{oid: schema.OIDInt8, value: v}
			}
		}
	case schema.OIDText, schema.OIDVarchar:
		if sv := c.GetSval(); sv != nil {
			out[c.Location] = paramConst{oid: schema.OIDText, value: sv.Sval}
		}
	}
}

// maxLiteralText bounds the texts looked up by shape: scanning is cheap,
// but not free, and long texts are rarely repeated.
const maxLiteralText = 8 << 10

// literalStmt is a shape's plan bound to one text's literals; to the
// client it is a statement without parameters, as its text is.
type literalStmt struct {
	q    *duckQuery
	lit  *literalPlan
	args []any
}

func (l *literalStmt) ParamOIDs() []uint32 { return nil }
func (l *literalStmt) Tag() string         { return l.q.Tag() }

func (l *literalStmt) Describe(ctx context.Context) ([]pgwire.Column, error) {
	return l.q.Describe(ctx)
}

func (l *literalStmt) Bind(ctx context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != 0 {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires 0", len(params))
	}
	return l.q.Bind(ctx, l.args)
}

// literalPlanFor returns text as a kept shape's plan bound to its
// literals; nil when there is none to reuse.
func (s *Session) literalPlanFor(text string) pgwire.Statement {
	if s.plans.literals == 0 || len(text) > maxLiteralText {
		return nil
	}
	shape, lits, ok := literalShape(text)
	if !ok {
		return nil
	}
	k := planKey{text: shape, params: literalKey}
	p, ok := s.plans.m[k]
	if !ok {
		return nil
	}
	if p.lit.gen != s.planGen() {
		s.plans.drop(k)
		return nil
	}
	args, ok := p.lit.args(lits)
	if !ok {
		return nil
	}
	return &literalStmt{q: p.q, lit: p.lit, args: args}
}

// planLiterals plans raw, parsed from text at gen, with its comparable
// literals as parameters and keeps the plan by text's shape; false when
// raw has no such literals or the plan cannot be kept (the caller then
// plans raw as written).
func (s *Session) planLiterals(ctx context.Context, text string, raw *pg_query.Node, gen planGen) (pgwire.Statement, bool) {
	sel := raw.GetSelectStmt()
	if sel == nil || sel.WhereClause == nil || len(sel.FromClause) != 1 || sel.WithClause != nil ||
		sel.Op != pg_query.SetOperation_SETOP_NONE || len(text) > maxLiteralText {
		return nil, false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Catalogname != "" {
		return nil, false
	}
	t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
	if err != nil {
		return nil, false
	}
	qual := rv.Relname
	if rv.Alias != nil {
		qual = rv.Alias.Aliasname
	}
	consts := literalParamTypes(sel, t, qual)
	if len(consts) == 0 {
		return nil, false
	}
	shape, lits, ok := literalShape(text)
	if !ok {
		return nil, false
	}
	lp := &literalPlan{param: make([]int, len(lits)), fixed: make([]string, len(lits)), gen: gen}
	var args []any
	var b strings.Builder
	last := 0
	for i, l := range lits {
		c, isParam := consts[l.start]
		if isParam {
			// The scanner's literal is read as the parser read the constant.
			v, ok := literalValue(l, c.oid)
			isParam = ok && v == c.value
		}
		if !isParam {
			lp.fixed[i] = l.raw
			continue
		}
		lp.oids = append(lp.oids, c.oid)
		args = append(args, c.value)
		lp.param[i] = len(lp.oids)
		b.WriteString(text[last:l.start])
		b.WriteString("$" + strconv.Itoa(lp.param[i]))
		last = int(l.start) + len(l.raw)
	}
	if len(lp.oids) == 0 {
		return nil, false
	}
	b.WriteString(text[last:])
	release, err := s.e.parsing.acquire(ctx, b.Len())
	if err != nil {
		return nil, false
	}
	tree, err := parseSQL(b.String())
	release()
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false
	}
	st, err := s.plan(ctx, tree.Stmts[0].Stmt, lp.oids)
	if err != nil {
		return nil, false
	}
	q, ok := st.(*duckQuery)
	if !ok || s.boundViews || len(s.bound) != 1 || !sameTable(s.bound[0].t, t) || !slices.Equal(q.params, lp.oids) {
		return nil, false
	}
	s.plans.put(planKey{text: shape, params: literalKey}, &cachedPlan{q: q, refs: s.bound, lit: lp})
	return &literalStmt{q: q, lit: lp, args: args}, true
}
