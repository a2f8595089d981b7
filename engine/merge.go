package engine

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// frameDefaults is PostgreSQL's FRAMEOPTION_DEFAULTS: a window without a
// frame clause (RANGE UNBOUNDED PRECEDING to CURRENT ROW).
const frameDefaults = 0x00002 | 0x00020 | 0x00400

// planMerge plans MERGE INTO a primary-key table without rewriting files.
//
// The source is left-joined to the target's current rows; for each source row
// the first WHEN clause whose match kind and condition hold decides what is
// written: UPDATE writes the old row with the SET columns replaced, INSERT
// writes the new row, DELETE (CDC tables only) writes the old row as a
// delete marker, DO NOTHING writes nothing. All rows go to the table in one
// MergeCommit, so a MERGE is atomic. A target row is "matched" when its key
// is present (keys of stored rows are never NULL). A target row that two
// source rows would UPDATE or DELETE fails the statement (21000), as in
// PostgreSQL, whichever order the rows come in.
func (s *Session) planMerge(ctx context.Context, n *pg_query.MergeStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	if n.WithClause != nil {
		return nil, sqlerr.Unsupported("MERGE with WITH", "MERGE INTO t USING source ON … WHEN …")
	}
	d, err := s.dmlTarget(ctx, n.Relation, n.ReturningList, paramOIDs)
	if err != nil {
		return nil, err
	}
	t := d.t
	if !t.HasPK() {
		return nil, sqlerr.Unsupported("MERGE into a table without a primary key", "MERGE into a table with a PRIMARY KEY")
	}
	cdc := t.CDCColumn()
	matched := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: colRef(d.alias, t.PKCols[0]), Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1}}}
	notMatched := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: colRef(d.alias, t.PKCols[0]), Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	and := func(a, b *pg_query.Node) *pg_query.Node {
		if b == nil {
			return a
		}
		return pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{a, isTrue(b, false)}, -1)
	}

	type clause struct {
		guard *pg_query.Node
		vals  map[string]*pg_query.Node // column → value; nil map = DO NOTHING
		// modifies: the action changes the matched target row (UPDATE,
		// DELETE), which one MERGE may do once per row.
		modifies bool
	}
	var clauses []clause
	keyCols := slices.Concat(t.RangeCols, t.PKCols)
	for _, wn := range n.MergeWhenClauses {
		w := wn.GetMergeWhenClause()
		var guard *pg_query.Node
		switch w.MatchKind {
		case pg_query.MergeMatchKind_MERGE_WHEN_MATCHED:
			guard = and(matched, w.Condition)
		case pg_query.MergeMatchKind_MERGE_WHEN_NOT_MATCHED_BY_TARGET:
			guard = and(notMatched, w.Condition)
		default:
			return nil, sqlerr.Unsupported("WHEN NOT MATCHED BY SOURCE", "WHEN MATCHED and WHEN NOT MATCHED")
		}
		c := clause{guard: guard}
		switch w.CommandType {
		case pg_query.CmdType_CMD_NOTHING:
		case pg_query.CmdType_CMD_UPDATE:
			c.modifies = true
			c.vals = map[string]*pg_query.Node{}
			for _, f := range t.Schema.Fields() {
				c.vals[f.Name] = colRef(d.alias, f.Name)
			}
			for _, tl := range w.TargetList {
				rt := tl.GetResTarget()
				if len(t.Schema.FieldIndices(rt.Name)) == 0 {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.Name, t.Name)
				}
				if err := typeAssigned(rt.Val, t.Schema.Field(t.Schema.FieldIndices(rt.Name)[0])); err != nil {
					return nil, err
				}
				c.vals[rt.Name] = rt.Val
				if slices.Contains(keyCols, rt.Name) {
					c.vals[rt.Name] = sameKey(d.alias, rt.Name, rt.Val)
				}
				c.vals[rt.Name] = assignedValue(c.vals[rt.Name], t.Schema.Field(t.Schema.FieldIndices(rt.Name)[0]))
			}
		case pg_query.CmdType_CMD_INSERT:
			c.vals = map[string]*pg_query.Node{}
			var cols []string
			for _, tl := range w.TargetList {
				cols = append(cols, tl.GetResTarget().Name)
			}
			if len(cols) == 0 {
				for _, f := range t.Schema.Fields() {
					cols = append(cols, f.Name)
				}
			}
			if len(w.Values) != len(cols) {
				return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has %d target columns but %d expressions", len(cols), len(w.Values))
			}
			for i, col := range cols {
				if len(t.Schema.FieldIndices(col)) == 0 {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", col, t.Name)
				}
				f := t.Schema.Field(t.Schema.FieldIndices(col)[0])
				val := w.Values[i]
				if val.GetSetToDefault() != nil {
					c.vals[col] = nil // DEFAULT: as if left out (below)
					continue
				}
				if err := typeAssigned(val, f); err != nil {
					return nil, err
				}
				c.vals[col] = assignedValue(val, f)
			}
			// Columns left out (or DEFAULT) take their default, as in
			// PostgreSQL's INSERT; without one they are NULL.
			for _, f := range t.Schema.Fields() {
				if c.vals[f.Name] != nil {
					continue
				}
				def, _ := columnDefault(f) // columndefault.go
				if def == "" {
					continue
				}
				expr, err := s.storedExpr(ctx, def, "default of column "+f.Name, t.Namespace) // storedrefs.go
				if err != nil {
					return nil, err
				}
				c.vals[f.Name] = assignedValue(expr, f)
			}
			for _, k := range t.PKCols {
				if c.vals[k] == nil {
					return nil, writer.NotNullViolation(t, k, nil, 0)
				}
			}
		case pg_query.CmdType_CMD_DELETE:
			if cdc == "" {
				return nil, sqlerr.Unsupported("MERGE … DELETE on a table without a CDC column",
					"DELETE … WHERE, or a CDC table (WITH (cdc_column = …)) whose deletes are markers")
			}
			c.modifies = true
			c.vals = map[string]*pg_query.Node{}
			for _, f := range t.Schema.Fields() {
				c.vals[f.Name] = colRef(d.alias, f.Name)
			}
			c.vals[cdc] = pg_query.MakeAConstStrNode("delete", -1)
		default:
			return nil, sqlerr.Unsupported("this MERGE action", "UPDATE, INSERT, DELETE, DO NOTHING")
		}
		clauses = append(clauses, c)
	}

	// One CASE per output column over the clauses in order, and a filter that
	// keeps rows whose deciding clause writes something.
	caseOf := func(val func(clause) *pg_query.Node, els *pg_query.Node) *pg_query.Node {
		var whens []*pg_query.Node
		for _, c := range clauses {
			whens = append(whens, pg_query.MakeCaseWhenNode(c.guard, val(c), -1))
		}
		n := pg_query.MakeCaseExprNode(nil, whens, -1)
		n.GetCaseExpr().Defresult = els
		return n
	}
	null := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	boolConst := func(b bool) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: b}}}}}
	}
	// PostgreSQL's 21000: a target row that the actions of two source rows
	// would change (the rows are numbered per matched target row: its key).
	// Without an UPDATE or DELETE action no row can be changed twice, and
	// the statement computes no window for it.
	guard := slices.ContainsFunc(clauses, func(c clause) bool { return c.modifies })
	modifies := caseOf(func(c clause) *pg_query.Node { return boolConst(c.modifies) }, boolConst(false))
	var targetKey []*pg_query.Node
	for _, k := range keyCols {
		targetKey = append(targetKey, colRef(d.alias, k))
	}
	changes := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("sum")},
		[]*pg_query.Node{caseWhen(modifies, pg_query.MakeAConstIntNode(1, -1), pg_query.MakeAConstIntNode(0, -1))}, -1)
	changes.GetFuncCall().Over = &pg_query.WindowDef{PartitionClause: targetKey, FrameOptions: frameDefaults, Location: -1}
	again := pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{modifies,
		pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(">")},
			changes, pg_query.MakeAConstIntNode(1, -1), -1)}, -1)
	var targets []*pg_query.Node
	var fields []arrow.Field
	for i, f := range t.Schema.Fields() {
		name := f.Name
		val := caseOf(func(c clause) *pg_query.Node {
			if v := c.vals[name]; v != nil {
				return v
			}
			return null
		}, null)
		if i == 0 && guard {
			val = makeCall("lakesoul_affect_once", again, val, pg_query.MakeAConstStrNode("MERGE", -1))
		}
		targets = append(targets, resTarget(name, val))
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
	}
	where := caseOf(func(c clause) *pg_query.Node { return boolConst(c.vals != nil) }, boolConst(false))
	join := &pg_query.Node{Node: &pg_query.Node_JoinExpr{JoinExpr: &pg_query.JoinExpr{
		Jointype: pg_query.JoinType_JOIN_LEFT, Larg: n.SourceRelation, Rarg: d.from(), Quals: n.JoinCondition}}}
	return s.writeStmt(ctx, "MERGE", d, selectNode(targets, []*pg_query.Node{join}, where), fields, nil, paramOIDs)
}
