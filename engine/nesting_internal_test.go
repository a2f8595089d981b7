package engine

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/internal/pgtree"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// deepStatements build statements nested n levels deep, one per way of
// nesting the grammar offers.
var deepStatements = map[string]func(n int) string{
	"plus":     func(n int) string { return "SELECT 1" + strings.Repeat("+1", n) },
	"concat":   func(n int) string { return "SELECT 'a'" + strings.Repeat("||'a'", n) },
	"parens":   func(n int) string { return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) },
	"subquery": func(n int) string { return "SELECT " + strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n) },
	"from": func(n int) string {
		return "SELECT 1 FROM " + strings.Repeat("(SELECT 1 FROM ", n) + "t" + strings.Repeat(") x", n)
	},
	"case": func(n int) string {
		return "SELECT " + strings.Repeat("CASE WHEN true THEN ", n) + "1" + strings.Repeat(" END", n)
	},
	"caseelse": func(n int) string {
		return "SELECT " + strings.Repeat("CASE WHEN x THEN 1 ELSE ", n) + "1" + strings.Repeat(" END", n)
	},
	"array":    func(n int) string { return "SELECT " + strings.Repeat("ARRAY[", n) + "1" + strings.Repeat("]", n) },
	"brackets": func(n int) string { return "SELECT " + strings.Repeat("ARRAY[1, ", n) + "1" + strings.Repeat("]", n) },
	"not":      func(n int) string { return "SELECT " + strings.Repeat("NOT ", n) + "true" },
	"minus":    func(n int) string { return "SELECT " + strings.Repeat("- ", n) + "1" },
	"cast":     func(n int) string { return "SELECT 1" + strings.Repeat("::int", n) },
	"isnull":   func(n int) string { return "SELECT x" + strings.Repeat(" IS NULL", n) },
	"collate":  func(n int) string { return "SELECT x" + strings.Repeat(` COLLATE "C"`, n) },
	"timezone": func(n int) string { return "SELECT x" + strings.Repeat(" AT TIME ZONE 'UTC'", n) },
	"json":     func(n int) string { return "SELECT x" + strings.Repeat(" -> 'a'", n) },
	"funcs":    func(n int) string { return "SELECT " + strings.Repeat("f(", n) + "1" + strings.Repeat(")", n) },
	"coalesce": func(n int) string {
		return "SELECT " + strings.Repeat("coalesce(x, ", n) + "1" + strings.Repeat(")", n)
	},
	"row":    func(n int) string { return "SELECT " + strings.Repeat("ROW(1, ", n) + "1" + strings.Repeat(")", n) },
	"inlist": func(n int) string { return "SELECT " + strings.Repeat("x IN (1, ", n) + "1" + strings.Repeat(")", n) },
	"exists": func(n int) string {
		return "SELECT " + strings.Repeat("EXISTS (SELECT ", n) + "1" + strings.Repeat(")", n)
	},
	"union": func(n int) string {
		return "SELECT a, b FROM t" + strings.Repeat(" UNION ALL SELECT a, b FROM t WHERE a = 1 AND b = 2", n)
	},
	"join": func(n int) string { return "SELECT 1 FROM t" + strings.Repeat(" JOIN t ON a = 1 AND b = 2", n) },
	"joinparen": func(n int) string {
		return "SELECT 1 FROM " + strings.Repeat("(t JOIN ", n) + "t" + strings.Repeat(" ON true)", n)
	},
	"andnot": func(n int) string {
		return "SELECT 1 WHERE " + strings.Repeat("NOT (a AND ", n) + "b" + strings.Repeat(")", n)
	},
	"andor": func(n int) string {
		return "SELECT 1 WHERE " + strings.Repeat("(a OR b) AND (", n) + "c" + strings.Repeat(")", n)
	},
	"cte": func(n int) string {
		return strings.Repeat("WITH x AS (", n) + "SELECT 1" + strings.Repeat(") SELECT * FROM x", n)
	},
}

// treeDepth is the depth of m in message levels, as the recursion limit of
// parseSQL counts them.
func treeDepth(m protoreflect.Message) int {
	depth := map[protoreflect.Message]int{m: 1}
	deepest := 0
	pgtree.Walk(m, func(m protoreflect.Message) {
		d := depth[m]
		delete(depth, m)
		deepest = max(deepest, d)
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil, fd.IsMap():
			case fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					depth[v.List().Get(i).Message()] = d + 1
				}
			default:
				depth[v.Message()] = d + 1
			}
			return true
		})
	})
	return deepest
}

// TestNestingRefusedWithoutCrash parses statements nested 40 000 deep (of
// which `SELECT 1+1+…` killed the server with SIGSEGV in pg_query's C code):
// each is refused with 54001 and the process lives on.
func TestNestingRefusedWithoutCrash(t *testing.T) {
	for name, build := range deepStatements {
		for _, n := range []int{40000, 3000} {
			_, err := parseSQL(build(n))
			if got := sqlerr.Code(err); got != sqlerr.StatementTooComplex {
				t.Errorf("%s, %d levels: got %s (%v), want 54001", name, n, got, err)
			}
		}
	}
}

// TestNestingEstimateBoundsDepth checks the estimate against the real tree
// for every way of nesting: a statement under the estimate's limit must stay
// within a few tree levels per estimate unit (the margin that keeps the C
// code's recursion shallow), and the exact limit must hold where the
// estimate lets a statement through.
func TestNestingEstimateBoundsDepth(t *testing.T) {
	for name, build := range deepStatements {
		for _, n := range []int{1, 10, 100} {
			text := build(n)
			est, err := nestingEstimate(text, maxNestingEstimate)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, err := pg_query.Parse(text)
			if err != nil {
				t.Fatalf("%s, %d levels: %v", name, n, err)
			}
			depth := treeDepth(b.ProtoReflect())
			t.Logf("%s, %d levels: depth %d, estimate %d", name, n, depth, est)
			if depth > 4*est+12 {
				t.Errorf("%s, %d levels: tree depth %d, estimate only %d", name, n, depth, est)
			}
		}
	}
}

// TestShallowStatementsAccepted: large statements whose trees are shallow
// — bulk VALUES, long IN lists, AND/OR chains, CASE with many branches, wide
// select lists and tables — are not refused.
func TestShallowStatementsAccepted(t *testing.T) {
	rows := make([]string, 10000)
	for i := range rows {
		rows[i] = "(1, 'a', NULL, DEFAULT, 2.5::float8, DATE '2026-01-01')"
	}
	ors := make([]string, 10000)
	for i := range ors {
		ors[i] = "(a = 1 AND b <> 'x' AND c IS NOT NULL)"
	}
	cols := make([]string, 1600)
	defs := make([]string, 1600)
	for i := range cols {
		cols[i] = "coalesce(c::text, 'x') AS c"
		defs[i] = "c int NOT NULL DEFAULT 0 CHECK (c > 0) REFERENCES u (c) ON DELETE CASCADE"
	}
	for name, text := range map[string]string{
		"values":  "INSERT INTO s.t VALUES " + strings.Join(rows, ", "),
		"in":      "SELECT * FROM s.t WHERE id IN (1" + strings.Repeat(", 1", 100000) + ")",
		"and":     "SELECT * FROM s.t WHERE true" + strings.Repeat(" AND x = 1", 10000),
		"or":      "SELECT * FROM s.t WHERE " + strings.Join(ors, " OR "),
		"case":    "SELECT CASE" + strings.Repeat(" WHEN x = 1 THEN 'a'", 10000) + " ELSE 'b' END FROM s.t",
		"select":  "SELECT " + strings.Join(cols, ", ") + " FROM s.t",
		"create":  "CREATE TABLE s.w (" + strings.Join(defs, ", ") + ")",
		"union":   "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 100),
		"many":    strings.Repeat("SELECT 1+1+1+1+1+1+1+1+1+1; ", 5000),
		"between": "SELECT 1 WHERE " + strings.Repeat("x BETWEEN 0 AND 1 AND ", 10000) + "true",
	} {
		if _, err := parseSQL(text); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSubqueryNesting: chains of nested subqueries up to maxSubqueryChain
// parse, deeper ones (and branching ones of equal planning work) are
// refused with 54001; nested FROM subqueries and many sibling subqueries,
// which DuckDB plans in linear time, are not.
func TestSubqueryNesting(t *testing.T) {
	chain := func(open string, n int) string {
		return "SELECT 1 FROM t WHERE " + strings.Repeat(open, n) + "1" + strings.Repeat(")", n)
	}
	wide := func(n int) string {
		e := "1"
		for range n {
			e = "(SELECT " + e + " + " + e + ")"
		}
		return "SELECT " + e
	}
	siblings := make([]string, 1000)
	for i := range siblings {
		siblings[i] = "(SELECT 1)"
	}
	for name, tc := range map[string]struct {
		text string
		ok   bool
	}{
		"scalar 16":   {chain("(SELECT ", maxSubqueryChain), true},
		"scalar 17":   {chain("(SELECT ", maxSubqueryChain+1), false},
		"exists 17":   {chain("EXISTS (SELECT 1 WHERE ", maxSubqueryChain+1), false},
		"in 17":       {chain("x IN (SELECT ", maxSubqueryChain+1), false},
		"upper case":  {strings.ToUpper(chain("(select ", maxSubqueryChain+1)), false},
		"wide 8":      {wide(8), true},
		"wide 9":      {wide(9), false},
		"from 40":     {"SELECT * FROM " + strings.Repeat("(SELECT * FROM ", 40) + "t" + strings.Repeat(") x", 40), true},
		"siblings":    {"SELECT " + strings.Join(siblings, ", "), true},
		"union 100":   {"SELECT 1" + strings.Repeat(" UNION ALL SELECT (SELECT 1)", 100), true},
		"in a string": {"SELECT '" + strings.Repeat("(SELECT ", 40) + "'", true},
	} {
		_, err := parseSQL(tc.text)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", name, err)
		case !tc.ok && sqlerr.Code(err) != sqlerr.StatementTooComplex:
			t.Errorf("%s: %v, want 54001", name, err)
		}
	}
}
