package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// VACUUM [FULL] [(options)] [table, …] and ANALYZE [table, …].
//
// VACUUM of a lake table collects now what the lifecycle task would
// (compaction/lifecycle.go): partitions past partition.ttl, history before a
// compaction past compaction.ttl, and discarded files no version reads any
// more. VACUUM FULL also compacts every partition of the table fully (as
// CALL lakesoul.compact). Without a table name: every table the role sees.
// Tables are resolved as the session's role, so a table it cannot see does
// not exist for it. Like PostgreSQL's, VACUUM refuses to run in a
// transaction block (25001). ANALYZE checks the tables exist and has
// nothing to refresh: the statistics the read path uses are each file's own
// (footers, page indexes, bloom filters), current by construction.
func (s *Session) planVacuum(ctx context.Context, n *pg_query.VacuumStmt) (pgwire.Statement, error) {
	full := false
	for _, o := range n.Options {
		switch d := o.GetDefElem(); d.Defname {
		case "full":
			full = d.Arg == nil || d.Arg.GetBoolean().GetBoolval() || d.Arg.GetInteger().GetIval() == 1
		case "analyze", "verbose", "freeze", "skip_locked", "index_cleanup", "truncate", "process_toast",
			"process_main", "disable_page_skipping", "parallel", "skip_database_stats", "only_database_stats", "buffer_usage_limit":
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "unrecognized %s option %q", vacuumTag(n), d.Defname)
		}
	}
	var tables []*catalog.Table
	var skipped []string // system relations that are no tables (views), warned about
	for _, r := range n.Rels {
		rv := r.GetVacuumRelation().Relation
		if s.isTempRef(rv) {
			continue // the session's DuckDB table: nothing to collect or refresh
		}
		if pgcatalog.IsCatalogRelation(rv.Schemaname, rv.Relname) {
			table, err := s.systemRelation(ctx, rv.Schemaname, rv.Relname)
			if err != nil {
				return nil, err
			}
			if !table {
				skipped = append(skipped, rv.Relname)
			}
			continue
		}
		t, err := s.resolveTable(ctx, rv.Schemaname, rv.Relname)
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	tag := vacuumTag(n)
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if n.IsVacuumcmd {
			if err := s.preventTransactionBlock(ctx, "VACUUM"); err != nil {
				return "", nil, err
			}
		}
		for _, name := range skipped {
			_ = pgwire.SendNotice(ctx, pgwire.Notice{Severity: "WARNING", Message: fmt.Sprintf(
				"skipping %q --- cannot %s non-tables or special system tables", name, strings.ToLower(tag))})
		}
		if !n.IsVacuumcmd {
			return tag, nil, nil
		}
		if len(n.Rels) == 0 {
			all, err := s.cat.Tables(ctx, "")
			if err != nil {
				return "", nil, err
			}
			for _, t := range all {
				if s.e.checkTableDir(t) == nil {
					tables = append(tables, t)
				}
			}
		}
		for _, t := range tables {
			if err := s.vacuumTable(ctx, t, full); err != nil {
				return "", nil, err
			}
		}
		return tag, nil, nil
	}}, nil
}

// systemRelation resolves a relation of pg_catalog or information_schema
// (an unqualified pg_ name in pg_catalog, which PostgreSQL searches first)
// in the catalog database: whether it is a table (VACUUM and ANALYZE of one
// are no-ops here: the catalog database is PostgreSQL's to maintain, and
// what it holds of the lake is not the user's to vacuum), or 42P01 when it
// does not exist. vacuumdb sends VACUUM for every table of pg_catalog that
// pg_class lists.
func (s *Session) systemRelation(ctx context.Context, schema, name string) (table bool, err error) {
	if schema == "" {
		schema = "pg_catalog"
	}
	var kind string
	err = s.e.cat.Pool().QueryRow(ctx, `SELECT c.relkind::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, schema, name).Scan(&kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", schema+"."+name)
	}
	if err != nil {
		return false, err
	}
	return kind == "r" || kind == "m" || kind == "t", nil
}

func vacuumTag(n *pg_query.VacuumStmt) string {
	if n.IsVacuumcmd {
		return "VACUUM"
	}
	return "ANALYZE"
}

// vacuumTable collects t's expired and discarded files and, with full,
// compacts each of its partitions.
func (s *Session) vacuumTable(ctx context.Context, t *catalog.Table, full bool) error {
	if full {
		parts, err := s.cat.LiveFiles(ctx, t.ID, nil)
		if err != nil {
			return err
		}
		var targets [][]any
		for _, p := range parts {
			targets = append(targets, []any{t.ID, p.Desc, nil})
		}
		if _, err := s.compactTargets(ctx, targets); err != nil { // compact_call.go
			return err
		}
	}
	_, err := compaction.Vacuum(ctx, s.e.cat, s.e.store, t, compaction.LifecycleOptions{})
	return err
}
