package engine

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// INSERT ... ON CONFLICT on primary-key tables.
//
// A plain INSERT into a PK table already upserts the written columns. ON
// CONFLICT adds PostgreSQL's semantics on top, evaluated against the snapshot
// the statement reads:
//   - DO NOTHING writes only rows whose key does not exist yet;
//   - DO UPDATE SET … writes, for an existing key, the old row with the SET
//     columns replaced (expressions may use EXCLUDED.col and the old values),
//     and the new row for a new key; DO UPDATE … WHERE skips keys where the
//     condition does not hold.
// The key is the range-partition columns plus the primary key (LakeSoul's
// uniqueness rule), so the join compares both.

// checkConflictTarget accepts a conflict target naming the primary key (with or
// without the range columns) or the primary-key constraint.
func checkConflictTarget(t *catalog.Table, oc *pg_query.OnConflictClause) error {
	if !t.HasPK() {
		return sqlerr.New("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	if oc.Infer == nil {
		if oc.Action == pg_query.OnConflictAction_ONCONFLICT_UPDATE {
			return sqlerr.New(sqlerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name")
		}
		return nil
	}
	if oc.Infer.Conname != "" {
		if oc.Infer.Conname != t.Name+"_pkey" {
			return sqlerr.New(sqlerr.UndefinedObject, "constraint %q for table %q does not exist", oc.Infer.Conname, t.Name)
		}
		return nil
	}
	var names []string
	for _, e := range oc.Infer.IndexElems {
		ie := e.GetIndexElem()
		if ie == nil || ie.Name == "" {
			return sqlerr.Unsupported("expressions in the ON CONFLICT target", "ON CONFLICT (primary key columns)")
		}
		names = append(names, ie.Name)
	}
	slices.Sort(names)
	pk := slices.Clone(t.PKCols)
	slices.Sort(pk)
	withRange := slices.Concat(t.PKCols, t.RangeCols)
	slices.Sort(withRange)
	if !slices.Equal(names, pk) && !slices.Equal(names, withRange) {
		return sqlerr.New("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	return nil
}

// deparseExpr renders one expression as SQL text (for the catalog; DuckDB's
// comes from Session.duckExprSQL).
func deparseExpr(n *pg_query.Node) (string, error) {
	text, err := deparseNode(selectNode([]*pg_query.Node{pg_query.MakeResTargetNodeWithVal(n, -1)}, nil, nil))
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}

// rewriteConflictRefs points column references of a DO UPDATE expression at
// the joined relations: EXCLUDED.x → __new.x (NULL when x was not inserted),
// target.x, schema.target.x and bare x → __old.x.
func rewriteConflictRefs(n *pg_query.Node, t *catalog.Table, alias string, inserted []string) {
	walk(n, func(node *pg_query.Node) {
		cr := node.GetColumnRef()
		if cr == nil {
			return
		}
		var parts []string
		for _, f := range cr.Fields {
			s := f.GetString_()
			if s == nil {
				return // a.* and friends: left as they are
			}
			parts = append(parts, s.Sval)
		}
		switch {
		case len(parts) == 2 && strings.EqualFold(parts[0], "excluded"):
			if !slices.Contains(inserted, parts[1]) {
				node.Node = &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}
				return
			}
			cr.Fields = []*pg_query.Node{pg_query.MakeStrNode("__new"), pg_query.MakeStrNode(parts[1])}
		case len(parts) == 2 && (parts[0] == alias || parts[0] == t.Name),
			len(parts) == 3 && parts[1] == t.Name && pgcatalog.Namespace(parts[0]) == t.Namespace: // schema.table.x
			cr.Fields = []*pg_query.Node{pg_query.MakeStrNode("__old"), pg_query.MakeStrNode(parts[len(parts)-1])}
		case len(parts) == 1 && len(t.Schema.FieldIndices(parts[0])) > 0:
			cr.Fields = []*pg_query.Node{pg_query.MakeStrNode("__old"), pg_query.MakeStrNode(parts[0])}
		}
	})
}

// conflictQuery wraps the casted INSERT query (which yields the columns
// `written`) into the ON CONFLICT query; it returns the query text and the
// columns it yields (all table columns for DO UPDATE). oneProposal says the
// source is a single row (VALUES of one row), which needs no numbering of
// proposals for the 21000 check — the common single-row upsert.
func (s *Session) conflictQuery(t *catalog.Table, alias, handle, inserted string, written []string, target []string,
	oc *pg_query.OnConflictClause, oneProposal bool) (string, []string, error) {
	keyCols := slices.Concat(t.RangeCols, t.PKCols)
	var on []string
	for _, k := range keyCols {
		on = append(on, fmt.Sprintf("__old.%s IS NOT DISTINCT FROM __new.%s", quoteIdent(k), quoteIdent(k)))
	}
	scan := scanCallSQL(handle)
	if oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING {
		q := fmt.Sprintf("SELECT __new.* FROM (%s) AS __new WHERE NOT EXISTS (SELECT 1 FROM %s AS __old WHERE %s)",
			inserted, scan, strings.Join(on, " AND "))
		return q, written, nil
	}
	sets := map[string]string{}
	for _, tl := range oc.TargetList {
		rt := tl.GetResTarget()
		if len(rt.Indirection) > 0 {
			return "", nil, sqlerr.Unsupported("assigning to a field or subscript", "SET column = expression")
		}
		if len(t.Schema.FieldIndices(rt.Name)) == 0 {
			return "", nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name)
		}
		rewriteConflictRefs(rt.Val, t, alias, target)
		val := rt.Val
		if slices.Contains(keyCols, rt.Name) {
			// The key it matched (EXCLUDED.id), or a failure (sameKey).
			val = sameKey("__old", rt.Name, val)
		}
		duckJSONCasts(val)
		e, err := s.duckExprSQL(val)
		if err != nil {
			return "", nil, err
		}
		sets[rt.Name] = e
	}
	var exprs, cols []string
	for _, f := range t.Schema.Fields() {
		newVal := "NULL"
		if slices.Contains(written, f.Name) {
			// As the old row is read (a uuid column is UUID there).
			newVal = "CAST(__new." + quoteIdent(f.Name) + " AS " + duckReadType(f) + ")"
		}
		// The new row was assigned by the inserting query; of the old
		// row only the SET columns are (a value stored before the
		// varchar(n)/char(n) rule held stays as it is: lakeStoreCast).
		oldVal := "__old." + quoteIdent(f.Name)
		if e, ok := sets[f.Name]; ok {
			oldVal = e
			if _, char := charRuleOf(f); char {
				oldVal = lakeWriteCast(e, f)
			}
		}
		exprs = append(exprs, lakeStoreCast(fmt.Sprintf("CASE WHEN __old.__exists IS NULL THEN %s ELSE %s END", newVal, oldVal), f)+
			" AS "+quoteIdent(f.Name))
		cols = append(cols, f.Name)
	}
	// A proposal affects its row when it inserts it or its WHERE holds.
	affected := "true"
	if oc.WhereClause != nil {
		rewriteConflictRefs(oc.WhereClause, t, alias, target)
		duckJSONCasts(oc.WhereClause)
		w, err := s.duckExprSQL(oc.WhereClause)
		if err != nil {
			return "", nil, err
		}
		affected = fmt.Sprintf("(__old.__exists IS NULL OR (%s) IS TRUE)", w)
	}
	again := "false" // one proposal cannot propose its key again
	if !oneProposal {
		inserted, again = numberProposals(t, inserted, written)
	}
	q := fmt.Sprintf("SELECT %s FROM (%s) AS __new LEFT JOIN (SELECT *, true AS __exists FROM %s) AS __old ON %s"+
		" WHERE lakesoul_affect_once(%s AND %s, %s, 'ON CONFLICT DO UPDATE')",
		strings.Join(exprs, ", "), inserted, scan, strings.Join(on, " AND "), affected, again, affected)
	return q, cols, nil
}

// numberProposals numbers the rows an INSERT … ON CONFLICT DO UPDATE
// proposes (the query inserted, yielding the columns written) within their
// key, in the order the statement lists them, and gives the condition under
// which a proposal's row is proposed again later in the statement. That is
// PostgreSQL's 21000: a proposal that inserted or updated its row, followed
// by another for the same key, would affect the row a second time. A
// proposal without a complete key affects no row (it fails as a NULL key).
func numberProposals(t *catalog.Table, inserted string, written []string) (numbered, again string) {
	var keys, complete []string
	for _, k := range slices.Concat(t.RangeCols, t.PKCols) {
		if !slices.Contains(written, k) {
			return inserted, "false" // a key column left NULL: no row is affected
		}
		keys = append(keys, quoteIdent(k))
	}
	for _, k := range t.PKCols {
		complete = append(complete, "__new."+quoteIdent(k)+" IS NOT NULL")
	}
	part := strings.Join(keys, ", ")
	numbered = fmt.Sprintf("SELECT *, count(*) OVER (PARTITION BY %s) AS __proposals,"+
		" row_number() OVER (PARTITION BY %s ORDER BY __listed) AS __proposal"+
		" FROM (SELECT *, row_number() OVER () AS __listed FROM (%s) AS __in) AS __in", part, part, inserted)
	again = fmt.Sprintf("(%s AND __new.__proposal < __new.__proposals)", strings.Join(complete, " AND "))
	return numbered, again
}

// singleValuesRow says whether an INSERT's source is VALUES of one row.
func singleValuesRow(src *pg_query.Node) bool {
	sel := src.GetSelectStmt()
	return sel != nil && len(sel.ValuesLists) == 1 && len(sel.FromClause) == 0 && sel.WithClause == nil
}
