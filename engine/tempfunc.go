package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Temporary PL/pgSQL functions: CREATE [OR REPLACE] FUNCTION pg_temp.f(OUT …)
// … LANGUAGE plpgsql, called as SELECT … FROM pg_temp.f() and dropped by DROP
// FUNCTION [IF EXISTS] pg_temp.f(). Sequelize's findOrCreate sends exactly
// this: a function whose block runs an INSERT … RETURNING * INTO an OUT
// parameter of the table's row type and whose handler stores the error
// detail of a unique_violation in a second OUT parameter, then a SELECT of
// the OUT parameters' fields, then DROP FUNCTION.
//
// The session keeps such functions (as PostgreSQL keeps pg_temp objects for
// the session; DISCARD ALL/TEMP and the session's end drop them). The
// body is PostgreSQL's PL/pgSQL parse of the function (pg_query), of which
// one form is run: a block of SQL statements, each optionally INTO OUT
// parameters (positionally, a row-typed OUT parameter taking the whole row),
// with exception handlers (OTHERS, SQLSTATE 'xxxxx' or a condition name)
// whose statements are GET [STACKED] DIAGNOSTICS into OUT parameters. The
// statements run as the session's own, with its rights and its
// transaction; a handler is allowed only for a block of one statement,
// whose failure leaves nothing behind (every statement is atomic here), so
// no subtransaction is needed. Any other PL/pgSQL construct, IN parameters,
// set-returning functions and other languages are 0A000 at CREATE. The
// SELECT calling one may list the function's OUT parameters and fields of
// row-typed ones ((f.response)."id", (f.response).*), nothing else.

// tempFunction is a function of schema pg_temp.
type tempFunction struct {
	name string
	outs []tempOut
	// body is the block's statements; handlers apply when len(body) == 1.
	body     []plSQL
	handlers []plHandler
}

// tempOut is an OUT parameter: a row of table rowType (schema, name) or a
// scalar of type typ.
type tempOut struct {
	name    string
	rowType *pg_query.RangeVar
	typ     pgType
}

// plSQL is one SQL statement of the body and the OUT parameters its row
// goes INTO (by index into tempFunction.outs).
type plSQL struct {
	sql  string
	into []int
}

// plHandler is an exception handler: the SQLSTATEs it catches ("" entry:
// OTHERS) and the diagnostics it stores.
type plHandler struct {
	codes []string
	diags []plDiag
}

type plDiag struct {
	kind string // PG_EXCEPTION_DETAIL, MESSAGE_TEXT, …
	out  int
}

// plUnsupported is the 0A000 of a function the session cannot run.
func plUnsupported(what string) error {
	return sqlerr.Unsupported(what+" in a pg_temp function",
		"a pg_temp PL/pgSQL function of OUT parameters whose BEGIN … [EXCEPTION WHEN … THEN GET STACKED DIAGNOSTICS …] END block runs SQL statements [INTO OUT parameters]; or run the statements directly (Sequelize: findCreateFind instead of findOrCreate)")
}

// planCreateFunction plans CREATE [OR REPLACE] FUNCTION: a pg_temp PL/pgSQL
// function is kept by the session; any other is 0A000.
func (s *Session) planCreateFunction(n *pg_query.CreateFunctionStmt) (pgwire.Statement, error) {
	if len(n.Funcname) != 2 || n.Funcname[0].GetString_().GetSval() != pgTempSchema {
		return nil, sqlerr.Unsupported("CREATE FUNCTION", "functions of the session's own schema pg_temp (CREATE FUNCTION pg_temp.f(OUT …) … LANGUAGE plpgsql); other functions cannot be created")
	}
	f, err := parseTempFunction(n)
	if err != nil {
		return nil, err
	}
	return &funcStmt{tag: "CREATE FUNCTION", run: func(context.Context, []any) (string, [][]any, error) {
		if _, ok := s.tempFuncs[f.name]; ok && !n.Replace {
			return "", nil, sqlerr.New(sqlerr.DuplicateFunction, "function %q already exists with same argument types", f.name)
		}
		s.changeTempFuncs(func(m map[string]*tempFunction) { m[f.name] = f })
		return "CREATE FUNCTION", nil, nil
	}}, nil
}

// plFunction is the part of pg_query's PL/pgSQL JSON this reads.
type plFunction struct {
	Datums []map[string]struct {
		Refname string `json:"refname"`
	} `json:"datums"`
	Action struct {
		Block *plBlock `json:"PLpgSQL_stmt_block"`
	} `json:"action"`
}

type plBlock struct {
	Body       []map[string]json.RawMessage `json:"body"`
	Exceptions *struct {
		Block struct {
			List []struct {
				Exc struct {
					Conditions []struct {
						Cond struct {
							Name     string `json:"condname"`
							SQLState int    `json:"sqlerrstate"`
						} `json:"PLpgSQL_condition"`
					} `json:"conditions"`
					Action []map[string]json.RawMessage `json:"action"`
				} `json:"PLpgSQL_exception"`
			} `json:"exc_list"`
		} `json:"PLpgSQL_exception_block"`
	} `json:"exceptions"`
}

type plExecSQL struct {
	SQLStmt struct {
		Expr struct {
			Query string `json:"query"`
		} `json:"PLpgSQL_expr"`
	} `json:"sqlstmt"`
	Into   bool `json:"into"`
	Target map[string]struct {
		Refname string `json:"refname"`
		Fields  []struct {
			Name string `json:"name"`
		} `json:"fields"`
	} `json:"target"`
}

type plGetDiag struct {
	Items []struct {
		Item struct {
			Kind   string `json:"kind"`
			Target int    `json:"target"`
		} `json:"PLpgSQL_diag_item"`
	} `json:"diag_items"`
}

// parseTempFunction reads a CREATE FUNCTION pg_temp.f statement into the
// form the session runs (0A000 for anything else).
func parseTempFunction(n *pg_query.CreateFunctionStmt) (*tempFunction, error) {
	f := &tempFunction{name: n.Funcname[1].GetString_().GetSval()}
	if n.IsProcedure {
		return nil, plUnsupported("a procedure")
	}
	if rt := n.ReturnType; rt != nil && rt.Setof {
		return nil, plUnsupported("a set-returning function")
	}
	lang := ""
	for _, o := range n.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == "language" {
			lang = d.Arg.GetString_().GetSval()
		}
	}
	if lang != "plpgsql" {
		return nil, plUnsupported("LANGUAGE " + lang)
	}
	for _, p := range n.Parameters {
		fp := p.GetFunctionParameter()
		if fp.Mode != pg_query.FunctionParameterMode_FUNC_PARAM_OUT {
			return nil, plUnsupported("an input parameter")
		}
		out := tempOut{name: fp.Name}
		parts := typeNameParts(fp.ArgType)
		switch t := typeNameType(fp.ArgType); {
		case t.oid != 0 && len(fp.ArgType.ArrayBounds) == 0:
			out.typ = t
		case len(parts) == 1:
			out.rowType = &pg_query.RangeVar{Relname: parts[0], Inh: true, Relpersistence: "p"}
		case len(parts) == 2:
			out.rowType = &pg_query.RangeVar{Schemaname: parts[0], Relname: parts[1], Inh: true, Relpersistence: "p"}
		default:
			return nil, plUnsupported("an OUT parameter of type " + typeNameString(fp.ArgType))
		}
		f.outs = append(f.outs, out)
	}
	text, err := deparseNode(&pg_query.Node{Node: &pg_query.Node_CreateFunctionStmt{CreateFunctionStmt: n}})
	if err != nil {
		return nil, err
	}
	js, err := pg_query.ParsePlPgSqlToJSON(text)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.SyntaxError, err, "function body")
	}
	var fns []map[string]plFunction
	if err := json.Unmarshal([]byte(js), &fns); err != nil || len(fns) != 1 {
		return nil, plUnsupported("this function body")
	}
	fn := fns[0]["PLpgSQL_function"]
	datum := func(i int) string {
		if i < 0 || i >= len(fn.Datums) {
			return ""
		}
		for _, d := range fn.Datums[i] {
			return d.Refname
		}
		return ""
	}
	outIndex := func(name string) (int, error) {
		for i, o := range f.outs {
			if o.name == name {
				return i, nil
			}
		}
		return 0, plUnsupported("a variable other than the OUT parameters (" + name + ")")
	}
	// The function's block is wrapped in an outer block ending in RETURN.
	outer := fn.Action.Block
	if outer == nil || outer.Exceptions != nil {
		return nil, plUnsupported("this function body")
	}
	// It holds the function's own block when that has handlers (or
	// declarations), else the block's statements.
	block := &plBlock{}
	for _, st := range outer.Body {
		for kind, raw := range st {
			switch kind {
			case "PLpgSQL_stmt_block":
				if len(outer.Body) > 2 || len(block.Body) > 0 {
					return nil, plUnsupported("nested blocks")
				}
				if err := json.Unmarshal(raw, block); err != nil {
					return nil, err
				}
			case "PLpgSQL_stmt_return":
			default:
				block.Body = append(block.Body, st)
			}
		}
	}
	for _, st := range block.Body {
		for kind, raw := range st {
			if kind != "PLpgSQL_stmt_execsql" {
				return nil, plUnsupported(plStatementName(kind))
			}
			var ex plExecSQL
			if err := json.Unmarshal(raw, &ex); err != nil {
				return nil, err
			}
			stmt := plSQL{sql: ex.SQLStmt.Expr.Query}
			if ex.Into {
				for _, tgt := range ex.Target {
					names := []string{tgt.Refname}
					if len(tgt.Fields) > 0 {
						names = names[:0]
						for _, fl := range tgt.Fields {
							names = append(names, fl.Name)
						}
					}
					for _, name := range names {
						i, err := outIndex(name)
						if err != nil {
							return nil, err
						}
						stmt.into = append(stmt.into, i)
					}
				}
			}
			f.body = append(f.body, stmt)
		}
	}
	if block.Exceptions != nil {
		if len(f.body) != 1 {
			return nil, plUnsupported("an exception handler of a block of several statements")
		}
		for _, e := range block.Exceptions.Block.List {
			var h plHandler
			for _, c := range e.Exc.Conditions {
				code, ok := plConditionCode(c.Cond.Name, c.Cond.SQLState)
				if !ok {
					return nil, plUnsupported("the condition " + c.Cond.Name)
				}
				h.codes = append(h.codes, code)
			}
			for _, st := range e.Exc.Action {
				for kind, raw := range st {
					if kind != "PLpgSQL_stmt_getdiag" {
						return nil, plUnsupported(plStatementName(kind) + " in an exception handler")
					}
					var gd plGetDiag
					if err := json.Unmarshal(raw, &gd); err != nil {
						return nil, err
					}
					for _, it := range gd.Items {
						if _, ok := plDiagnostics[it.Item.Kind]; !ok {
							return nil, plUnsupported("GET DIAGNOSTICS " + it.Item.Kind)
						}
						i, err := outIndex(datum(it.Item.Target))
						if err != nil {
							return nil, err
						}
						h.diags = append(h.diags, plDiag{kind: it.Item.Kind, out: i})
					}
				}
			}
			f.handlers = append(f.handlers, h)
		}
	}
	return f, nil
}

// plStatementName is a PL/pgSQL statement kind as a message names it.
func plStatementName(kind string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(kind, "PLpgSQL_stmt_"), "_", " ")) + " statements"
}

// plDiagnostics are the stacked diagnostics a handler may store, from an
// error.
var plDiagnostics = map[string]func(e *sqlerr.Error) string{
	"PG_EXCEPTION_DETAIL":  func(e *sqlerr.Error) string { return e.Detail },
	"PG_EXCEPTION_HINT":    func(e *sqlerr.Error) string { return e.Hint },
	"MESSAGE_TEXT":         func(e *sqlerr.Error) string { return e.Message },
	"RETURNED_SQLSTATE":    func(e *sqlerr.Error) string { return e.Code },
	"PG_EXCEPTION_CONTEXT": func(*sqlerr.Error) string { return "" },
}

// plConditionCode is the SQLSTATE a handler's condition names ("" for
// OTHERS); sqlstate is the code of a SQLSTATE 'xxxxx' condition, which
// pg_query gives packed as PostgreSQL's MAKE_SQLSTATE does.
func plConditionCode(name string, sqlstate int) (string, bool) {
	switch {
	case name == "others":
		return "", true
	case len(name) == 5 && strings.Trim(name, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "":
		return name, true // SQLSTATE 'xxxxx', as pg_query names it
	case name == "sqlstate" || name == "":
		var b [5]byte
		for i := range b {
			b[i] = byte(sqlstate>>(6*i)&0x3F) + '0'
		}
		return string(b[:]), true
	}
	code, ok := sqlerr.ConditionCode(name)
	return code, ok
}

// tempFunctionCall finds a SELECT whose FROM is one call of a pg_temp
// function of the session: the function and the name its columns are
// qualified by.
func (s *Session) tempFunctionCall(stmt *pg_query.Node) (*tempFunction, string, bool) {
	sel := stmt.GetSelectStmt()
	if sel == nil || len(sel.FromClause) != 1 {
		return nil, "", false
	}
	rf := sel.FromClause[0].GetRangeFunction()
	if rf == nil || len(rf.Functions) != 1 {
		return nil, "", false
	}
	fc := rf.Functions[0].GetList().GetItems()[0].GetFuncCall()
	if fc == nil || len(fc.Funcname) != 2 || fc.Funcname[0].GetString_().GetSval() != pgTempSchema {
		return nil, "", false
	}
	f, ok := s.tempFuncs[fc.Funcname[1].GetString_().GetSval()]
	if !ok {
		return nil, "", false
	}
	alias := f.name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	return f, alias, true
}

// tempColumn is one result column of a SELECT of a temporary function:
// OUT parameter out, or field field of it ("" for the parameter itself).
type tempColumn struct {
	out   int
	field int // -1: the parameter itself
}

// planTempFunctionSelect plans SELECT <OUT parameters and their fields>
// FROM pg_temp.f() [alias]: the function runs when the statement does, and
// the statement returns its one row.
func (s *Session) planTempFunctionSelect(ctx context.Context, stmt *pg_query.Node, f *tempFunction, alias string) (pgwire.Statement, error) {
	sel := stmt.GetSelectStmt()
	if sel.WhereClause != nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.SortClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.DistinctClause) > 0 || sel.WithClause != nil ||
		len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 {
		return nil, plUnsupported("a query of a pg_temp function with clauses other than its select list")
	}
	// The columns of row-typed OUT parameters: the columns of the row
	// their statement returns INTO them.
	rowCols := make([][]pgwire.Column, len(f.outs))
	for i, o := range f.outs {
		if o.rowType == nil {
			continue
		}
		t, err := s.resolveTable(ctx, o.rowType.Schemaname, o.rowType.Relname)
		if err != nil {
			return nil, err
		}
		st, err := s.plan(ctx, &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
			TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)},
			FromClause: []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: &pg_query.RangeVar{
				Schemaname: t.Namespace, Relname: t.Name, Inh: true, Relpersistence: "p"}}}},
			LimitCount: pg_query.MakeAConstIntNode(0, -1), LimitOption: pg_query.LimitOption_LIMIT_OPTION_COUNT}}}, nil)
		if err != nil {
			return nil, err
		}
		if rowCols[i], err = st.Describe(ctx); err != nil {
			return nil, err
		}
	}
	outByName := func(fields []*pg_query.Node) (int, bool) {
		var names []string
		for _, fl := range fields {
			names = append(names, fl.GetString_().GetSval())
		}
		if len(names) == 2 && names[0] == alias || len(names) == 1 {
			for i, o := range f.outs {
				if o.name == names[len(names)-1] {
					return i, true
				}
			}
		}
		return 0, false
	}
	var cols []pgwire.Column
	var picks []tempColumn
	for _, item := range sel.TargetList {
		rt := item.GetResTarget()
		switch {
		case rt.Val.GetColumnRef() != nil:
			i, ok := outByName(rt.Val.GetColumnRef().Fields)
			if !ok || f.outs[i].rowType != nil {
				return nil, plUnsupported("this select list")
			}
			name := f.outs[i].name
			if rt.Name != "" {
				name = rt.Name
			}
			cols = append(cols, pgwire.Column{Name: name, TypeOID: f.outs[i].typ.oid, TypeSize: -1, TypeModifier: f.outs[i].typ.typmod})
			picks = append(picks, tempColumn{out: i, field: -1})
		case rt.Val.GetAIndirection() != nil:
			ind := rt.Val.GetAIndirection()
			cr := ind.Arg.GetColumnRef()
			if cr == nil || len(ind.Indirection) != 1 {
				return nil, plUnsupported("this select list")
			}
			i, ok := outByName(cr.Fields)
			if !ok || f.outs[i].rowType == nil {
				return nil, plUnsupported("this select list")
			}
			if ind.Indirection[0].GetAStar() != nil {
				for j, c := range rowCols[i] {
					cols = append(cols, c)
					picks = append(picks, tempColumn{out: i, field: j})
				}
				continue
			}
			field := ind.Indirection[0].GetString_().GetSval()
			j := -1
			for k, c := range rowCols[i] {
				if c.Name == field {
					j = k
				}
			}
			if j < 0 {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q not found in data type %s", field, f.outs[i].rowType.Relname)
			}
			c := rowCols[i][j]
			if rt.Name != "" {
				c.Name = rt.Name
			}
			cols = append(cols, c)
			picks = append(picks, tempColumn{out: i, field: j})
		default:
			return nil, plUnsupported("this select list")
		}
	}
	return &funcStmt{tag: "SELECT", cols: cols, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		vals, err := s.runTempFunction(ctx, f, rowCols)
		if err != nil {
			return "", nil, err
		}
		row := make([]any, len(picks))
		for k, p := range picks {
			v := vals[p.out]
			if p.field < 0 {
				row[k] = v
			} else if r, ok := v.([]any); ok {
				row[k] = r[p.field]
			}
		}
		return "SELECT 1", [][]any{row}, nil
	}}, nil
}

// runTempFunction runs f's block as the session's statements and returns
// its OUT parameters' values (a row-typed one's as []any, nil when no row
// went into it).
func (s *Session) runTempFunction(ctx context.Context, f *tempFunction, rowCols [][]pgwire.Column) ([]any, error) {
	vals := make([]any, len(f.outs))
	for _, st := range f.body {
		tree, err := parseSQL(st.sql)
		if err != nil || len(tree.Stmts) != 1 {
			return nil, sqlerr.Wrap(sqlerr.SyntaxError, err, "statement of function "+f.name)
		}
		rows, err := s.runPLStatement(ctx, tree.Stmts[0].Stmt)
		if err != nil {
			e := sqlerr.From(err)
			h := f.handlerFor(e.Code)
			if h == nil {
				return nil, err
			}
			for _, d := range h.diags {
				vals[d.out] = plDiagnostics[d.kind](e)
			}
			return vals, nil
		}
		if len(st.into) == 0 {
			continue
		}
		if len(rows) == 0 {
			for _, i := range st.into {
				vals[i] = nil
			}
			continue
		}
		row := rows[0]
		if len(st.into) == 1 && f.outs[st.into[0]].rowType != nil {
			if len(row) != len(rowCols[st.into[0]]) {
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "returned record type does not match expected record type")
			}
			vals[st.into[0]] = row
			continue
		}
		for k, i := range st.into {
			if k < len(row) && f.outs[i].rowType == nil {
				vals[i] = row[k]
			}
		}
	}
	return vals, nil
}

// handlerFor is the first handler of f catching SQLSTATE code (OTHERS
// catches every code but query_canceled, as PostgreSQL's does).
func (f *tempFunction) handlerFor(code string) *plHandler {
	for i, h := range f.handlers {
		for _, c := range h.codes {
			if c == code || c == "" && code != sqlerr.QueryCanceled {
				return &f.handlers[i]
			}
		}
	}
	return nil
}

// planDropFunctions is DROP FUNCTION [IF EXISTS] pg_temp.f[()] …: the
// session's temporary functions; others do not exist (42883).
func (s *Session) planDropFunctions(n *pg_query.DropStmt) (pgwire.Statement, error) {
	var names []string
	for _, obj := range n.Objects {
		owa := obj.GetObjectWithArgs()
		if owa == nil || len(owa.Objname) != 2 || owa.Objname[0].GetString_().GetSval() != pgTempSchema {
			return nil, sqlerr.Unsupported("DROP FUNCTION of a function outside pg_temp", "DROP FUNCTION pg_temp.f()")
		}
		names = append(names, owa.Objname[1].GetString_().GetSval())
	}
	return &funcStmt{tag: "DROP FUNCTION", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		for _, name := range names {
			if _, ok := s.tempFuncs[name]; !ok {
				if n.MissingOk {
					_ = pgwire.SendNotice(ctx, pgwire.Notice{Message: fmt.Sprintf("function pg_temp.%s() does not exist, skipping", name)})
					continue
				}
				return "", nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_temp.%s() does not exist", name)
			}
		}
		s.changeTempFuncs(func(m map[string]*tempFunction) {
			for _, name := range names {
				delete(m, name)
			}
		})
		return "DROP FUNCTION", nil, nil
	}}, nil
}

// runPLStatement runs one statement of a function body as the session's
// own (a read-only transaction refuses a writing one, as for any
// statement) and returns its rows.
func (s *Session) runPLStatement(ctx context.Context, node *pg_query.Node) ([][]any, error) {
	writes := statementWrites(node)
	st, err := s.plan(ctx, node, nil)
	if err != nil {
		return nil, err
	}
	if writes {
		if err := s.checkWritable(st.Tag()); err != nil {
			return nil, err
		}
	}
	p, err := st.Bind(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var rows rowsCollector
	if _, _, err := p.Execute(ctx, 0, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// changeTempFuncs applies change to the session's temporary functions; in
// a transaction block, as PostgreSQL's pg_temp catalog rows, the change
// lasts only if the block commits (endBlockTempFuncs).
func (s *Session) changeTempFuncs(change func(map[string]*tempFunction)) {
	if (s.inBlock || s.implicit) && s.tempFuncsBefore == nil {
		before := maps.Clone(s.tempFuncs)
		s.tempFuncsBefore = &before
	}
	if s.tempFuncs == nil {
		s.tempFuncs = map[string]*tempFunction{}
	}
	change(s.tempFuncs)
}

// endBlockTempFuncs ends the block for the temporary functions: a rollback
// restores those the block created, replaced or dropped.
func (s *Session) endBlockTempFuncs(committed bool) {
	if s.tempFuncsBefore != nil && !committed {
		s.tempFuncs = *s.tempFuncsBefore
	}
	s.tempFuncsBefore = nil
}
