package engine

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// json and jsonb over lake tables. DuckDB has one JSON type (text with an
// alias), and its operators mean other things: ? is a parameter, @> is
// looser containment, -> with '$…' or '/…' is a path, || and - work on
// text. Where the statement
// shows that an operand is json or jsonb (pgtypes.go), the operators become
// calls of the engine's functions (duckfuncs.go, package pgjson), which give
// PostgreSQL's answers: a json result keeps the text it came from, a jsonb
// result is canonical. json and jsonb are both DuckDB's JSON
// (pgsemantics.go's casts); result columns get json's or jsonb's OID from
// the inferred type (resultcols.go).

func boolConst(b bool) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: b}}}}}
}

// textArrayArg spells a text[] operand for DuckDB: an untyped literal
// ('{a,b}') as a VARCHAR list.
func textArrayArg(n *pg_query.Node) (*pg_query.Node, error) {
	sv := n.GetAConst().GetSval()
	if sv == nil {
		return n, nil
	}
	list, err := pgArrayToDuckList(sv.Sval)
	if err != nil {
		return nil, err
	}
	return makeCast(pg_query.MakeAConstStrNode(list, -1), "text[]"), nil
}

func noOperator(op string, l, r pgType) error {
	name := func(t pgType) string {
		switch {
		case t.literal:
			return "unknown"
		case t.oid == schema.OIDJSON:
			return "json"
		case t.oid == schema.OIDJSONB:
			return "jsonb"
		}
		return "text"
	}
	return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
		Message: fmt.Sprintf("operator does not exist: %s %s %s", name(l), op, name(r)),
		Hint:    "No operator matches the given name and argument types. You might need to add explicit type casts."}
}

// jsonbCompared reports whether a comparison of operands of types l and r
// is jsonb's: both jsonb, or one jsonb and the other an untyped literal.
func jsonbCompared(l, r pgType) bool {
	return l.oid == schema.OIDJSONB && (r.oid == schema.OIDJSONB || r.literal) || l.literal && r.oid == schema.OIDJSONB
}

// jsonbKey is n's key in jsonb's order: jsonb values compare, sort and
// test equal as PostgreSQL's jsonb does (keys in any order, duplicates the
// last, numbers by value), not as their text.
func jsonbKey(n *pg_query.Node) *pg_query.Node { return makeCall("lakesoul_jsonb_key", n) }

// jsonbIn rewrites x [NOT] IN (list) over jsonb to compare keys.
func (rw *pgRewriter) jsonbIn(a *pg_query.A_Expr) {
	list := a.Rexpr.GetList()
	if list == nil {
		return
	}
	l := rw.ti.typeAt(a.Lexpr)
	for _, e := range list.Items {
		if !jsonbCompared(l, rw.ti.typeAt(e)) {
			return
		}
	}
	a.Lexpr = jsonbKey(a.Lexpr)
	for i, e := range list.Items {
		list.Items[i] = jsonbKey(e)
	}
}

// jsonbSort makes the sort keys of sel that are jsonb expressions sort in
// jsonb's order; a key naming a result column by position sorts by that
// column's expression. A SELECT DISTINCT or a set operation sorts by its
// output columns, which it cannot do by a computed key; those keep
// DuckDB's order.
func (rw *pgRewriter) jsonbSort(sel *pg_query.SelectStmt) {
	if len(sel.DistinctClause) > 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return
	}
	for _, sb := range sel.SortClause {
		by := sb.GetSortBy()
		if by == nil || by.Node == nil {
			continue
		}
		key := by.Node
		if by.Node.GetAConst() != nil {
			if key = positionTarget(sel, by.Node); key == nil {
				continue
			}
		}
		if rw.ti.typeAt(key).oid != schema.OIDJSONB {
			continue
		}
		by.Node = jsonbKey(proto.Clone(key).(*pg_query.Node))
	}
}

// positionTarget is the expression of the result column of sel that n, an
// ORDER BY position, names; nil for other constants and where a * before
// it leaves the position unknown here.
func positionTarget(sel *pg_query.SelectStmt, n *pg_query.Node) *pg_query.Node {
	k, ok := intConst(n)
	if !ok || k < 1 || int(k) > len(sel.TargetList) {
		return nil
	}
	for _, t := range sel.TargetList[:k] {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && isStar(cr) {
			return nil
		}
	}
	return sel.TargetList[k-1].GetResTarget().GetVal()
}

// jsonOperator rewrites a json/jsonb operator expression n.
func (rw *pgRewriter) jsonOperator(n *pg_query.Node, a *pg_query.A_Expr) error {
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_IN {
		rw.jsonbIn(a)
		return nil
	}
	if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || a.Lexpr == nil || a.Rexpr == nil {
		return nil
	}
	op := operatorName(a)
	l, r := rw.ti.typeAt(a.Lexpr), rw.ti.typeAt(a.Rexpr)
	if jsonbCompared(l, r) && comparisons[op] { // btree operators: jsonb's order (pgjson.SortKey)
		a.Lexpr, a.Rexpr = jsonbKey(a.Lexpr), jsonbKey(a.Rexpr)
		return nil
	}
	switch op {
	case "?", "?|", "?&":
		if l.oid == schema.OIDJSON {
			return noOperator(op, l, r)
		}
		right := a.Rexpr
		fn := "lakesoul_jsonb_exists"
		if op != "?" {
			fn = map[string]string{"?|": "lakesoul_jsonb_exists_any", "?&": "lakesoul_jsonb_exists_all"}[op]
			var err error
			if right, err = textArrayArg(right); err != nil {
				return err
			}
		}
		n.Node = makeCall(fn, a.Lexpr, right).Node
	case "@>", "<@":
		if !l.isJSON() && !r.isJSON() {
			// arrays: DuckDB's list containment, an untyped '{…}' of the
			// other operand's type (arraylit.go)
			if _, err := arrayLiteral(a.Rexpr, l.oid); err != nil {
				return err
			}
			_, err := arrayLiteral(a.Lexpr, r.oid)
			return err
		}
		if l.oid == schema.OIDJSON || r.oid == schema.OIDJSON {
			return noOperator(op, l, r)
		}
		outer, inner := a.Lexpr, a.Rexpr
		if op == "<@" {
			outer, inner = inner, outer
		}
		n.Node = makeCall("lakesoul_jsonb_contains", outer, inner).Node
	case "||":
		if !(l.oid == schema.OIDJSONB && (r.oid == schema.OIDJSONB || r.literal) || l.literal && r.oid == schema.OIDJSONB) {
			return nil
		}
		n.Node = makeCast(makeCall("lakesoul_jsonb_concat", a.Lexpr, a.Rexpr), "json").Node
	case "-":
		if l.oid != schema.OIDJSONB {
			return nil
		}
		fn := "lakesoul_jsonb_delete"
		switch {
		case r.isInteger():
			fn = "lakesoul_jsonb_delete_index"
		case !r.isText() && !r.literal:
			return nil
		}
		n.Node = makeCast(makeCall(fn, a.Lexpr, a.Rexpr), "json").Node
	case "->", "->>", "#>", "#>>":
		if !l.isJSON() {
			return nil // DuckDB's operators on text it reads as JSON
		}
		jsonb, text := boolConst(l.oid == schema.OIDJSONB), boolConst(op == "->>" || op == "#>>")
		var call *pg_query.Node
		switch {
		case op == "#>" || op == "#>>":
			path, err := textArrayArg(a.Rexpr)
			if err != nil {
				return err
			}
			call = makeCall("lakesoul_json_path", a.Lexpr, path, jsonb, text)
		case r.isInteger():
			call = makeCall("lakesoul_json_index", a.Lexpr, a.Rexpr, jsonb, text)
		case r.isText() || r.literal:
			call = makeCall("lakesoul_json_field", a.Lexpr, a.Rexpr, jsonb, text)
		default:
			return nil
		}
		if op == "->" || op == "#>" {
			call = makeCast(call, "json")
		}
		n.Node = call.Node
	}
	return nil
}
