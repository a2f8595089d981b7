package engine

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// EXPLAIN [ANALYZE] of a query over lake tables, in PostgreSQL's syntax and
// text format: one row per line in a column "QUERY PLAN". For each lake
// table the query reads, a "Lake Scan" block says what the snapshot and
// pruning left to read — partitions, buckets, files, the key filter — and,
// with ANALYZE, what the reader then read and skipped (files, row groups and
// pages, by statistics, bloom filters and the page index) and how many rows
// it read, merged and returned. Then DuckDB's own plan (EXPLAIN or EXPLAIN
// ANALYZE of the rewritten query), or a note that the query streams from
// the merge without DuckDB (directscan.go).

var explainColumns = []pgwire.Column{{Name: "QUERY PLAN", TypeOID: schema.OIDText, TypeSize: -1, TypeModifier: -1}}

// planExplain plans EXPLAIN of a SELECT over lake tables.
func (s *Session) planExplain(ctx context.Context, n *pg_query.ExplainStmt, paramOIDs []uint32) (pgwire.Statement, error) {
	analyze := false
	for _, o := range n.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch name := strings.ToLower(d.Defname); name {
		case "analyze":
			analyze = defElemBool(d)
		case "format":
			if v, _ := stringValue(d.Arg); !strings.EqualFold(v, "text") {
				return nil, sqlerr.Unsupported("EXPLAIN (FORMAT "+strings.ToUpper(v)+")", "EXPLAIN in text format")
			}
		case "verbose", "costs", "buffers", "timing", "summary", "settings", "wal", "generic_plan", "memory", "serialize":
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "unrecognized EXPLAIN option %q", name)
		}
	}
	q := n.Query
	if q.GetSelectStmt() == nil {
		return nil, sqlerr.Unsupported("EXPLAIN of "+statementName(q), "EXPLAIN [ANALYZE] of a SELECT over lake tables")
	}
	if sel := q.GetSelectStmt(); sel.IntoClause != nil {
		return nil, sqlerr.Unsupported("SELECT INTO", "CREATE TABLE then INSERT ... SELECT")
	}
	if k := classifyRelations(q); len(k.lake) == 0 && k.timeTravel == 0 {
		return nil, sqlerr.Unsupported("EXPLAIN of a query that reads no lake table", "EXPLAIN [ANALYZE] of a SELECT over lake tables")
	}
	vs, isVector, err := s.planVectorSearch(ctx, q, paramOIDs) // vectorsearch.go
	if err != nil {
		return nil, err
	}
	var dq *duckQuery
	if isVector {
		dq = vs.exact
	} else if dq, err = s.planDuckQuery(ctx, q, paramOIDs); err != nil {
		return nil, err
	}
	return &funcStmt{tag: "EXPLAIN", cols: explainColumns, params: dq.params,
		run: func(ctx context.Context, params []any) (string, [][]any, error) {
			run, head := dq, ""
			if isVector {
				var err error
				if run, head, err = vs.restricted(ctx, params); err != nil {
					return "", nil, err
				}
			}
			lines, err := s.explain(ctx, run, analyze, params)
			if err != nil {
				return "", nil, err
			}
			if head != "" {
				lines = append([]string{head}, lines...)
			}
			rows := make([][]any, len(lines))
			for i, l := range lines {
				rows[i] = []any{l}
			}
			return "EXPLAIN", rows, nil
		}}, nil
}

// defElemBool reads an EXPLAIN option's boolean (a bare option is true).
func defElemBool(d *pg_query.DefElem) bool {
	if d.Arg == nil {
		return true
	}
	v, _ := stringValue(d.Arg)
	switch strings.ToLower(v) {
	case "false", "off", "0", "no":
		return false
	}
	return true
}

// explain runs (ANALYZE) or describes q and renders the plan.
func (s *Session) explain(ctx context.Context, q *duckQuery, analyze bool, params []any) ([]string, error) {
	start := time.Now()
	var tail []string
	rows := int64(-1)
	switch {
	case q.direct != nil && analyze:
		p := &directPortal{q: q, d: q.direct, params: params}
		var c countingRows
		_, _, err := p.Execute(ctx, 0, &c)
		p.Close()
		if err != nil {
			return nil, err
		}
		rows = c.n
		tail = []string{"Direct Scan: merged rows stream to the client, DuckDB is not used"}
	case q.direct != nil:
		if err := s.takeSnapshotsWith(ctx, q.tables, params); err != nil {
			return nil, err
		}
		tail = []string{"Direct Scan: merged rows stream to the client, DuckDB is not used"}
	default:
		if err := s.takeSnapshotsWith(ctx, q.tables, params); err != nil {
			return nil, err
		}
		plan, err := s.duckExplain(ctx, q, analyze, params)
		if err != nil {
			return nil, err
		}
		tail = append([]string{"DuckDB Plan:"}, plan...)
	}
	lines := s.lakeScanLines(q, analyze)
	lines = append(lines, tail...)
	if analyze {
		if rows >= 0 {
			lines = append(lines, fmt.Sprintf("Rows Returned: %d", rows))
		}
		lines = append(lines, fmt.Sprintf("Execution Time: %.3f ms", float64(time.Since(start).Microseconds())/1000))
	}
	return lines, nil
}

// duckExplain is DuckDB's EXPLAIN [ANALYZE] of q's rewritten SQL, as lines.
func (s *Session) duckExplain(ctx context.Context, q *duckQuery, analyze bool, params []any) ([]string, error) {
	args, err := duckArgs(q.params, params)
	if err != nil {
		return nil, err
	}
	prefix := "EXPLAIN "
	if analyze {
		prefix = "EXPLAIN ANALYZE "
	}
	rs, err := s.duck.QueryContext(ctx, prefix+q.sql, args...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, sqlerr.ErrCanceled
		}
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	// The plan names scans by handle; show the tables instead.
	var names []string
	for h, t := range q.tables {
		names = append(names, scanFunctionName+"('"+strings.ReplaceAll(h, "'", "''")+"')", pgQualifiedName(t))
	}
	unhandle := strings.NewReplacer(names...)
	var out []string
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		text, _ := vals[len(vals)-1].(string)
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			out = append(out, "  "+unhandle.Replace(l))
		}
	}
	return out, rs.Err()
}

// lakeScanLines renders what each lake table reference of q reads.
func (s *Session) lakeScanLines(q *duckQuery, analyze bool) []string {
	handles := make([]string, 0, len(q.tables))
	for h := range q.tables {
		handles = append(handles, h)
	}
	slices.SortFunc(handles, func(a, b string) int {
		if c := strings.Compare(q.tables[a].QualifiedName(), q.tables[b].QualifiedName()); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, h := range handles {
		e, ok := s.e.scans.get(h)
		if !ok {
			continue
		}
		t := e.table
		out = append(out, "Lake Scan on "+pgQualifiedName(t))
		pc := e.counts
		switch {
		case e.fixed:
			out = append(out, fmt.Sprintf("  Snapshot: fixed (time travel), %d partitions, %d files", pc.partitions, pc.files))
		default:
			listing := "all partitions"
			if descs, terms := candidates(t, e.spec); descs != nil {
				listing = "by partition values"
			} else if terms != nil {
				listing = "by partition terms " + strings.Join(terms, ", ")
			}
			out = append(out, fmt.Sprintf("  Partitions: %d read of %d listed (%s)", pc.partitionsKept, pc.partitions, listing))
			if t.HasPK() && t.HashBucketNum > 1 {
				if pc.buckets == nil {
					out = append(out, fmt.Sprintf("  Buckets: all %d", t.HashBucketNum))
				} else {
					out = append(out, fmt.Sprintf("  Buckets: %d of %d read: %s", len(pc.buckets), t.HashBucketNum, intList(pc.buckets)))
				}
			}
			out = append(out, fmt.Sprintf("  Files: %d in the read partitions and buckets, of %d listed", pc.filesKept, pc.files))
		}
		if k := e.keys(); k != nil {
			out = append(out, "  Key Filter: "+filterText(t, k.Conds))
		}
		if r := e.rows(); r != nil {
			out = append(out, "  Row Filter: "+filterText(t, r.Conds))
			if ix := indexFilter(t, r); ix != nil {
				out = append(out, "  Index Filter: "+filterText(t, ix.Conds))
			}
		}
		if analyze && e.stats != nil {
			out = append(out, statsLines(e.stats.Counts())...)
		}
	}
	return out
}

// filterText renders a filter's conditions on t's columns with their
// values as SQL literals of the columns' types: dates and timestamps (days
// and microseconds to the reader) as PostgreSQL prints them, DECIMALs
// (unscaled integers) with their scale.
func filterText(t *catalog.Table, conds []reader.Cond) string {
	return reader.FormatConds(conds, func(col string, v any) string {
		n, isInt := v.(int64)
		if idx := t.Schema.FieldIndices(col); isInt && len(idx) > 0 {
			switch dt := t.Schema.Field(idx[0]).Type.(type) {
			case *arrow.Date32Type:
				return "'" + arrow.Date32(n).FormattedString() + "'"
			case *arrow.TimestampType:
				if dt.Unit == arrow.Microsecond && dt.TimeZone == "" {
					return "'" + time.UnixMicro(n).UTC().Format("2006-01-02 15:04:05.999999") + "'"
				}
			case *arrow.Decimal128Type:
				return decimalText(big.NewInt(n), int(dt.Scale))
			}
		}
		if s, ok := v.(string); ok {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
		return fmt.Sprint(v)
	})
}

// indexFilter is the part of row filter r on t's indexed columns, which
// skips files by their statistics and bloom filters (reader/indexprune.go);
// nil when r names no indexed column.
func indexFilter(t *catalog.Table, r *reader.RowFilter) *reader.RowFilter {
	var ix reader.RowFilter
	for _, c := range r.Conds {
		if slices.Contains(t.IndexedCols, c.Column) {
			ix.Conds = append(ix.Conds, c)
		}
	}
	if len(ix.Conds) == 0 {
		return nil
	}
	return &ix
}

// statsLines renders a scan's counters.
func statsLines(c reader.ScanCounts) []string {
	return []string{
		fmt.Sprintf("  Files Read: %d of %d (skipped: %d by statistics or page index, %d by bloom filters)",
			c.FilesRead, c.Files, c.FilesSkippedStats, c.FilesSkippedBloom),
		fmt.Sprintf("  Files Skipped by Row Filter: %d by statistics, %d by bloom filters", c.FilesSkippedIndexStats, c.FilesSkippedIndexBloom),
		fmt.Sprintf("  Row Groups Read: %d of %d (skipped: %d by statistics, %d by bloom filters, %d by page index)",
			c.RowGroupsRead, c.RowGroups, c.RowGroupsSkippedStats, c.RowGroupsSkippedBloom, c.RowGroupsSkippedPages),
		fmt.Sprintf("  Key Pages Read: %d of %d", c.Pages-c.PagesSkipped, c.Pages),
		fmt.Sprintf("  Rows: %d read from files, %d merged, %d passed the filters", c.RowsRead, c.RowsMerged, c.RowsOut),
		fmt.Sprintf("  Merge Fan-in: at most %d files at once (%d merges spilled ahead)", c.MergeFiles, c.MergesSpilled),
		fmt.Sprintf("  Files Streamed: %d without merging (keys unique, no other file overlapping)", c.FilesStreamed),
	}
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// countingRows counts and drops rows (EXPLAIN ANALYZE of a direct scan).
type countingRows struct{ n int64 }

func (c *countingRows) WriteRow([]any) error { c.n++; return nil }

// pgQualifiedName is a table's schema-qualified name as PostgreSQL clients
// know it (pgcatalog.SchemaName: LakeSoul's default namespace is public).
func pgQualifiedName(t *catalog.Table) string {
	return pgcatalog.SchemaName(t.Namespace) + "." + t.Name
}
