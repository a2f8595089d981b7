package tests

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Issue 31, item 3: stored expressions (views, column defaults, CHECK
// conditions) run with the rights of whoever reads the view or writes the
// table. A user with no access to workspace B must not be able to leave,
// anywhere, a definition that touches B's objects when B's admin (or the
// superuser) runs it: here the reproduction resets B's sequence, and B's
// next INSERT silently replaces a committed row (an upsert on the key).

// storedFixture: mal administers workspace <tag>_a, where he has schema
// <tag>_as; bad administers <tag>_b, whose table <tag>_bs.orders is keyed by
// a bigserial and holds rows 1 and 2.
type storedFixture struct {
	s             *server
	admin         *pgx.Conn
	mal, bad      *pgx.Conn
	tag, as, bs   string
	orders, seqBS string
}

func newStoredFixture(t *testing.T, s *server, tag string) *storedFixture {
	t.Helper()
	ctx := testCtx(t)
	f := &storedFixture{s: s, admin: s.connect(t), tag: tag, as: tag + "_as", bs: tag + "_bs"}
	f.orders, f.seqBS = f.bs+".orders", f.bs+".orders_id_seq"
	mustExec(t, ctx, f.admin,
		"SELECT lakesoul.create_workspace('"+tag+"_a')", "SELECT lakesoul.create_workspace('"+tag+"_b')",
		"SELECT lakesoul.create_user('"+tag+"_mal', 'mal-pw', '"+tag+"_a', admin => true)",
		"SELECT lakesoul.create_user('"+tag+"_bad', 'bad-pw', '"+tag+"_b', admin => true)")
	f.mal = s.login(t, ctx, tag+"_mal", "mal-pw")
	f.bad = s.login(t, ctx, tag+"_bad", "bad-pw")
	mustExec(t, ctx, f.bad, "CREATE SCHEMA "+f.bs, "CREATE TABLE "+f.orders+" (id bigserial PRIMARY KEY, v text)",
		"INSERT INTO "+f.orders+" (v) VALUES ('first')", "INSERT INTO "+f.orders+" (v) VALUES ('second')")
	mustExec(t, ctx, f.mal, "CREATE SCHEMA "+f.as, "CREATE TABLE "+f.as+".t2 (id bigint PRIMARY KEY, v bigint)",
		"CREATE SEQUENCE "+f.as+".q")
	return f
}

// attacks are the reproduction's statements and their variants, each with
// the SQLSTATEs that may refuse it: a definition in the shared default
// namespace (42501: only roles allowed to create there may; 42P01 first
// when it names B's sequence, as PostgreSQL analyses a view's query before
// it checks the schema), one in the
// attacker's own namespace naming B's sequence (42P01: resolved with the
// creator's rights, it does not exist for him), and a CHECK stored as a
// table option (22023: the server's own property).
func (f *storedFixture) attacks() map[string]string {
	setval := "setval('" + f.seqBS + "', 1)"
	tag := f.tag
	return map[string]string{
		`CREATE VIEW "default".` + tag + `_daily AS SELECT ` + setval:                                                           "42P01|42501",
		`CREATE VIEW public.` + tag + `_daily2 AS SELECT ` + setval + ` AS s`:                                                   "42P01|42501",
		`CREATE TABLE "default".` + tag + `_evil (id bigint PRIMARY KEY, v bigint DEFAULT ` + setval + `)`:                      "42P01|42501",
		`CREATE VIEW "default".` + tag + `_own AS SELECT setval('` + f.as + `.q', 1)`:                                           "42501",
		`CREATE TABLE public.` + tag + `_own (id bigint PRIMARY KEY, v bigint DEFAULT nextval('` + f.as + `.q'))`:               "42501",
		`CREATE SEQUENCE public.` + tag + `_q`:                                                                                  "42501",
		`CREATE VIEW ` + f.as + `.daily AS SELECT ` + setval:                                                                    "42P01",
		`CREATE VIEW ` + f.as + `.daily_cur AS SELECT currval('` + f.seqBS + `')`:                                               "42P01",
		`CREATE VIEW ` + f.as + `.daily_next AS SELECT nextval('` + f.seqBS + `'::regclass)`:                                    "42P01",
		`CREATE VIEW ` + f.as + `.reads AS SELECT * FROM ` + f.orders:                                                           "42P01",
		`CREATE VIEW ` + f.as + `.tt AS SELECT * FROM lakesoul.snapshot('` + f.orders + `', version => 0)`:                      "42P01",
		`CREATE TABLE ` + f.as + `.evil (id bigint PRIMARY KEY, v bigint DEFAULT ` + setval + `)`:                               "42P01",
		`ALTER TABLE ` + f.as + `.t2 ALTER COLUMN v SET DEFAULT ` + setval:                                                      "42P01",
		`CREATE TABLE ` + f.as + `.evilc (id bigint PRIMARY KEY, CHECK (` + setval + ` > 0))`:                                   "42P01",
		`ALTER TABLE ` + f.as + `.t2 SET ("pg_check.x" = '` + strings.ReplaceAll(setval, "'", "''") + ` > 0')`:                  "22023",
		`ALTER TABLE ` + f.as + `.t2 SET (pg_check.y = '` + strings.ReplaceAll(setval, "'", "''") + ` > 0')`:                    "22023",
		`CREATE TABLE ` + f.as + `.evilw (id bigint) WITH ("pg_check.x" = '` + strings.ReplaceAll(setval, "'", "''") + ` > 0')`: "22023",
	}
}

// victims run what the attacks would have left behind, as B's admin and as
// the superuser; their errors do not matter, only what they change.
func (f *storedFixture) victims() []struct {
	asAdmin bool
	q       string
} {
	tag := f.tag
	return []struct {
		asAdmin bool
		q       string
	}{
		{false, `SELECT * FROM "default".` + tag + `_daily`},
		{false, `SELECT * FROM public.` + tag + `_daily2`},
		{false, `INSERT INTO "default".` + tag + `_evil (id) VALUES (1)`},
		{true, `SELECT * FROM ` + f.as + `.daily`},
		{true, `SELECT * FROM ` + f.as + `.daily_next`},
		{true, `INSERT INTO ` + f.as + `.evil (id) VALUES (1)`},
		{true, `INSERT INTO ` + f.as + `.t2 (id) VALUES (1)`},
		{true, `INSERT INTO ` + f.as + `.evilc VALUES (1)`},
		{true, `INSERT INTO ` + f.as + `.evilw VALUES (1)`},
	}
}

// checkOrders: B's next INSERT takes the next key, and no committed row
// was replaced.
func (f *storedFixture) checkOrders(t *testing.T, ctx context.Context) {
	t.Helper()
	mustExec(t, ctx, f.bad, "INSERT INTO "+f.orders+" (v) VALUES ('third')")
	wantRows(t, "B's orders", queryStrings(t, ctx, f.bad, "SELECT id, v FROM "+f.orders+" ORDER BY id"),
		[]string{"1|first", "2|second", "3|third"})
}

// TestStoredExpressionsCannotReachAnotherWorkspace is the reproduction over
// pgwire.
func TestStoredExpressionsCannotReachAnotherWorkspace(t *testing.T) {
	f := newStoredFixture(t, sharedServer(t), "sx1")
	ctx := testCtx(t)
	for q, code := range f.attacks() {
		if _, err := f.mal.Exec(ctx, q); !slices.Contains(strings.Split(code, "|"), pgCode(err)) {
			t.Errorf("mal: %s: %v, want %s", q, err, code)
		}
	}
	for _, v := range f.victims() {
		c := f.bad
		if v.asAdmin {
			c = f.admin
		}
		_, _ = c.Exec(ctx, v.q)
	}
	f.checkOrders(t, ctx)
}

// TestStoredExpressionsCannotReachAnotherWorkspaceFlight is the
// reproduction over Flight SQL: the attacks as ExecuteUpdate, the victims'
// reads and writes through Flight too.
func TestStoredExpressionsCannotReachAnotherWorkspaceFlight(t *testing.T) {
	s, addr := flightServerT(t)
	f := newStoredFixture(t, s, "sx2")
	ctx := testCtx(t)
	mal, mctx := mustFlight(t, ctx, addr, f.tag+"_mal", "mal-pw")
	for q, code := range f.attacks() {
		if _, err := mal.ExecuteUpdate(mctx, q); err == nil || !slices.ContainsFunc(strings.Split(code, "|"), func(c string) bool {
			return strings.Contains(err.Error(), "SQLSTATE "+c)
		}) {
			t.Errorf("mal over Flight: %s: %v, want %s", q, err, code)
		}
	}
	bad, bctx := mustFlight(t, ctx, addr, f.tag+"_bad", "bad-pw")
	pw, _ := s.adminPassword()
	admin, actx := mustFlight(t, ctx, addr, adminRole, pw)
	for _, v := range f.victims() {
		cl, cctx := bad, bctx
		if v.asAdmin {
			cl, cctx = admin, actx
		}
		if strings.HasPrefix(v.q, "SELECT") {
			_, _, _ = flightRows(cctx, cl, v.q)
		} else {
			_, _ = cl.ExecuteUpdate(cctx, v.q)
		}
	}
	f.checkOrders(t, ctx)
}

// TestStoredNamesBoundAtCreation: a role granted CREATE on the default
// namespace (GRANT CREATE ON SCHEMA public, as in PostgreSQL 15) stores a
// view and a default whose names were resolved when it created them: B's
// admin, reading and inserting with a search_path that finds same-named
// objects of B's first, and with a temporary table of that name, still
// reaches the creator's objects, and B's sequence does not move.
// REVOKE takes the right back: no new object, and the old ones cannot be
// dropped (PostgreSQL's "must be owner").
func TestStoredNamesBoundAtCreation(t *testing.T) {
	f := newStoredFixture(t, sharedServer(t), "sx3")
	ctx := testCtx(t)
	tag := f.tag
	if _, err := f.mal.Exec(ctx, "CREATE TABLE public."+tag+"_tt (v text)"); pgCode(err) != "42501" {
		t.Fatalf("CREATE in public without a grant: %v, want 42501", err)
	}
	if _, err := f.mal.Exec(ctx, "GRANT CREATE ON SCHEMA public TO "+tag+"_mal"); pgCode(err) != "42501" {
		t.Fatalf("mal grants himself CREATE: %v, want 42501", err)
	}
	mustExec(t, ctx, f.admin, "GRANT CREATE ON SCHEMA public TO "+tag+"_mal")
	mustExec(t, ctx, f.mal,
		"CREATE SEQUENCE public."+tag+"_sq",
		"CREATE TABLE public."+tag+"_tt (v text)",
		"INSERT INTO public."+tag+"_tt VALUES ('public row')",
		"CREATE TABLE public."+tag+"_st (id bigint PRIMARY KEY, n bigint DEFAULT nextval('"+tag+"_sq'))",
		"CREATE VIEW public."+tag+"_vv AS SELECT v FROM "+tag+"_tt",
		"CREATE VIEW public."+tag+"_vs AS SELECT nextval('"+tag+"_sq') AS n")
	// Even with the grant, B's sequence is not his to name.
	if _, err := f.mal.Exec(ctx, "CREATE VIEW public."+tag+"_vb AS SELECT setval('"+f.seqBS+"', 1)"); pgCode(err) != "42P01" {
		t.Errorf("a view of B's sequence in public: %v, want 42P01", err)
	}
	wantRows(t, "stored view text", queryStrings(t, ctx, f.admin,
		"SELECT definition FROM pg_views WHERE viewname = '"+tag+"_vv'"), []string{"SELECT v FROM public." + tag + "_tt"})

	mustExec(t, ctx, f.bad,
		"CREATE SEQUENCE "+f.bs+"."+tag+"_sq",
		"CREATE TABLE "+f.bs+"."+tag+"_tt (v text)",
		"INSERT INTO "+f.bs+"."+tag+"_tt VALUES ('b row')",
		"SET search_path = "+f.bs+", public")
	wantRows(t, "B reads the view through its search_path", queryStrings(t, ctx, f.bad, "SELECT v FROM public."+tag+"_vv"),
		[]string{"public row"})
	mustExec(t, ctx, f.bad, "CREATE TEMP TABLE "+tag+"_tt (v text)", "INSERT INTO "+tag+"_tt VALUES ('temp row')")
	wantRows(t, "B reads the view beside its temporary table", queryStrings(t, ctx, f.bad, "SELECT v FROM public."+tag+"_vv"),
		[]string{"public row"})
	mustExec(t, ctx, f.bad, "INSERT INTO public."+tag+"_st (id) VALUES (1)")
	wantRows(t, "the view's nextval", queryStrings(t, ctx, f.bad, "SELECT n FROM public."+tag+"_vs"), []string{"2"})
	wantRows(t, "the default's value", queryStrings(t, ctx, f.bad, "SELECT id, n FROM public."+tag+"_st"), []string{"1|1"})
	wantRows(t, "B's own sequence", queryStrings(t, ctx, f.bad, "SELECT nextval('"+f.bs+"."+tag+"_sq')"), []string{"1"})

	mustExec(t, ctx, f.admin, "REVOKE CREATE ON SCHEMA public FROM "+tag+"_mal")
	for q, want := range map[string]string{
		"CREATE TABLE public." + tag + "_after (v text)":     "permission denied for schema public",
		"DROP VIEW public." + tag + "_vv":                    "must be owner of view " + tag + "_vv",
		"DROP TABLE public." + tag + "_st":                   "must be owner of table " + tag + "_st",
		"DROP SEQUENCE public." + tag + "_sq":                "must be owner of sequence " + tag + "_sq",
		"ALTER TABLE public." + tag + "_tt ADD COLUMN w int": "must be owner of table " + tag + "_tt",
	} {
		if _, err := f.mal.Exec(ctx, q); pgCode(err) != "42501" || !strings.Contains(err.Error(), want) {
			t.Errorf("after REVOKE: %s: %v, want 42501 %q", q, err, want)
		}
	}
	// Reading and writing the namespace's tables is everyone's, as before.
	mustExec(t, ctx, f.mal, "INSERT INTO public."+tag+"_tt VALUES ('still writable')")
}

// TestDirectCatalogCannotStoreDefinitions: a workspace admin connected to
// the catalog directly, as LakeSoul's own clients are, may still rewrite
// his tables' options, but cannot store a CHECK condition, a column
// default or a view definition the server did not validate, nor create in
// the default namespace, nor grant himself the right to.
func TestDirectCatalogCannotStoreDefinitions(t *testing.T) {
	f := newStoredFixture(t, sharedServer(t), "sx4")
	ctx := testCtx(t)
	mal := f.s.catalogConnAs(t, f.tag+"_mal")
	var id, schemaJSON string
	if err := mal.QueryRow(ctx, "SELECT table_id, table_schema FROM public.table_info WHERE table_namespace = $1 AND table_name = 't2'",
		f.as).Scan(&id, &schemaJSON); err != nil {
		t.Fatal(err)
	}
	var sch map[string]any
	if err := json.Unmarshal([]byte(schemaJSON), &sch); err != nil {
		t.Fatal(err)
	}
	fields := sch["fields"].([]any)
	fields[1].(map[string]any)["metadata"] = map[string]any{"pg_default": "setval('" + f.seqBS + "', 1)"}
	withDefault, err := json.Marshal(sch)
	if err != nil {
		t.Fatal(err)
	}
	check := `{"pg_check.x": "setval('` + f.seqBS + `', 1) > 0"}`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT lakesoul.alter_table($1, table_schema, properties::jsonb || $2::jsonb) FROM public.table_info WHERE table_id = $1", []any{id, check}},
		{"UPDATE public.table_info SET properties = (properties::jsonb || $2::jsonb)::json WHERE table_id = $1", []any{id, check}},
		{"SELECT lakesoul.alter_table($1, $2, properties::jsonb) FROM public.table_info WHERE table_id = $1", []any{id, string(withDefault)}},
		{"UPDATE public.table_info SET table_schema = $2 WHERE table_id = $1", []any{id, string(withDefault)}},
		{"INSERT INTO lakesoul.view (namespace, name, domain, definition, columns, types, typmods) VALUES ($1, 'v', $2, $3, '{s}', '{20}', '{-1}')",
			[]any{f.as, f.tag + "_a", "SELECT setval('" + f.seqBS + "', 1) AS s"}},
		{"SELECT lakesoul.create_view($1, 'v', $2, '{s}', '{20}', '{-1}', false)", []any{f.as, "SELECT setval('" + f.seqBS + "', 1) AS s"}},
		{"SELECT lakesoul.create_view('default', 'v', 'SELECT 1 AS s', '{s}', '{20}', '{-1}', false)", nil},
		{"SELECT lakesoul.create_sequence('default', $1, NULL, NULL, NULL, NULL, false, NULL)", []any{f.tag + "_q"}},
		{"SELECT lakesoul.grant_namespace('default', $1, true)", []any{f.tag + "_mal"}},
		{"INSERT INTO public.table_name_id (table_name, table_id, table_namespace, domain) VALUES ('forged', 'forged', 'default', 'public')", nil},
	} {
		if _, err := mal.Exec(ctx, q.sql, q.args...); pgCode(err) != "42501" {
			t.Errorf("mal on the catalog: %s: %v, want 42501", q.sql, err)
		}
	}
	// An option of his own table is still his to write, as LakeSoul's
	// clients do.
	mustExec(t, ctx, mal, "UPDATE public.table_info SET properties = (properties::jsonb || '{\"partition.ttl\": \"3\"}')::json WHERE table_id = '"+id+"'")
	mustExec(t, ctx, f.admin, "INSERT INTO "+f.as+".t2 VALUES (1, 1)")
	f.checkOrders(t, ctx)
}
