package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// noRelationCorpus is the corpus TestDifferential (tests/) compares with
// PostgreSQL.
const noRelationCorpus = "../tests/testdata/norelation.sql"

func readNoRelationCorpus(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(noRelationCorpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" && !strings.HasPrefix(q, "--") {
			out = append(out, q)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func parseOne(t *testing.T, q string) *pg_query.Node {
	t.Helper()
	r, err := pg_query.Parse(q)
	if err != nil || len(r.Stmts) != 1 {
		t.Fatalf("%s: %v", q, err)
	}
	return r.Stmts[0].Stmt
}

// Every query of the corpus takes the DuckDB route, and every function,
// operator and cast that route allows is used by one of them: an entry
// added to pgDuckFunctions, pgDuckOperators or pgDuckCasts without a query
// TestDifferential compares with PostgreSQL fails here.
func TestNoRelationCorpus(t *testing.T) {
	ctx := context.Background()
	s, _ := newInternalSession(t)
	used := map[string]bool{}
	for _, q := range readNoRelationCorpus(t) {
		stmt := parseOne(t, q)
		if _, ok := duckAnswers(stmt); !ok {
			t.Errorf("not answered by DuckDB: %s", q)
			continue
		}
		walk(stmt, func(n *pg_query.Node) {
			switch {
			case n.GetFuncCall() != nil:
				used["function "+funcName(n.GetFuncCall())] = true
			case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP:
				used["operator "+operatorName(n.GetAExpr())] = true
			case n.GetTypeCast() != nil:
				used["cast "+castTargetName(n.GetTypeCast().TypeName)] = true
			}
		})
		// DuckDB may refuse a query while it plans (1/0 is folded): the
		// error is the route's answer. Planned, it must be DuckDB's plan,
		// not the catalog's (planNoRelation's type check).
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			continue
		}
		if _, ok := stmts[0].(*trackedStmt).Statement.(*duckQuery); !ok {
			t.Errorf("planned on the catalog: %s (%T)", q, stmts[0].(*trackedStmt).Statement)
		}
	}
	var want []string
	for name := range pgDuckFunctions {
		want = append(want, "function "+name)
	}
	for op := range pgDuckOperators {
		want = append(want, "operator "+op)
	}
	for op := range comparisonOps {
		want = append(want, "operator "+op)
	}
	for c := range pgDuckCasts {
		want = append(want, "cast "+c)
	}
	sort.Strings(want)
	for _, w := range want {
		if !used[w] {
			t.Errorf("%s is allowed on the DuckDB route but no query of %s uses it", w, noRelationCorpus)
		}
	}
}

// Every function of the catalog PostgreSQL that the route's table does not
// list keeps a statement calling it on the catalog, whatever its arguments
// — version(), current_setting, pg_*, has_*_privilege, to_regclass,
// txid_current, now(), … — and so do the SQL-standard functions that read
// the session (current_user, current_schema, current_timestamp, …).
func TestNoRelationCatalogFunctions(t *testing.T) {
	ctx := context.Background()
	s, _ := newInternalSession(t)
	rows, err := s.e.cat.Pool().Query(ctx, `SELECT p.proname, coalesce(array_agg(format_type(a.t, NULL) ORDER BY a.n) FILTER (WHERE a.t IS NOT NULL), '{}')
		FROM pg_proc p LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, n) ON true
		WHERE p.prokind IN ('f', 'a', 'w') GROUP BY p.oid, p.proname`)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct {
		name string
		args []string
	}
	var fns []fn
	for rows.Next() {
		var f fn
		if err := rows.Scan(&f.name, &f.args); err != nil {
			t.Fatal(err)
		}
		fns = append(fns, f)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(fns) < 2000 {
		t.Fatalf("only %d functions in pg_proc", len(fns))
	}
	checked := 0
	for _, f := range fns {
		if _, ok := pgDuckFunctions[f.name]; ok {
			continue
		}
		args := make([]string, len(f.args))
		for i, a := range f.args {
			args[i] = "NULL::" + a
		}
		for _, q := range []string{
			fmt.Sprintf("SELECT %s(%s)", quoteIdent(f.name), strings.Join(args, ", ")),
			fmt.Sprintf("SELECT pg_catalog.%s(%s)", quoteIdent(f.name), strings.Repeat("'x', ", len(args)/2)+strings.TrimSuffix(strings.Repeat("1, ", len(args)-len(args)/2), ", ")),
			fmt.Sprintf("SELECT * FROM %s(%s)", quoteIdent(f.name), strings.Join(args, ", ")),
		} {
			r, err := pg_query.Parse(q)
			if err != nil {
				continue // a name the grammar reserves
			}
			checked++
			if _, ok := duckAnswers(r.Stmts[0].Stmt); ok {
				t.Errorf("%s(%s) is not in pgDuckFunctions, yet %q would run on DuckDB", f.name, strings.Join(f.args, ", "), q)
			}
		}
	}
	t.Logf("%d functions, %d statements checked", len(fns), checked)
	for _, q := range []string{"SELECT current_user", "SELECT session_user", "SELECT current_role", "SELECT user",
		"SELECT current_catalog", "SELECT current_schema", "SELECT current_date", "SELECT current_timestamp",
		"SELECT localtimestamp", "SELECT current_time", "SELECT localtime", "SELECT $1::int", "SELECT 1 FOR UPDATE",
		"SELECT 'a' LIKE 'a'", "SELECT 'a' ~ 'a'", "SELECT lower('A')", "SELECT avg(1)", "SELECT array_agg(1)",
		"SELECT string_agg('a', ',')", "SELECT ARRAY(SELECT 1)", "SELECT row_number() OVER ()", "SELECT 'x'::regclass",
		"SELECT 1::oid", "SELECT 'a'::name", "SELECT now()", "SELECT '1'::int + 1.5::numeric / 2"} {
		if _, ok := duckAnswers(parseOne(t, q)); ok {
			t.Errorf("%q would run on DuckDB", q)
		}
	}
}
