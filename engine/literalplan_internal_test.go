package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// literalPlanTable is the table of the literal-plan tests, on the engine
// and on PostgreSQL alike: a column of each type the comparisons meet.
const literalPlanTable = `CREATE TABLE lp_t (id bigint PRIMARY KEY, i2 smallint, i4 int, i8 bigint, t text, vc varchar(8),
	bc char(4), n numeric(10,2), f double precision, d date, b boolean)`

var literalPlanRows = []string{
	`(1, 0, 0, 0, 'a', 'a', 'a', 0, 0, '2020-01-01', true)`,
	`(2, 5, 5, 5, 'it''s', 'it''s', 'ab', 1.5, 0.1, '2020-01-02', false)`,
	`(3, -5, -5, -5, '', '', '', -1.5, -0.1, '1999-12-31', NULL)`,
	`(4, 32767, 2147483647, 3000000000, 'A', 'A', 'ab  ', 1, 1, '2021-06-01', true)`,
	`(5, NULL, NULL, 9223372036854775807, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(6, 7, -2147483648, -9223372036854775807, 'a\b', 'a\b', 'a\b', 99999999.99, 1e10, '2020-01-01', false)`,
	`(7, 5, 5, 2147483648, 'ab', 'ab', 'a', 1.50, 'NaN', '2020-01-02', true)`,
	`(8, 1, 1, 1, 'é', 'é', 'é', 0.01, -1e-10, '2000-02-29', true)`,
}

// literalPlanLiterals are spellings of literals compared with each column:
// the kinds a plan may take as parameters and those it must keep (typed,
// negated, escaped, continued, of another type than the column).
var literalPlanLiterals = map[string][]string{
	"int": {"0", "5", "-5", "7", "2147483647", "2147483648", "3000000000", "9223372036854775807", "9223372036854775808",
		"1.5", "'5'", "5::int8", "int8 '5'", "(5)", "+5", "005", "32768", "NULL"},
	"text": {"'a'", "'it''s'", "''", "'ab  '", "'ab'", `E'a\\b'`, `'a\b'`, `U&'\0061'`, "$$a$$", "'a'::text", "'A'", "'é'",
		"'a'\n'b'", "5", "NULL"},
	"numeric": {"1.5", "1", "'1.50'", "1e0", "0"},
	"float":   {"0.1", "1", "'NaN'", "-0.1"},
	"date":    {"'2020-01-01'", "DATE '2020-01-02'", "'2020-01-01'::date"},
	"bool":    {"true", "'t'", "false"},
}

var literalPlanColumns = []struct{ name, kind string }{
	{"id", "int"}, {"i2", "int"}, {"i4", "int"}, {"i8", "int"}, {"t", "text"}, {"vc", "text"}, {"bc", "text"},
	{"n", "numeric"}, {"f", "float"}, {"d", "date"}, {"b", "bool"},
}

// literalPlanStatements generates the statements: each column compared
// with each literal by each operator, in several statement forms, so that
// one shape is met again with other literals.
func literalPlanStatements() []string {
	forms := []string{
		"SELECT id FROM lp_t WHERE %[1]s %[2]s %[3]s",
		"SELECT id FROM lp_t AS x WHERE x.%[1]s %[2]s %[3]s AND id > 0",
		"SELECT id FROM lp_t WHERE %[3]s %[2]s %[1]s OR id = 8",
		"SELECT id, %[1]s FROM lp_t WHERE %[1]s %[2]s %[3]s ORDER BY id LIMIT 3",
	}
	var out []string
	for _, c := range literalPlanColumns {
		lits := literalPlanLiterals[c.kind]
		for _, form := range forms {
			for _, op := range []string{"=", "<>", "<", ">="} {
				for _, l := range lits {
					out = append(out, fmt.Sprintf(form, c.name, op, l))
				}
			}
		}
		for i, l := range lits {
			l2 := lits[(i+1)%len(lits)]
			out = append(out, fmt.Sprintf("SELECT id FROM lp_t WHERE %s IN (%s, %s)", c.name, l, l2),
				fmt.Sprintf("SELECT id FROM lp_t WHERE %s NOT IN (%s, %s)", c.name, l, l2))
		}
	}
	return out
}

// An answer is a statement's rows, sorted, or its error.
func answerOf(rows []string, err error) string {
	if err != nil {
		// The first line: DuckDB's context lines name the statement's
		// own scan handles.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return "ERROR " + sqlerr.Code(err) + ": " + msg
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// runParsed runs one planned statement and returns its answer.
func runParsed(ctx context.Context, st pgwire.Statement) string {
	p, err := st.Bind(ctx, nil)
	if err != nil {
		return answerOf(nil, err)
	}
	defer p.Close()
	var rows []string
	w := rowFunc(func(vals []any) error {
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = fmt.Sprint(v)
		}
		rows = append(rows, strings.Join(cells, "|"))
		return nil
	})
	_, _, err = p.Execute(ctx, 0, w)
	return answerOf(rows, err)
}

// uncachedAnswer plans q as Parse does without any kept plan.
func uncachedAnswer(ctx context.Context, s *Session, q string) string {
	tree, err := parseSQL(q)
	if err != nil {
		return answerOf(nil, parseError(err))
	}
	st, err := s.plan(ctx, tree.Stmts[0].Stmt, nil)
	if err != nil {
		return answerOf(nil, err)
	}
	return runParsed(ctx, st)
}

// pgAnswer is PostgreSQL's answer to q: rows of the first column (the
// id), or the SQLSTATE.
func pgAnswer(ctx context.Context, conn *pgx.Conn, q string) string {
	rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return pgError(err)
	}
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return pgError(err)
		}
		out = append(out, fmt.Sprint(vals[0]))
	}
	if err := rows.Err(); err != nil {
		return pgError(err)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func pgError(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return "ERROR " + pe.Code
	}
	return "ERROR " + err.Error()
}

// firstColumns keeps the first column of each row of an answer.
func firstColumns(answer string) string {
	if strings.HasPrefix(answer, "ERROR ") {
		code, _, _ := strings.Cut(answer, ":")
		return code
	}
	lines := strings.Split(answer, "\n")
	for i, l := range lines {
		lines[i], _, _ = strings.Cut(l, "|")
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// Every generated statement answers through the session's kept plans —
// plans shared by texts that differ in literals included — exactly as it
// answers planned afresh; and each statement whose literals a shared plan
// took as parameters answers as PostgreSQL does.
func TestLiteralPlansAnswerAsUncached(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec(literalPlanTable + " WITH (hash_bucket_num = 2)")
	exec("INSERT INTO lp_t VALUES " + strings.Join(literalPlanRows, ", "))
	fresh, err := s.e.NewSession(ctx, map[string]string{"user": s.user, "database": DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	uncached := fresh.(*Session)
	t.Cleanup(uncached.Close)

	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, q := range []string{literalPlanTable, "INSERT INTO lp_t VALUES " + strings.Join(literalPlanRows, ", ")} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	var parameterised, reused int
	for _, q := range literalPlanStatements() {
		var kept *duckQuery
		if shape, _, ok := literalShape(q); ok {
			if p := s.plans.m[planKey{text: shape, params: literalKey}]; p != nil {
				kept = p.q
			}
		}
		var got string
		stmts, err := s.Parse(ctx, q, nil)
		var ls *literalStmt
		if err != nil {
			got = answerOf(nil, err)
		} else {
			ls, _ = stmts[0].(*trackedStmt).Statement.(*literalStmt)
			got = runParsed(ctx, stmts[0])
		}
		want := uncachedAnswer(ctx, uncached, q)
		if got != want {
			t.Errorf("%q\nwith kept plans: %s\nplanned afresh:  %s", q, got, want)
			continue
		}
		if ls == nil {
			continue
		}
		parameterised++
		if ls.q == kept {
			reused++
		}
		// PostgreSQL's answer where every literal is a parameter (others
		// are the engine's as written, and the same with or without kept
		// plans, as checked above).
		if slices.Contains(ls.lit.param, 0) {
			continue
		}
		if pg := pgAnswer(ctx, conn, q); firstColumns(got) != pg {
			t.Errorf("%q (literals as parameters)\nlakesoul:   %s\nPostgreSQL: %s", q, firstColumns(got), pg)
		}
	}
	t.Logf("%d statements ran on plans with literals as parameters, %d of them on a kept one", parameterised, reused)
	// The statements the shapes of which take parameters: integer and
	// plain string literals compared with integer and text columns.
	if parameterised < 1000 || reused < 500 {
		t.Errorf("%d statements ran on plans with literals as parameters, %d of them reused; want ≥ 1000 and ≥ 500", parameterised, reused)
	}
}

// A kept plan answers only as the statement would planned afresh in the
// session that runs it: a search path changed by set_config (no SET), a
// temporary table that now hides the table, another session's search path
// or role — none of them gets another table's rows, or rows its role could
// not read.
func TestLiteralPlansFollowNamesAndRoles(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	session := func(user string) *Session {
		t.Helper()
		ps, err := s.e.NewSession(ctx, map[string]string{"user": user, "database": DatabaseName}, pgwire.Credential{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ps.Close)
		return ps.(*Session)
	}
	// answer runs q on in, checking that it ran on a plan with literals as
	// parameters when lit is set.
	answer := func(in *Session, q string, lit bool) string {
		t.Helper()
		stmts, err := in.Parse(ctx, q, nil)
		if err != nil {
			return answerOf(nil, err)
		}
		if _, ok := stmts[0].(*trackedStmt).Statement.(*literalStmt); ok != lit {
			t.Fatalf("%s: on a plan with literals as parameters: %v, want %v", q, ok, lit)
		}
		return runParsed(ctx, stmts[0])
	}
	expect := func(in *Session, q string, lit bool, want string) {
		t.Helper()
		if got := answer(in, q, lit); got != want {
			t.Fatalf("%s: %s, want %s", q, got, want)
		}
	}
	exec("CREATE SCHEMA a; CREATE SCHEMA b")
	exec("CREATE TABLE a.t (id bigint PRIMARY KEY, v text); INSERT INTO a.t VALUES (1, 'a1'), (2, 'a2'), (3, 'a3')")
	exec("CREATE TABLE b.t (id bigint PRIMARY KEY, v text); INSERT INTO b.t VALUES (1, 'b1'), (2, 'b2'), (3, 'b3')")
	exec("SET search_path = a")
	expect(s, "SELECT v FROM t WHERE id = 1", true, "a1")
	expect(s, "SELECT v FROM t WHERE id = 2", true, "a2")
	// A search path the end of a block gives back: plans made inside it
	// read b.t, and COMMIT moves no plan generation.
	exec("BEGIN")
	exec("SET LOCAL search_path = b")
	expect(s, "SELECT v FROM t WHERE id = 3", true, "b3")
	exec("COMMIT")
	expect(s, "SELECT v FROM t WHERE id = 1", true, "a1")
	exec("SET search_path = b")
	expect(s, "SELECT v FROM t WHERE id = 1", true, "b1")
	// A temporary table created after the plan hides b.t.
	exec("CREATE TEMP TABLE t (id bigint, v text); INSERT INTO t VALUES (1, 'temp')")
	expect(s, "SELECT v FROM t WHERE id = 1", false, "temp")
	exec("DROP TABLE t")
	expect(s, "SELECT v FROM t WHERE id = 2", true, "b2")

	// Another session's search path, and another role's reads: the plans
	// are the session's own.
	other := session(s.user)
	exec2 := func(q string) {
		t.Helper()
		if err := runInternal(ctx, other, q); err != nil {
			t.Fatal(err)
		}
	}
	exec2("SET search_path = a")
	expect(other, "SELECT v FROM t WHERE id = 2", true, "a2")
	expect(s, "SELECT v FROM t WHERE id = 1", true, "b1")
	expect(other, "SELECT v FROM t WHERE id = 1", true, "a1")

	exec("SELECT lakesoul.create_workspace('lp_wa')")
	exec("SELECT lakesoul.create_workspace('lp_wb')")
	exec("SELECT lakesoul.create_user('lp_ua', 'pw', 'lp_wa', admin => true)")
	exec("SELECT lakesoul.create_user('lp_ub', 'pw', 'lp_wb')")
	ua, ub := session("lp_ua"), session("lp_ub")
	if err := runInternal(ctx, ua, "CREATE SCHEMA lp_sa; CREATE TABLE lp_sa.secret (id bigint PRIMARY KEY, v text); INSERT INTO lp_sa.secret VALUES (1, 's1'), (2, 's2')"); err != nil {
		t.Fatal(err)
	}
	expect(ua, "SELECT v FROM lp_sa.secret WHERE id = 1", true, "s1")
	expect(ua, "SELECT v FROM lp_sa.secret WHERE id = 2", true, "s2")
	refused := answer(ub, "SELECT v FROM lp_sa.secret WHERE id = 1", false)
	if !strings.HasPrefix(refused, "ERROR 42P01") && !strings.HasPrefix(refused, "ERROR 42501") {
		t.Fatalf("lp_ub read lp_ua's table: %s", refused)
	}
	if again := answer(ub, "SELECT v FROM lp_sa.secret WHERE id = 2", false); again != refused {
		t.Fatalf("lp_ub's second read: %s, want %s", again, refused)
	}
}

// The value a reused plan binds for a literal is read from the scanner's
// token alone (literalValue); for a token where the parser has a bare
// constant (the only literals planLiterals makes parameters) it must be the
// value PostgreSQL's parser reads from the same spelling, or no value. Every spelling below —
// each literal token kind, quoting, escapes, continuation, prefixes,
// integer forms — is checked against the parser's constant.
func TestLiteralValueIsTheParsersValue(t *testing.T) {
	spellings := []string{
		"0", "7", "007", "2147483647", "2147483648", "-5", "+5", "1_000", "0x1F", "0o17", "0b101",
		"9223372036854775807", "9223372036854775808", "1.5", "1e3", ".5", "5.", "00000000000000000000042",
		"'a'", "''", "''''", "'it''s'", "'a''''b'", `'a\b'`, `E'a\tb'`, `e'x'`, "'a'\n'b'", "'a' \n\t 'b'",
		`U&'\0061'`, `U&'d!0061t' UESCAPE '!'`, "$$a$$", "$x$a'b$x$", "B'101'", "X'1F'", "N'ab'", "'é'", "'\t'",
		"'a'::text", "DATE '2020-01-01'", "'1' || '2'",
	}
	for _, lit := range spellings {
		text := "SELECT c FROM t WHERE c = " + lit
		tree, err := parseSQL(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		e := tree.Stmts[0].Stmt.GetSelectStmt().WhereClause.GetAExpr()
		c := e.Rexpr.GetAConst()
		_, lits, ok := literalShape(text)
		if !ok {
			t.Fatalf("%s: not scanned", text)
		}
		for _, l := range lits {
			if c == nil || c.Location != l.start {
				continue // never a parameter: planLiterals takes bare constants only
			}
			for _, oid := range []uint32{23, 20, 25} {
				v, ok := literalValue(l, oid)
				if !ok {
					continue
				}
				var want any
				switch {
				case oid == 23 && c.GetIval() != nil:
					want = c.GetIval().Ival
				case oid == 20 && c.GetFval() != nil:
					var n int64
					if _, err := fmt.Sscan(c.GetFval().Fval, &n); err == nil {
						want = n
					}
				case oid == 25 && c.GetSval() != nil:
					want = c.GetSval().Sval
				}
				if v != want {
					t.Errorf("%q: literal %q read as %#v (type %d), the parser's constant is %v", lit, l.raw, v, oid, c)
				}
			}
		}
	}
}
