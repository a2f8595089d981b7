package engine

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Views: CREATE [OR REPLACE] VIEW, DROP VIEW.
//
// A view is stored in the catalog (catalog/view.go) as PostgreSQL query text
// with its column names, under its namespace's domain, so it exists for the
// roles that see the namespace (42P01 for others) and shows in pg_views,
// information_schema.views/tables and pg_class (psql's \dv). A statement
// naming a view reads its definition in place of the name, bound like any
// query written there (bindLakeTables), with the querying role's rights on
// what it reads — a view grants nothing its reader does not have. Its names
// were bound when it was created (storedrefs.go).

// maxViewExpansions bounds the views one statement expands (a view may name
// a view; OR REPLACE can make them name each other).
const maxViewExpansions = 64

func (s *Session) planCreateView(ctx context.Context, n *pg_query.ViewStmt) (pgwire.Statement, error) {
	if n.View.Relpersistence == "t" {
		return nil, sqlerr.Unsupported("temporary views", "CREATE VIEW")
	}
	if n.WithCheckOption != pg_query.ViewCheckOption_NO_CHECK_OPTION || len(n.Options) > 0 {
		return nil, sqlerr.Unsupported("view options and WITH CHECK OPTION", "CREATE [OR REPLACE] VIEW name [(columns)] AS query")
	}
	if n.Query.GetSelectStmt() == nil {
		return nil, sqlerr.Unsupported("a view of this statement", "CREATE VIEW … AS SELECT")
	}
	// Its names are bound now, with the creator's search_path and rights
	// (storedrefs.go): the stored text names each object qualified.
	if err := s.storedDefinition(ctx, n.Query); err != nil {
		return nil, err
	}
	text, err := deparseNode(n.Query)
	if err != nil {
		return nil, err
	}
	// Planned now: a view that does not plan is not created.
	q, err := s.planSelect(ctx, proto.Clone(n.Query).(*pg_query.Node), nil)
	if err != nil {
		return nil, err
	}
	if len(q.ParamOIDs()) > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1")
	}
	cols, err := q.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if len(n.Aliases) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	v := catalog.View{Namespace: pgcatalog.Namespace(n.View.Schemaname), Name: n.View.Relname, Definition: text}
	if v.Namespace == "" {
		v.Namespace = s.searchPath()[0]
	}
	var types []uint32
	var typmods []int32
	for i, c := range cols {
		name := c.Name
		if i < len(n.Aliases) {
			name = n.Aliases[i].GetString_().GetSval()
		}
		v.Columns = append(v.Columns, name)
		types = append(types, c.TypeOID)
		typmods = append(typmods, c.TypeModifier)
	}
	tag := "CREATE VIEW"
	return s.ddl(tag, func(ctx context.Context) error {
		return s.cat.CreateView(ctx, v, types, typmods, n.Replace)
	}), nil
}

// lookupView finds the view a relation name means (search_path as for
// tables); nil when there is none.
func (s *Session) lookupView(ctx context.Context, rv *pg_query.RangeVar) (*catalog.View, error) {
	if rv.Schemaname != "" {
		return s.cat.ViewByName(ctx, pgcatalog.Namespace(rv.Schemaname), rv.Relname)
	}
	for _, ns := range s.searchPath() {
		v, err := s.cat.ViewByName(ctx, ns, rv.Relname)
		if v != nil || err != nil {
			return v, err
		}
	}
	return nil, nil
}

// expandView replaces n, a reference rv to no table, by the definition of
// the view it names (which the walk binding n then binds in turn, its CTE
// references added to ctes), or fails with 42P01.
func (s *Session) expandView(ctx context.Context, n *pg_query.Node, rv *pg_query.RangeVar,
	ctes map[*pg_query.RangeVar]*pg_query.CommonTableExpr, expanded *int) error {
	v, err := s.lookupView(ctx, rv)
	if err != nil {
		return err
	}
	if v == nil {
		return undefinedRelation(rv.Schemaname, rv.Relname)
	}
	if *expanded++; *expanded > maxViewExpansions {
		return sqlerr.New(sqlerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation %q", rv.Relname)
	}
	sub, err := viewSubquery(v, rv)
	if err != nil {
		return err
	}
	// Names the stored text leaves unqualified (views stored before names
	// were qualified at creation) are the view's namespace's, never the
	// reader's search_path's.
	if err := s.qualifyStoredRefs(ctx, sub, storedPath(v.Namespace), false); err != nil {
		return err
	}
	for r, c := range cteRefs(sub) {
		ctes[r] = c
	}
	n.Node = sub.Node
	return nil
}

// viewSubquery is the FROM item standing for view v under rv's alias.
func viewSubquery(v *catalog.View, rv *pg_query.RangeVar) (*pg_query.Node, error) {
	tree, err := parseSQL(v.Definition)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, sqlerr.New(sqlerr.InternalError, "view %s.%s: stored definition does not parse", v.Namespace, v.Name)
	}
	alias := &pg_query.Alias{Aliasname: rv.Relname}
	if rv.Alias != nil {
		alias = proto.Clone(rv.Alias).(*pg_query.Alias)
	}
	for i, c := range v.Columns {
		if i >= len(alias.Colnames) {
			alias.Colnames = append(alias.Colnames, pg_query.MakeStrNode(c))
		}
	}
	return &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: tree.Stmts[0].Stmt, Alias: alias}}}, nil
}
