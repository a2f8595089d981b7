package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/writer"
)

// CHECK constraints.
//
// A table's CHECK constraints are table properties "pg_check.<name>" holding
// PostgreSQL expression text over its columns. They hold for every row a
// write makes, on every write path: before a write commits (or is staged in a
// block), the rows it wrote are read back from its new files and any row
// whose condition is false fails the write with 23514, so nothing of it
// becomes visible. A write that leaves columns out (a partial upsert of a
// primary-key table) is checked on the merged rows of the partitions it
// wrote, since a condition may name a column it kept.

const checkPropertyPrefix = catalog.CheckPropertyPrefix

// tableCheck is one CHECK constraint.
type tableCheck struct {
	name, expr string
	cols       []string // the columns it names
}

// tableChecks returns t's CHECK constraints, by name.
func tableChecks(t *catalog.Table) []tableCheck {
	var out []tableCheck
	for k, v := range t.Properties {
		name, ok := strings.CutPrefix(k, checkPropertyPrefix)
		if !ok {
			continue
		}
		c := tableCheck{name: name, expr: v}
		if expr, err := parseStoredExpr(v, "check constraint "+name); err == nil {
			walk(expr, func(n *pg_query.Node) {
				if cr := n.GetColumnRef(); cr != nil {
					if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
						c.cols = append(c.cols, s.Sval)
					}
				}
			})
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// addCheck records a CHECK constraint of CREATE TABLE on t (named as
// PostgreSQL names it when the statement does not), after checking that it
// translates over t's columns.
func (s *Session) addCheck(ctx context.Context, t *catalog.Table, con *pg_query.Constraint, column string) error {
	if con.IsNoInherit || con.SkipValidation {
		return sqlerr.Unsupported("CHECK … NO INHERIT / NOT VALID", "CHECK (condition)")
	}
	// Its names are bound now, with the creator's search_path and rights
	// (storedrefs.go).
	if err := s.storedDefinition(ctx, con.RawExpr); err != nil {
		return err
	}
	text, err := deparseExpr(con.RawExpr)
	if err != nil {
		return err
	}
	name := con.Conname
	if name == "" {
		name = t.Name + "_check"
		if column != "" {
			name = t.Name + "_" + column + "_check"
		}
		for i := 1; t.Properties[checkPropertyPrefix+name] != ""; i++ {
			name = fmt.Sprintf("%s_check%d", strings.TrimSuffix(name, "_check"), i)
		}
	}
	if _, dup := t.Properties[checkPropertyPrefix+name]; dup {
		return sqlerr.New(sqlerr.DuplicateObject, "constraint %q for relation %q already exists", name, t.Name)
	}
	if _, err := s.checkQuery(ctx, t, "", tableCheck{name: name, expr: text}); err != nil {
		return err
	}
	t.Properties[checkPropertyPrefix+name] = text
	return nil
}

// checkQuery is the DuckDB query counting the rows of handle's scan of t
// for which check's condition is false.
func (s *Session) checkQuery(ctx context.Context, t *catalog.Table, handle string, check tableCheck) (string, error) {
	return s.checkQueryOf(ctx, t, handle, check, false)
}

// checkQueryOf is checkQuery; with row, the query selects the columns of
// the first violating row instead of counting them.
func (s *Session) checkQueryOf(ctx context.Context, t *catalog.Table, handle string, check tableCheck, row bool) (string, error) {
	if handle == "" {
		handle = s.token + ":check:" + t.ID
		s.e.scans.putFixed(handle, t, nil)
	}
	cond, err := s.storedExpr(ctx, check.expr, "check constraint "+check.name, t.Namespace) // storedrefs.go
	if err != nil {
		return "", err
	}
	isFalse := &pg_query.Node{Node: &pg_query.Node_BooleanTest{BooleanTest: &pg_query.BooleanTest{
		Arg: cond, Booltesttype: pg_query.BoolTestType_IS_FALSE, Location: -1}}}
	targets := []*pg_query.Node{resTarget("", countStar())}
	if row {
		targets = targets[:0]
		for _, f := range t.Schema.Fields() {
			targets = append(targets, resTarget("", colRef(t.Name, f.Name)))
		}
	}
	sel := selectNode(targets, []*pg_query.Node{scanFromClause(handle, &pg_query.Alias{Aliasname: t.Name})}, isFalse)
	if row {
		sel.GetSelectStmt().LimitCount = pg_query.MakeAConstIntNode(1, -1)
		sel.GetSelectStmt().LimitOption = pg_query.LimitOption_LIMIT_OPTION_COUNT
	}
	var sub bool
	walk(sel, func(n *pg_query.Node) { sub = sub || n.GetSubLink() != nil })
	if sub {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in check constraint")
	}
	text, _, _, _, err := s.prepareDuck(ctx, sel, nil)
	return text, err
}

// verifyChecks fails (23514) when a row written to t by the files of
// written breaks one of t's CHECK constraints; partial lists the table's
// columns the write left out.
func (s *Session) verifyChecks(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit, partial []string) error {
	checks := tableChecks(t)
	if len(checks) == 0 || len(written) == 0 {
		return nil
	}
	// The written rows alone, unless a condition names a column left out.
	merged := false
	for _, c := range checks {
		for _, col := range c.cols {
			merged = merged || slices.Contains(partial, col)
		}
	}
	var parts []catalog.PartitionFiles
	if merged {
		var err error
		if parts, err = s.mergedWith(ctx, t, written); err != nil {
			return err
		}
	} else {
		for _, w := range written {
			p := catalog.PartitionFiles{Desc: w.Desc, Version: -1}
			for _, op := range w.Ops {
				if op.Op == "add" {
					p.Files = append(p.Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
				}
			}
			parts = append(parts, p)
		}
	}
	if err := reader.CheckFiles(t, parts); err != nil {
		return err
	}
	handle := s.token + ":checkrows:" + t.ID
	s.e.scans.putFixed(handle, t, parts)
	for _, c := range checks {
		q, err := s.checkQuery(ctx, t, handle, c)
		if err != nil {
			return err
		}
		var n int64
		if err := s.duck.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			detail := ""
			if merged || len(partial) == 0 { // whole rows
				detail = s.checkFailingRow(ctx, t, handle, c)
			}
			return writer.CheckViolation(t, c.name, detail)
		}
	}
	return nil
}

// mergedWith is the table as the session sees it in the partitions written
// touched (committed and staged files), with written's files on top.
func (s *Session) mergedWith(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit) ([]catalog.PartitionFiles, error) {
	var descs []string
	for _, p := range written {
		descs = append(descs, p.Desc)
	}
	parts, err := s.cat.LiveFiles(ctx, t.ID, descs)
	if err != nil {
		return nil, err
	}
	if parts, err = s.snapshotForBlock(ctx, t, parts); err != nil {
		return nil, err
	}
	for _, w := range written {
		i := slices.IndexFunc(parts, func(p catalog.PartitionFiles) bool { return p.Desc == w.Desc })
		if i < 0 {
			parts = append(parts, catalog.PartitionFiles{Desc: w.Desc, Version: -1})
			i = len(parts) - 1
		}
		// A rewrite replaces the partition's files (its "del" ops).
		var kept []catalog.DataFile
		for _, f := range parts[i].Files {
			if !slices.ContainsFunc(w.Ops, func(op catalog.FileOp) bool { return op.Op == "del" && op.Path == f.Path }) {
				kept = append(kept, f)
			}
		}
		parts[i].Files = kept
		for _, op := range w.Ops {
			if op.Op == "add" {
				parts[i].Files = append(parts[i].Files, catalog.DataFile{Path: op.Path, Size: op.Size, ExistCols: op.ExistCols})
			}
		}
	}
	return parts, nil
}

// VerifyChecks fails (23514) when a row of the files written to t breaks
// one of t's CHECK constraints, for writers outside any session: CDC sync
// (cdc.Env.VerifyChecks) writes as the catalog's owner, and the check runs
// on a session of the owner's handle made for it. A write without checks
// costs nothing.
func (e *Engine) VerifyChecks(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit) error {
	if len(tableChecks(t)) == 0 || len(written) == 0 {
		return nil
	}
	duck, err := e.duck.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open duckdb connection: %w", err)
	}
	defer duck.Close()
	token, err := sessionToken()
	if err != nil {
		return err
	}
	s := &Session{e: e, superuser: true, cat: e.cat, token: token, duck: &duckConn{conn: duck}}
	s.settings = s.defaultSettings(nil)
	defer e.scans.dropPrefix(s.token + ":")
	return s.verifyChecks(ctx, t, written, nil)
}

// checkFailingRow is PostgreSQL's "Failing row contains (…)." of the first
// row breaking check among the rows behind handle ("" when it cannot be
// read: the error is the violation, the detail an aid).
func (s *Session) checkFailingRow(ctx context.Context, t *catalog.Table, handle string, check tableCheck) string {
	q, err := s.checkQueryOf(ctx, t, handle, check, true)
	if err != nil {
		return ""
	}
	vals := make([]any, t.Schema.NumFields())
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := s.duck.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
		return ""
	}
	texts := make([]string, len(vals))
	for i, v := range vals {
		texts[i] = rowValueText(v, t.Schema.Field(i))
	}
	return "Failing row contains (" + strings.Join(texts, ", ") + ")."
}

// rowValueText is a value DuckDB returned for column f as PostgreSQL's
// output function writes it in a row's text, as writer.FailingRow does for
// written rows (timestamps with a zone in UTC).
func rowValueText(v any, f arrow.Field) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "t"
		}
		return "f"
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case duckdb.Decimal:
		return decimal128.FromBigInt(x.Value).ToString(int32(x.Scale))
	case time.Time:
		switch tt := f.Type.(type) {
		case *arrow.Date32Type:
			return x.Format("2006-01-02")
		case *arrow.TimestampType:
			if tt.TimeZone != "" {
				return x.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
			}
			return x.Format("2006-01-02 15:04:05.999999")
		}
	}
	return fmt.Sprint(v)
}
