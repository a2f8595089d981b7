package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// Column origins: PostgreSQL's RowDescription names, for a result column
// that is a plain column of a table, that table's OID and the column's
// number. pgjdbc uses them (ResultSetMetaData.isNullable, getTableName,
// isAutoIncrement → fetchFieldMetaData, which joins pg_attribute on them).
// The lake tables' OIDs and column numbers are those of the pg_catalog
// emulation (catalog.Table.OID; attnum = field position + 1).

// fromItem is a lake table in the FROM clause of the top-level SELECT.
type fromItem struct {
	alias string
	table *catalog.Table
}

// setColumnOrigins fills TableOID and AttrNum of cols, the result columns
// of stmt (already bound: lake tables are lakesoul_scan calls), for targets
// that are plain column references (or *) of a lake table. Anything it
// cannot map with certainty keeps 0.
func setColumnOrigins(stmt *pg_query.Node, tables map[string]*catalog.Table, cols []pgwire.Column) {
	sel := stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		return
	}
	var items []fromItem
	ok := true
	for _, f := range sel.FromClause {
		collectFromItems(f, tables, &items, &ok)
	}
	if !ok || len(items) == 0 {
		return
	}
	type origin struct {
		oid    uint32
		attnum int16
	}
	var out []origin
	all := func(it fromItem) {
		for i := range it.table.Schema.Fields() {
			out = append(out, origin{it.table.OID, int16(i + 1)})
		}
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return
		}
		cr := rt.Val.GetColumnRef()
		if cr == nil {
			out = append(out, origin{})
			continue
		}
		var names []string
		star := false
		for _, f := range cr.Fields {
			switch {
			case f.GetString_() != nil:
				names = append(names, f.GetString_().Sval)
			case f.GetAStar() != nil:
				star = true
			}
		}
		switch {
		case star && len(names) == 0:
			for _, it := range items {
				all(it)
			}
		case star && len(names) == 1:
			found := false
			for _, it := range items {
				if it.alias == names[0] {
					all(it)
					found = true
				}
			}
			if !found {
				return
			}
		case !star && (len(names) == 1 || len(names) == 2):
			col := names[len(names)-1]
			var match *origin
			n := 0
			for _, it := range items {
				if len(names) == 2 && it.alias != names[0] {
					continue
				}
				if idx := it.table.Schema.FieldIndices(col); len(idx) == 1 {
					n++
					match = &origin{it.table.OID, int16(idx[0] + 1)}
				}
			}
			if n == 1 {
				out = append(out, *match)
			} else {
				out = append(out, origin{})
			}
		default:
			out = append(out, origin{})
		}
	}
	if len(out) != len(cols) {
		return // e.g. USING joins merged columns: leave everything unknown
	}
	for i, o := range out {
		if o.oid != 0 {
			cols[i].TableOID, cols[i].AttrNum = o.oid, o.attnum
		}
	}
}

// collectFromItems appends the lake tables of one FROM item; ok becomes
// false when the item holds anything whose columns a * would also expand
// (subqueries, functions, joins with USING/NATURAL).
func collectFromItems(n *pg_query.Node, tables map[string]*catalog.Table, items *[]fromItem, ok *bool) {
	switch {
	case n.GetRangeFunction() != nil:
		rf := n.GetRangeFunction()
		t := scanTableOf(rf, tables)
		if t == nil || rf.Alias == nil || len(rf.Alias.Colnames) > 0 {
			*ok = false
			return
		}
		*items = append(*items, fromItem{alias: rf.Alias.Aliasname, table: t})
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		if j.IsNatural || len(j.UsingClause) > 0 {
			*ok = false
			return
		}
		collectFromItems(j.Larg, tables, items, ok)
		collectFromItems(j.Rarg, tables, items, ok)
	default:
		*ok = false
	}
}

// scanTableOf returns the lake table of a lakesoul_scan('<handle>') FROM item.
func scanTableOf(rf *pg_query.RangeFunction, tables map[string]*catalog.Table) *catalog.Table {
	if len(rf.Functions) != 1 {
		return nil
	}
	l := rf.Functions[0].GetList()
	if l == nil || len(l.Items) == 0 {
		return nil
	}
	fc := l.Items[0].GetFuncCall()
	if fc == nil || len(fc.Args) != 1 || len(fc.Funcname) != 1 || !strings.EqualFold(fc.Funcname[0].GetString_().GetSval(), scanFunctionName) {
		return nil
	}
	c := fc.Args[0].GetAConst()
	if c == nil || c.GetSval() == nil {
		return nil
	}
	return tables[c.GetSval().Sval]
}
