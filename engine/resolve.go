package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// resolveTable finds a lake table by (optional) schema and name, for any
// use of its files: a table whose path is not its own directory in the
// warehouse is refused (42501, paths.go). schemaName is the PostgreSQL
// face's ("public" is LakeSoul's "default" namespace, pgcatalog.Namespace).
func (s *Session) resolveTable(ctx context.Context, schemaName, name string) (*catalog.Table, error) {
	t, err := s.lookupTable(ctx, schemaName, name)
	if err != nil {
		return nil, err
	}
	if err := s.e.checkTableDir(t); err != nil {
		return nil, err
	}
	s.noteEnums(t) // enum.go
	return t, nil
}

// lookupTable is resolveTable without the directory check (DROP TABLE
// drops the rows of any table, and removes files only from a table's own
// directory).
func (s *Session) lookupTable(ctx context.Context, schemaName, name string) (*catalog.Table, error) {
	if schemaName != "" {
		t, err := s.cat.TableByName(ctx, pgcatalog.Namespace(schemaName), name)
		if sqlerr.Code(err) == sqlerr.UndefinedTable {
			return nil, undefinedRelation(schemaName, name)
		}
		return t, err
	}
	var firstErr error
	for _, schemaName := range s.searchPathSchemas() {
		t, err := s.lookupTable(ctx, schemaName, name)
		if err == nil {
			return t, nil
		}
		if sqlerr.Code(err) != sqlerr.UndefinedTable {
			return nil, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, undefinedRelation("", name)
}

// undefinedRelation is PostgreSQL's 42P01 for a relation named as the
// statement wrote it: "relation \"s.t\" does not exist" for a qualified
// name, whichever namespace the lookup failed in.
func undefinedRelation(schemaName, name string) error {
	if schemaName != "" {
		name = schemaName + "." + name
	}
	return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// relationKinds classifies the relations a statement reads.
type relationKinds struct {
	lake    []*pg_query.RangeVar
	catalog int
	// timeTravel counts lakesoul.snapshot/changes calls in FROM (timetravel.go).
	timeTravel int
}

func classifyRelations(stmt *pg_query.Node) relationKinds {
	ctes := cteRefs(stmt)
	var k relationKinds
	walk(stmt, func(n *pg_query.Node) {
		if name, _ := timeTravelCall(n.GetRangeFunction()); name != "" {
			k.timeTravel++
		}
		rv := n.GetRangeVar()
		if rv == nil {
			return
		}
		switch {
		case ctes[rv] != nil:
		case pgcatalog.IsCatalogRelation(rv.Schemaname, rv.Relname) || isLakeCatalogRelation(rv.Schemaname):
			k.catalog++
		default:
			k.lake = append(k.lake, rv)
		}
	})
	return k
}

// bindLakeTables replaces every lake-table reference in stmt with a
// lakesoul_scan(handle) call and registers the handles; it returns the tables
// by handle. Unknown tables fail with 42P01. Every CTE and its references
// get engine-chosen names (ctescope.go): no relation name the user wrote is
// left for DuckDB to interpret.
func (s *Session) bindLakeTables(ctx context.Context, stmt *pg_query.Node) (map[string]*catalog.Table, error) {
	if err := s.unqualifyColumns(stmt); err != nil { // qualified.go
		return nil, err
	}
	ctes := cteRefs(stmt)
	tables := map[string]*catalog.Table{}
	s.bound = s.bound[:0:0]
	resolved := map[string]*catalog.Table{}
	// The pruning terms need the columns of the tables (bare names): the
	// lake tables a FROM clause names are resolved first, once. A name
	// that does not resolve here is left to the walk below, which reports
	// it or expands a view.
	prunes := collectPruneInputs(stmt, func(rv *pg_query.RangeVar) *catalog.Table {
		if ctes[rv] != nil || s.isTempRef(rv) || pgcatalog.IsCatalogRelation(rv.Schemaname, rv.Relname) ||
			isLakeCatalogRelation(rv.Schemaname) {
			return nil
		}
		key := rv.Schemaname + "\x00" + rv.Relname
		if t, ok := resolved[key]; ok {
			return t
		}
		t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
		if err != nil {
			return nil
		}
		resolved[key] = t
		s.bound = append(s.bound, tableRef{schema: rv.Schemaname, name: rv.Relname, t: t})
		return t
	})
	views := 0
	var err error
	walk(stmt, func(n *pg_query.Node) {
		if err != nil {
			return
		}
		if name, fc := timeTravelCall(n.GetRangeFunction()); name != "" {
			err = s.bindTimeTravel(ctx, n, n.GetRangeFunction(), name, fc)
			return
		}
		rv := n.GetRangeVar()
		if rv == nil {
			return
		}
		if ctes[rv] != nil {
			return
		}
		if s.isTempRef(rv) { // temptable.go
			pointTempRef(rv)
			return
		}
		if pgcatalog.IsCatalogRelation(rv.Schemaname, rv.Relname) || isLakeCatalogRelation(rv.Schemaname) {
			err = sqlerr.Unsupported("a query that reads both lake tables and pg_catalog/information_schema",
				"query lake tables and catalog relations in separate statements")
			return
		}
		// One catalog lookup per name per statement (self-joins, subqueries).
		key := rv.Schemaname + "\x00" + rv.Relname
		t, ok := resolved[key]
		if !ok {
			if t, err = s.resolveTable(ctx, rv.Schemaname, rv.Relname); err != nil {
				if sqlerr.Code(err) == sqlerr.UndefinedTable {
					err = s.expandView(ctx, n, rv, ctes, &views) // view.go
				}
				return
			}
			resolved[key] = t
			s.bound = append(s.bound, tableRef{schema: rv.Schemaname, name: rv.Relname, t: t})
		}
		handle := s.token + ":" + t.ID
		if in := prunes[rv]; in != nil {
			// Constants that cannot be of their key column's type fail now,
			// as PostgreSQL fails them when it plans.
			if err = checkPrune(in, t); err != nil {
				return
			}
			// A pruned reference gets a handle of its own, for its
			// statement alone (its terms take the statement's parameters);
			// it shares the statement's snapshot of the table (see
			// takeSnapshots).
			s.handleSeq++
			handle = fmt.Sprintf("%s:%s:p%d", s.token, t.ID, s.handleSeq)
			s.e.scans.putPruned(handle, t, in)
		} else {
			s.e.scans.put(handle, t)
		}
		tables[handle] = t
		alias := rv.Alias
		if alias == nil {
			alias = &pg_query.Alias{Aliasname: rv.Relname}
		}
		n.Node = scanFromClause(handle, alias).Node
	})
	if err != nil {
		return nil, err
	}
	renameCTEs(stmt, ctes)
	s.boundViews = views > 0
	return tables, nil
}

// takeSnapshots resolves the current file list of every table a statement
// reads, right before it runs. Each table is resolved once per execution, so a
// self-join sees one snapshot.
func (s *Session) takeSnapshots(ctx context.Context, tables map[string]*catalog.Table) error {
	return s.takeSnapshotsWith(ctx, tables, nil)
}

// takeSnapshotsWith is takeSnapshots for an execution with parameters:
// the pruned references' terms are resolved with them (prune.go).
func (s *Session) takeSnapshotsWith(ctx context.Context, tables map[string]*catalog.Table, params []any) error {
	specs := map[string]*pruneSpec{}
	for handle := range tables {
		if e, ok := s.e.scans.get(handle); ok && e.prune != nil {
			sp, err := resolvePrune(e.prune, e.table, params)
			if err != nil {
				return err
			}
			specs[handle] = sp
		}
	}
	ids := map[string]bool{}
	partitioned := false
	for _, t := range tables {
		ids[t.ID] = true
		partitioned = partitioned || len(t.RangeCols) > 0
	}
	if cat, err := s.readCatalog(ctx); err != nil {
		return err
	} else if cat != s.cat {
		// The block's snapshot (txsnapshot.go): one snapshot already.
		return s.setSnapshots(ctx, cat, tables, specs)
	}
	if len(ids) <= 1 && (len(tables) <= 1 || !partitioned) {
		// One catalog statement lists everything: one snapshot already.
		return s.setSnapshots(ctx, s.cat, tables, specs)
	}
	// Several tables (or differently pruned references of a partitioned
	// one): one catalog snapshot for all the listings, so a commit of
	// several tables or partitions is seen whole or not at all.
	return s.cat.InSnapshot(ctx, func(cat *catalog.Catalog) error {
		return s.setSnapshots(ctx, cat, tables, specs)
	})
}

// testHookTableListed, set by tests, runs after each table's files were
// listed for a statement.
var testHookTableListed func(tableID string)

// setSnapshots lists each table's files through cat and gives every handle
// its snapshot.
func (s *Session) setSnapshots(ctx context.Context, cat *catalog.Catalog, tables map[string]*catalog.Table, specs map[string]*pruneSpec) error {
	snap := map[string][]catalog.PartitionFiles{}
	for handle, t := range tables {
		parts, ok := snap[t.ID]
		if !ok {
			var err error
			if parts, err = s.listPartitions(ctx, cat, t, tables, specs); err != nil { // prunefetch.go
				return err
			}
			if testHookTableListed != nil {
				testHookTableListed(t.ID)
			}
			// An open block reads its own writes (txn.go).
			if parts, err = s.snapshotForBlock(ctx, t, parts); err != nil {
				return err
			}
			if err := reader.CheckFiles(t, parts); err != nil {
				return err
			}
			snap[t.ID] = parts
		}
		s.e.scans.setSnapshot(handle, parts, specs[handle])
	}
	s.noteSnapshotReads(tables, snap, specs) // serializable.go
	return nil
}

// markRowsOnlyScans points each reference of the bound query stmt to a
// lake table whose first column stmt cannot name at a handle marked
// rowsOnly (scanEntry). DuckDB asks a table function, which has no virtual
// row-id column, for its first column when a query reads none of it
// (count(*), EXISTS, SELECT 1 FROM t); such a scan then counts rows from
// the files' footers instead of decoding the column — of a primary-key
// table, the files it streams (reader/unitplan.go); files it merges are
// read for their keys all the same. The test is
// conservative: any star, NATURAL or USING join, or column reference with
// the reference's alias or the column's name as one of its parts keeps the
// reference as it is.
func (s *Session) markRowsOnlyScans(stmt *pg_query.Node, tables map[string]*catalog.Table) {
	names := map[string]bool{}
	opaque := false
	walk(stmt, func(n *pg_query.Node) {
		switch {
		case n.GetAStar() != nil:
			opaque = true
		case n.GetJoinExpr() != nil:
			je := n.GetJoinExpr()
			opaque = opaque || je.IsNatural || len(je.UsingClause) > 0
		case n.GetColumnRef() != nil:
			for _, f := range n.GetColumnRef().Fields {
				if str := f.GetString_(); str != nil {
					names[strings.ToLower(str.Sval)] = true
				}
			}
		}
	})
	if opaque {
		return
	}
	used := map[string]bool{}
	walk(stmt, func(n *pg_query.Node) {
		rf := n.GetRangeFunction()
		handle, ok := scanHandleOf(rf)
		if !ok {
			return
		}
		t := tables[handle]
		rows := handle + ":rows"
		if t == nil || t.Schema.NumFields() == 0 || rf.Alias == nil ||
			names[strings.ToLower(rf.Alias.Aliasname)] || names[strings.ToLower(t.Schema.Field(0).Name)] ||
			!s.e.scans.putRowsOnly(rows, handle) {
			used[handle] = true
			return
		}
		rf.Functions[0].GetList().Items[0].GetFuncCall().Args[0] = pg_query.MakeAConstStrNode(rows, -1)
		tables[rows] = t
		used[rows] = true
	})
	for h := range tables {
		if !used[h] {
			delete(tables, h)
			if e, ok := s.e.scans.get(h); ok && e.prune != nil {
				s.e.scans.drop(h) // the statement's own, replaced
			}
		}
	}
}

// scanHandleOf returns the handle of a FROM item that is a lakesoul_scan
// call the engine made (scanFromClause).
func scanHandleOf(rf *pg_query.RangeFunction) (string, bool) {
	if rf == nil || len(rf.Functions) != 1 {
		return "", false
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return "", false
	}
	fc := items[0].GetFuncCall()
	if len(fc.Funcname) != 1 || fc.Funcname[0].GetString_().GetSval() != scanFunctionName || len(fc.Args) != 1 {
		return "", false
	}
	c := fc.Args[0].GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().Sval, true
}
