package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// pruneTestTables are the tables of TestCollectPruneInputs: a (k, x, d),
// b (k, y, s), c (k, z); k is bigint everywhere, x int, d date, s text.
var pruneTestTables = map[string]*catalog.Table{
	"a": {Name: "a", Schema: arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Int32}, {Name: "d", Type: arrow.FixedWidthTypes.Date32}}, nil)},
	"b": {Name: "b", Schema: arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)},
	"c": {Name: "c", Schema: arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "z", Type: arrow.PrimitiveTypes.Int64}}, nil)},
}

// renderInputs renders the terms each lake reference of sql gets, by
// reference name ("a:k<5 x=1"), sorted.
func renderInputs(t *testing.T, sql string) []string {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	stmt := tree.Stmts[0].Stmt
	in := collectPruneInputs(stmt, func(rv *pg_query.RangeVar) *catalog.Table { return pruneTestTables[rv.Relname] })
	ops := map[pruneOp]string{opEq: "=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=", opNe: "<>"}
	var out []string
	for rv, p := range in {
		name := rv.Relname
		if rv.Alias != nil {
			name = rv.Alias.Aliasname
		}
		var terms []string
		for _, term := range p.terms {
			var args []string
			for _, a := range term.args {
				switch a.kind {
				case termParam:
					args = append(args, fmt.Sprintf("$%d", a.param))
				default:
					args = append(args, a.text)
				}
			}
			terms = append(terms, term.col+ops[term.op]+strings.Join(args, ","))
		}
		slices.Sort(terms)
		ex := ""
		if p.exact {
			ex = " exact"
		}
		out = append(out, name+":"+strings.Join(terms, " ")+ex)
	}
	slices.Sort(out)
	return out
}

// Every lake reference in any FROM clause gets the WHERE and ON terms that
// may filter it — and none that may not (the outer-join cases), bare names
// resolved only when they are unambiguous.
func TestCollectPruneInputs(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT * FROM a WHERE k < 5 AND x = 1", []string{"a:k<5 x=1 exact"}},
		{"SELECT * FROM a WHERE k < 5 AND x + 1 = 2", []string{"a:k<5"}},
		{"SELECT * FROM a, b WHERE a.k < 5 AND y = 7 AND s = 'q'", []string{"a:k<5", "b:s=q y=7"}},
		// k is in every table: bare, it is ambiguous.
		{"SELECT * FROM a, b WHERE k < 5", nil},
		{"SELECT * FROM a JOIN b ON a.k = b.k WHERE a.k < 5", []string{"a:k<5", "b:k<5"}},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND b.y > 3 JOIN c ON c.k = b.k WHERE x BETWEEN 1 AND 2",
			[]string{"a:x<=2 x>=1", "b:y>3"}},
		{"SELECT * FROM a JOIN b ON a.k = b.k JOIN c ON c.k = b.k WHERE c.k IN (1, 2)",
			[]string{"a:k=1,2", "b:k=1,2", "c:k=1,2"}},
		// LEFT JOIN: ON terms filter the right side only; WHERE terms both.
		{"SELECT * FROM a LEFT JOIN b ON a.k = b.k AND a.x = 1 AND b.y = 2", []string{"b:y=2"}},
		{"SELECT * FROM a LEFT JOIN b ON a.k = b.k WHERE b.y = 2 AND a.x = 1", []string{"a:x=1", "b:y=2"}},
		{"SELECT * FROM a RIGHT JOIN b ON a.k = b.k AND a.x = 1 AND b.y = 2", []string{"a:x=1"}},
		{"SELECT * FROM a FULL JOIN b ON a.k = b.k AND a.x = 1 AND b.y = 2", nil},
		// A LEFT JOIN's ON equality carries nothing to the preserved side.
		{"SELECT * FROM a LEFT JOIN b ON a.k = b.k AND b.k = 3", []string{"b:k=3"}},
		// Subqueries and CTE bodies have their own scopes; an outer column
		// is not a term of the inner reference.
		{"SELECT * FROM a WHERE a.k IN (SELECT b.k FROM b WHERE b.y = a.x AND b.y < 3)", []string{"b:y<3"}},
		{"WITH w AS (SELECT * FROM b WHERE y = 1) SELECT * FROM w JOIN a ON a.k = w.k WHERE a.x = 2",
			[]string{"a:x=2", "b:y=1 exact"}},
		// An opaque FROM item (subquery, function) makes bare names unknown.
		{"SELECT * FROM a, generate_series(1, 3) g WHERE x = 1 AND a.k = 2", []string{"a:k=2"}},
		// Folded constants and LIKE prefixes.
		{"SELECT * FROM a WHERE d >= DATE '1994-01-01' AND d < DATE '1994-01-01' + INTERVAL '1 year'",
			[]string{"a:d<1995-01-01 d>=1994-01-01 exact"}},
		{"SELECT * FROM a WHERE d <= DATE '1998-12-01' - INTERVAL '90' DAY", []string{"a:d<=1998-09-02 exact"}},
		{"SELECT * FROM a WHERE d < DATE '2024-01-31' + INTERVAL '1 month'", []string{"a:d<2024-02-29 exact"}},
		{"SELECT * FROM a WHERE d < date '1994-01-01' + interval '1' year AND d >= date '1993-10-01' + interval '3' month",
			[]string{"a:d<1995-01-01 d>=1994-01-01 exact"}},
		{"SELECT * FROM a WHERE d < '1994-01-01'::date + 7 AND d > DATE '1994-01-01' - INTERVAL '2 weeks 1 day'",
			[]string{"a:d<1994-01-08 d>1993-12-17 exact"}},
		{"SELECT * FROM a WHERE d < DATE '2024-01-31' + INTERVAL '1 hour'", nil},
		{"SELECT * FROM b WHERE s LIKE 'ab%c'", []string{"b:s<ac s>=ab"}},
		{"SELECT * FROM b WHERE s LIKE '%ab'", nil},
		{"SELECT * FROM a JOIN b ON a.k = b.k WHERE b.k = $1", []string{"a:k=$1", "b:k=$1"}},
		// USING and NATURAL merge k: bare, it is not a table's column.
		{"SELECT * FROM a JOIN b USING (k) WHERE k = 1 AND y = 2", []string{"b:y=2"}},
		{"SELECT * FROM a NATURAL JOIN c WHERE k = 1 AND z = 2", []string{"c:z=2"}},
		{"SELECT * FROM a CROSS JOIN b WHERE a.k = b.k AND b.k < 9", []string{"a:k<9", "b:k<9"}},
		// A join alias hides the tables' names; a LATERAL subquery is
		// opaque (and its own scope).
		{"SELECT * FROM (a JOIN b ON a.k = b.k) AS j WHERE j.x = 1 AND y = 2", []string{"b:y=2"}},
		{"SELECT * FROM a, LATERAL (SELECT * FROM c WHERE c.k = a.k AND z = 3) l WHERE a.x = 4",
			[]string{"a:x=4", "c:z=3"}},
		// Columns of different types carry nothing.
		{"SELECT * FROM a JOIN b ON a.x = b.y WHERE b.y = 3", []string{"b:y=3"}},
	} {
		got := renderInputs(t, c.sql)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, got, c.want)
		}
	}
}

// isoTimestamp reads exactly the ISO forms it claims, to the microsecond.
func TestISOTimestamp(t *testing.T) {
	for text, want := range map[string]int64{
		"1970-01-01":                 0,
		"1970-01-01 00:00":           0,
		"1970-01-02T00:00:01":        86400e6 + 1e6,
		"1970-01-01 00:00:00.5":      500000,
		"1970-01-01 00:00:00.000001": 1,
		"2026-03-04 05:06:07.123":    time.Date(2026, 3, 4, 5, 6, 7, 123e6, time.UTC).UnixMicro(),
	} {
		if got, ok := isoTimestamp(text); !ok || got != want {
			t.Errorf("%q: %d, %v; want %d", text, got, ok, want)
		}
	}
	for _, text := range []string{"1970-01-01.5", "1970-01-01 00:00:00.0000001", "1970-01-01 00:00:00+02", "now", "12345", "1970-01-01 24:00:00"} {
		if got, ok := isoTimestamp(text); ok {
			t.Errorf("%q read as %d", text, got)
		}
	}
}
