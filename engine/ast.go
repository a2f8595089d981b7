package engine

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/internal/pgtree"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// walkNodes calls fn for every *pg_query.Node inside m, parents before
// children (pgtree.Walk: no recursion). fn may replace n.Node in place; the
// walk then descends into the replacement.
func walkNodes(m protoreflect.Message, fn func(n *pg_query.Node)) {
	pgtree.Walk(m, func(m protoreflect.Message) {
		if n, ok := m.Interface().(*pg_query.Node); ok {
			fn(n)
		}
	})
}

// walk visits every node of a statement.
func walk(stmt *pg_query.Node, fn func(n *pg_query.Node)) {
	walkNodes(stmt.ProtoReflect(), fn)
}

// parseTreeVersion is the parse-tree version the deparser expects; trees we
// assemble ourselves must carry it.
var parseTreeVersion = func() int32 {
	r, err := pg_query.Parse("SELECT 1")
	if err != nil {
		panic(err)
	}
	return r.Version
}()

// singleStatementTree wraps one statement node in a parse result.
func singleStatementTree(stmt *pg_query.Node) *pg_query.ParseResult {
	return &pg_query.ParseResult{Version: parseTreeVersion, Stmts: []*pg_query.RawStmt{{Stmt: stmt}}}
}

// deparseNode renders one statement node as SQL text (identifiers that are
// DuckDB keywords quoted, duckident.go): text kept in the catalog, or shown.
// The SQL DuckDB runs comes from Session.duckSQL, which checks the tree
// first (duckgate.go).
func deparseNode(stmt *pg_query.Node) (string, error) {
	text, err := pg_query.Deparse(singleStatementTree(stmt))
	if err != nil {
		return "", err
	}
	return quoteDuckKeywords(text), nil
}

// scanCallSQL is the SQL text `lakesoul_scan('<handle>')`, the handle
// quoted as a literal: the text form of scanFromClause's call, for queries
// the engine writes itself.
func scanCallSQL(handle string) string {
	return scanFunctionName + "(" + quoteLiteral(handle) + ")"
}

// scanFromClause builds the FROM item `lakesoul_scan('<handle>') AS alias`.
func scanFromClause(handle string, alias *pg_query.Alias) *pg_query.Node {
	call := pg_query.MakeFuncCallNode(
		[]*pg_query.Node{pg_query.MakeStrNode(scanFunctionName)},
		[]*pg_query.Node{pg_query.MakeAConstStrNode(handle, -1)}, -1)
	return &pg_query.Node{Node: &pg_query.Node_RangeFunction{RangeFunction: &pg_query.RangeFunction{
		Functions: []*pg_query.Node{pg_query.MakeListNode([]*pg_query.Node{call, nil})},
		Alias:     alias,
	}}}
}

// stringValue returns the text of a String/A_Const/TypeCast-of-const node.
func stringValue(n *pg_query.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch {
	case n.GetString_() != nil:
		return n.GetString_().Sval, true
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetSval() != nil:
			return c.GetSval().Sval, true
		case c.GetIval() != nil:
			return fmt.Sprint(c.GetIval().Ival), true
		case c.GetFval() != nil:
			return c.GetFval().Fval, true
		case c.GetBoolval() != nil:
			return fmt.Sprint(c.GetBoolval().Boolval), true
		}
	case n.GetTypeCast() != nil:
		return stringValue(n.GetTypeCast().Arg)
	case n.GetTypeName() != nil:
		return typeNameString(n.GetTypeName()), true
	}
	return "", false
}

// typeNameString renders a TypeName's last name component ("int8", "varchar").
func typeNameString(t *pg_query.TypeName) string {
	var parts []string
	for _, n := range t.Names {
		if s := n.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

// typeMods returns a TypeName's integer modifiers (varchar(20) → [20]).
func typeMods(t *pg_query.TypeName) ([]int32, error) {
	var out []int32
	for _, m := range t.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		out = append(out, c.GetIval().Ival)
	}
	return out, nil
}

// defElemValue renders a WITH (...) option value as text.
func defElemValue(d *pg_query.DefElem) string {
	if d.Arg == nil {
		return "true"
	}
	if s, ok := stringValue(d.Arg); ok {
		return s
	}
	if i := d.Arg.GetInteger(); i != nil {
		return fmt.Sprint(i.Ival)
	}
	if f := d.Arg.GetFloat(); f != nil {
		return f.Fval
	}
	if b := d.Arg.GetBoolean(); b != nil {
		return fmt.Sprint(b.Boolval)
	}
	return strings.TrimSpace(fmt.Sprint(d.Arg))
}
