package engine

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// kindSample is a statement of one kind (one route) run inside an implicit
// transaction. {s} in the texts is a schema of the sample's own, {owner}
// the session's role (which owns every lake object).
type kindSample struct {
	// setup runs first, each text as one committed query; texts starting
	// with "catalog:" run on the catalog PostgreSQL itself (roles).
	setup []string
	// sql is the sample: one or more statements, all of them inside the
	// implicit transaction.
	sql string
	// refused: the sample fails with this SQLSTATE inside a string of
	// several statements. 25001 statements must also run alone (not refuse).
	refused string
	// pipelineRefused, when set, replaces refused in a pipeline: a
	// statement PostgreSQL allows only in a transaction block (25P01)
	// runs in a simple query's implicit transaction, not in a pipeline's.
	pipelineRefused string
	// effect says what committing the sample does: changes the state
	// (effectful), leaves it as it was (none), or changes it in a way no
	// rollback undoes, as in PostgreSQL (nontransactional).
	effect sampleEffect
}

type sampleEffect int

const (
	effectful sampleEffect = iota
	none
	nontransactional
)

// implicitSamples has a sample of every statement kind the engine routes,
// keyed by the route's node type (TestImplicitTransactionEveryStatementKind
// fails for a route without one).
var implicitSamples = map[reflect.Type][]kindSample{
	reflect.TypeOf((*pg_query.Node_SelectStmt)(nil)): {
		{sql: "SELECT * FROM {s}.t", effect: none},
		{sql: "SELECT * INTO {s}.sel FROM {s}.t"},
	},
	reflect.TypeOf((*pg_query.Node_ExplainStmt)(nil)):  {{sql: "EXPLAIN SELECT * FROM {s}.t", effect: none}},
	reflect.TypeOf((*pg_query.Node_InsertStmt)(nil)):   {{sql: "INSERT INTO {s}.t VALUES (2, 'b')"}},
	reflect.TypeOf((*pg_query.Node_UpdateStmt)(nil)):   {{sql: "UPDATE {s}.t SET v = 'z'"}},
	reflect.TypeOf((*pg_query.Node_DeleteStmt)(nil)):   {{sql: "DELETE FROM {s}.t WHERE id = 1"}},
	reflect.TypeOf((*pg_query.Node_MergeStmt)(nil)):    {{sql: "MERGE INTO {s}.t AS d USING (SELECT 3 AS id) AS src ON d.id = src.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (src.id, 'm')"}},
	reflect.TypeOf((*pg_query.Node_TruncateStmt)(nil)): {{sql: "TRUNCATE {s}.t"}},
	reflect.TypeOf((*pg_query.Node_CopyStmt)(nil)): {
		{sql: "COPY {s}.t FROM STDIN"},
		{sql: "COPY {s}.t TO STDOUT", effect: none},
	},
	reflect.TypeOf((*pg_query.Node_CreateSchemaStmt)(nil)):    {{sql: "CREATE SCHEMA {s}_new"}},
	reflect.TypeOf((*pg_query.Node_CreateExtensionStmt)(nil)): {{sql: `CREATE EXTENSION IF NOT EXISTS "uuid-ossp"`, effect: none}},
	reflect.TypeOf((*pg_query.Node_CreateStmt)(nil)): {
		{sql: "CREATE TABLE {s}.n (x int PRIMARY KEY, y text)"},
		{sql: "CREATE TEMP TABLE {s}_tmp (x int)"},
	},
	reflect.TypeOf((*pg_query.Node_CreateSeqStmt)(nil)): {{sql: "CREATE SEQUENCE {s}.sq"}},
	// A pg_temp function is the session's, created and dropped with the
	// transaction as PostgreSQL's pg_temp catalog rows are.
	reflect.TypeOf((*pg_query.Node_CreateFunctionStmt)(nil)): {{
		sql: "CREATE FUNCTION pg_temp.{s}_f(OUT n bigint) RETURNS bigint AS $$ BEGIN SELECT count(*) FROM {s}.t INTO n; END $$ LANGUAGE plpgsql"}},
	reflect.TypeOf((*pg_query.Node_AlterSeqStmt)(nil)): {{setup: []string{"CREATE SEQUENCE {s}.sq"},
		sql: "ALTER SEQUENCE {s}.sq OWNED BY {s}.t.id"}},
	reflect.TypeOf((*pg_query.Node_CreateTableAsStmt)(nil)): {{sql: "CREATE TABLE {s}.c AS SELECT * FROM {s}.t"}},
	reflect.TypeOf((*pg_query.Node_ViewStmt)(nil)):          {{sql: "CREATE VIEW {s}.v AS SELECT * FROM {s}.t"}},
	reflect.TypeOf((*pg_query.Node_AlterTableStmt)(nil)):    {{sql: "ALTER TABLE {s}.t ADD COLUMN c int"}},
	reflect.TypeOf((*pg_query.Node_RenameStmt)(nil)):        {{sql: "ALTER TABLE {s}.t RENAME TO t2"}},
	// Every lake object has one owner: OWNER TO accepts only that one.
	reflect.TypeOf((*pg_query.Node_AlterOwnerStmt)(nil)): {{sql: "ALTER SCHEMA {s} OWNER TO {owner}", effect: none}},
	reflect.TypeOf((*pg_query.Node_IndexStmt)(nil)):      {{sql: "CREATE INDEX ON {s}.t (v)"}},
	reflect.TypeOf((*pg_query.Node_CommentStmt)(nil)):    {{sql: "COMMENT ON TABLE {s}.t IS 'a comment'"}},
	reflect.TypeOf((*pg_query.Node_CreateEnumStmt)(nil)): {{sql: "CREATE TYPE {s}.mood AS ENUM ('sad', 'ok')"}},
	reflect.TypeOf((*pg_query.Node_AlterEnumStmt)(nil)): {{setup: []string{"CREATE TYPE {s}.mood AS ENUM ('sad')"},
		sql: "ALTER TYPE {s}.mood ADD VALUE 'happy'"}},
	reflect.TypeOf((*pg_query.Node_DropStmt)(nil)): {
		{sql: "DROP TABLE {s}.t"},
		{setup: []string{"CREATE TEMP TABLE {s}_tmp (x int)"}, sql: "DROP TABLE {s}_tmp"},
		{setup: []string{"CREATE FUNCTION pg_temp.{s}_f(OUT n bigint) RETURNS bigint AS $$ BEGIN SELECT 1 INTO n; END $$ LANGUAGE plpgsql"},
			sql: "DROP FUNCTION pg_temp.{s}_f()"},
	},
	reflect.TypeOf((*pg_query.Node_GrantRoleStmt)(nil)): {{setup: []string{"catalog:CREATE ROLE {s}_a", "catalog:CREATE ROLE {s}_b"},
		sql: "GRANT {s}_a TO {s}_b", refused: sqlerr.ActiveSQLTransaction}},
	// GRANT CREATE ON SCHEMA is a row of lakesoul.namespace_grant, written
	// in the block's catalog transaction like other DDL.
	reflect.TypeOf((*pg_query.Node_GrantStmt)(nil)): {{setup: []string{"catalog:CREATE ROLE {s}_g"},
		sql: "GRANT CREATE ON SCHEMA {s} TO {s}_g"}},
	reflect.TypeOf((*pg_query.Node_CallStmt)(nil)): {
		{sql: "CALL lakesoul.drop_partition('{s}.t', '-5')", refused: sqlerr.ActiveSQLTransaction},
		{sql: "CALL lakesoul.compact('{s}.t')", refused: sqlerr.ActiveSQLTransaction},
	},
	reflect.TypeOf((*pg_query.Node_VacuumStmt)(nil)): {
		{sql: "VACUUM {s}.t", refused: sqlerr.ActiveSQLTransaction},
		{sql: "ANALYZE {s}.t", effect: none},
	},
	reflect.TypeOf((*pg_query.Node_TransactionStmt)(nil)): {
		{sql: "SAVEPOINT a", refused: sqlerr.NoActiveSQLTransaction},
		{sql: "INSERT INTO {s}.t VALUES (4, 'd'); ROLLBACK", effect: none},
		// BEGIN and COMMIT in a string: tests/implicittx_test.go.
	},
	reflect.TypeOf((*pg_query.Node_VariableSetStmt)(nil)): {
		{sql: "SET search_path = elsewhere"},
		{sql: "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
		{sql: "SET LOCAL search_path = elsewhere", effect: none},
	},
	reflect.TypeOf((*pg_query.Node_VariableShowStmt)(nil)): {{sql: "SHOW search_path", effect: none}},
	reflect.TypeOf((*pg_query.Node_DeclareCursorStmt)(nil)): {
		{sql: "DECLARE {s}_c CURSOR FOR SELECT * FROM {s}.t", effect: none, pipelineRefused: sqlerr.NoActiveSQLTransaction},
		{sql: "DECLARE {s}_h CURSOR WITH HOLD FOR SELECT * FROM {s}.t"},
	},
	reflect.TypeOf((*pg_query.Node_FetchStmt)(nil)): {{sql: "DECLARE {s}_c CURSOR FOR SELECT * FROM {s}.t; FETCH 1 FROM {s}_c", effect: none,
		pipelineRefused: sqlerr.NoActiveSQLTransaction}},
	reflect.TypeOf((*pg_query.Node_ClosePortalStmt)(nil)): {{sql: "DECLARE {s}_c CURSOR FOR SELECT * FROM {s}.t; CLOSE {s}_c",
		effect: none, pipelineRefused: sqlerr.NoActiveSQLTransaction}},
	// Prepared statements are the session's, not the transaction's, in
	// PostgreSQL too.
	reflect.TypeOf((*pg_query.Node_PrepareStmt)(nil)): {{sql: "PREPARE {s}_p AS SELECT 1", effect: nontransactional}},
	reflect.TypeOf((*pg_query.Node_ExecuteStmt)(nil)): {{setup: []string{"PREPARE {s}_ins AS INSERT INTO {s}.t VALUES (9, 'x')"},
		sql: "EXECUTE {s}_ins"}},
	reflect.TypeOf((*pg_query.Node_DeallocateStmt)(nil)): {{setup: []string{"PREPARE {s}_p AS SELECT 1"},
		sql: "DEALLOCATE {s}_p", effect: nontransactional}},
	reflect.TypeOf((*pg_query.Node_LockStmt)(nil)): {{sql: "LOCK TABLE {s}.t IN ACCESS SHARE MODE", effect: none,
		pipelineRefused: sqlerr.NoActiveSQLTransaction}},
	reflect.TypeOf((*pg_query.Node_DiscardStmt)(nil)): {
		{sql: "DISCARD ALL", refused: sqlerr.ActiveSQLTransaction},
		{setup: []string{"CREATE TEMP TABLE {s}_tmp (x int)"}, sql: "DISCARD TEMP"},
	},
	reflect.TypeOf((*pg_query.Node_ListenStmt)(nil)):   {{sql: "LISTEN {s}_ch"}},
	reflect.TypeOf((*pg_query.Node_UnlistenStmt)(nil)): {{setup: []string{"LISTEN {s}_ch"}, sql: "UNLISTEN {s}_ch"}},
	reflect.TypeOf((*pg_query.Node_NotifyStmt)(nil)):   {{setup: []string{"LISTEN {s}_ch"}, sql: "NOTIFY {s}_ch, 'x'"}},
	reflect.TypeOf((*pg_query.Node_CreateSubscriptionStmt)(nil)): {{
		sql:     "CREATE SUBSCRIPTION {s}_sub CONNECTION 'host=127.0.0.1 port=1 dbname=x' PUBLICATION p",
		refused: sqlerr.ActiveSQLTransaction}},
	reflect.TypeOf((*pg_query.Node_AlterSubscriptionStmt)(nil)): {{sql: "ALTER SUBSCRIPTION {s}_sub DISABLE",
		refused: sqlerr.ActiveSQLTransaction}},
	reflect.TypeOf((*pg_query.Node_DropSubscriptionStmt)(nil)): {{sql: "DROP SUBSCRIPTION IF EXISTS {s}_sub",
		refused: sqlerr.ActiveSQLTransaction}},
}

// TestImplicitTransactionEveryStatementKind enumerates the routes, every
// statement kind the engine runs: a statement of each kind, run in a
// simple query of several statements whose last one fails, leaves nothing
// behind — not in the catalog (every relation, row, role membership, enum
// label and comment of the catalog database), not in the warehouse (its
// files), not in the session (settings, cursors, temporary tables,
// LISTENs, delivered notifications, prepared statements) — or refuses to
// run in a transaction block and then runs alone. Each sample's committed
// run shows that it has the effect it is said to have, so the rollback
// check cannot pass on a sample that does nothing.
func TestImplicitTransactionEveryStatementKind(t *testing.T) {
	h := newImplicitHarness(t)
	for _, r := range routes {
		typ := reflect.TypeOf(r.node)
		samples, ok := implicitSamples[typ]
		if !ok {
			t.Errorf("route %s (%v) has no sample in implicitSamples", r.shown, typ)
			continue
		}
		for i, sm := range samples {
			name := fmt.Sprintf("%s/%d", strings.TrimPrefix(typ.String(), "*pg_query.Node_"), i)
			t.Run(name, func(t *testing.T) { h.checkSample(t, typ, sm, fmt.Sprintf("k%d", h.next())) })
		}
	}
	for typ := range implicitSamples {
		if _, ok := routeByType[typ]; !ok {
			t.Errorf("implicitSamples has %v, which no route plans", typ)
		}
	}
}

// TestPipelineTransactionEveryStatementKind is
// TestImplicitTransactionEveryStatementKind for the extended protocol's
// implicit transaction, its statements sent as a pipeline (one Parse,
// Bind and Execute each, one Sync; pgwire/pipeline.go): a statement of
// each kind followed by one that fails leaves nothing behind, and one
// followed by a statement that succeeds commits. A statement that cannot
// run inside a transaction block runs as the first of a pipeline and is
// refused (25001) after another statement of it, as in PostgreSQL.
func TestPipelineTransactionEveryStatementKind(t *testing.T) {
	h := newImplicitHarness(t)
	h.pipelined = true
	for _, r := range routes {
		typ := reflect.TypeOf(r.node)
		samples, ok := implicitSamples[typ]
		if !ok {
			t.Errorf("route %s (%v) has no sample in implicitSamples", r.shown, typ)
			continue
		}
		for i, sm := range samples {
			name := fmt.Sprintf("%s/%d", strings.TrimPrefix(typ.String(), "*pg_query.Node_"), i)
			t.Run(name, func(t *testing.T) { h.checkSample(t, typ, sm, fmt.Sprintf("p%d", h.next())) })
		}
	}
}

type implicitHarness struct {
	// pipelined: checkSample sends its texts as pipelines (pipeline),
	// not as simple queries (query).
	pipelined bool
	s         *Session
	wh        string
	n         int
	notified  *int
	prepCount int
}

func newImplicitHarness(t *testing.T) *implicitHarness {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.Close)
	wh := filepath.Join(t.TempDir(), "wh")
	e, err := New(ctx, Config{Catalog: cat, Store: objstore.Local{}, Warehouse: objstore.LocalURI(wh), Logger: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ps, err := e.NewSession(ctx, map[string]string{"user": e.catalogRole, "database": DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	s := ps.(*Session)
	t.Cleanup(s.Close)
	h := &implicitHarness{s: s, wh: wh, notified: new(int)}
	s.WatchNotifications(func() {})
	return h
}

func (h *implicitHarness) next() int { h.n++; return h.n }

func (h *implicitHarness) checkSample(t *testing.T, typ reflect.Type, sm kindSample, schema string) {
	ctx := context.Background()
	sub := func(q string) string {
		return strings.NewReplacer("{s}", schema, "{owner}", `"`+h.s.user+`"`).Replace(q)
	}
	prepare := func(suffix string) {
		t.Helper()
		s := schema + suffix
		setup := append([]string{"CREATE SCHEMA " + s, "CREATE TABLE " + s + ".t (id int PRIMARY KEY, v text)",
			"INSERT INTO " + s + ".t VALUES (1, 'a')"}, sm.setup...)
		for _, q := range setup {
			q = strings.NewReplacer("{s}", s, "{owner}", `"`+h.s.user+`"`).Replace(q)
			var err error
			if c, ok := strings.CutPrefix(q, "catalog:"); ok {
				_, err = h.s.e.cat.Pool().Exec(ctx, c)
			} else {
				err = h.query(ctx, q)
			}
			if err != nil {
				t.Fatalf("setup %s: %v", q, err)
			}
		}
	}
	text := sub(sm.sql)
	if stmts, err := pg_query.Parse(text); err != nil || !slices.ContainsFunc(stmts.Stmts, func(r *pg_query.RawStmt) bool {
		return reflect.TypeOf(r.Stmt.Node) == typ
	}) {
		t.Fatalf("sample %q is not a %v: %v", text, typ, err)
	}

	run, refused := h.query, sm.refused
	if h.pipelined {
		run = h.pipeline
		if sm.pipelineRefused != "" {
			refused = sm.pipelineRefused
		}
		if refused == sqlerr.ActiveSQLTransaction {
			h.checkPipelineRefusal(t, text, prepare)
			return
		}
	}

	// Rolled back: the string's last statement fails.
	prepare("")
	before := h.state(t)
	err := run(ctx, text+"; SELECT 1/0")
	switch {
	case refused != "":
		if sqlerr.Code(err) != refused {
			t.Fatalf("%s inside a string: %v, want %s", text, err, refused)
		}
	case sqlerr.Code(err) != sqlerr.DivisionByZero:
		t.Fatalf("%s; SELECT 1/0: %v, want 22012", text, err)
	}
	after := h.state(t)
	if sm.effect == nontransactional {
		if after == before {
			t.Errorf("%s changed nothing that outlasts its rollback", text)
		}
	} else if d := diffLines(before, after); d != "" {
		t.Errorf("%s, rolled back, left:\n%s", text, d)
	}
	if h.s.inBlock || h.s.implicit || h.s.ddlTx != nil || len(h.s.staged) > 0 || h.s.intent != nil {
		t.Errorf("%s: the implicit transaction is still open", text)
	}
	if refused == sqlerr.ActiveSQLTransaction {
		// Alone it is not refused as a block statement (it may fail for
		// its own reasons: the subscription's source does not exist).
		if err := run(ctx, text); sqlerr.Code(err) == sqlerr.ActiveSQLTransaction {
			t.Errorf("%s alone: %v", text, err)
		}
	}
	if refused != "" {
		return
	}

	// Committed: the same string with a last statement that succeeds.
	text = strings.NewReplacer("{s}", schema+"c", "{owner}", `"`+h.s.user+`"`).Replace(sm.sql)
	prepare("c")
	before = h.state(t)
	if err := run(ctx, text+"; SELECT 1"); err != nil {
		t.Fatalf("%s; SELECT 1: %v", text, err)
	}
	after = h.state(t)
	if changed := after != before; changed != (sm.effect != none) {
		t.Errorf("%s, committed: changed the state %v, want %v:\n%s", text, changed, sm.effect != none, diffLines(before, after))
	}
}

// query runs text as pgwire runs a simple Query (pgwire/simple.go): with
// several statements, BeginImplicitTransaction before each and
// EndImplicitTransaction after the last or the first error.
func (h *implicitHarness) query(ctx context.Context, text string) error {
	stmts, err := h.s.Parse(ctx, text, nil)
	if err != nil {
		return err
	}
	implicit := len(stmts) > 1
	for i, st := range stmts {
		if implicit {
			h.s.BeginImplicitTransaction(pgwire.ImplicitQuery)
		}
		if err := runStatement(ctx, st); err != nil {
			if implicit {
				_ = h.s.EndImplicitTransaction(ctx, false)
			}
			return err
		}
		if implicit && i == len(stmts)-1 {
			if err := h.s.EndImplicitTransaction(ctx, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// pipeline runs text as pgwire runs the statements of a pipeline, sent
// one Parse, Bind and Execute each before one Sync (pgwire/pipeline.go):
// each statement is prepared after the ones before it executed;
// BeginImplicitTransaction comes before each Execute, unless the
// statement is alone; EndImplicitTransaction at the first error or at the
// Sync.
func (h *implicitHarness) pipeline(ctx context.Context, text string) error {
	texts, err := pg_query.SplitWithParser(text, true)
	if err != nil {
		return err
	}
	wrap := len(texts) > 1
	for i, q := range texts {
		stmts, err := h.s.Parse(ctx, q, nil)
		if err == nil && len(stmts) != 1 {
			err = fmt.Errorf("%q is %d statements", q, len(stmts))
		}
		if err == nil {
			err = runStatementWith(ctx, stmts[0], func() {
				kind := pgwire.ImplicitPipeline
				if i == 0 {
					kind = pgwire.ImplicitPipelineFirst
				}
				if wrap && h.s.TxStatus() == 'I' {
					h.s.BeginImplicitTransaction(kind)
				}
			})
		}
		if err != nil {
			if wrap {
				_ = h.s.EndImplicitTransaction(ctx, false)
			}
			return err
		}
	}
	if wrap {
		return h.s.EndImplicitTransaction(ctx, true)
	}
	return nil
}

// checkPipelineRefusal checks a statement that cannot run inside a
// transaction block in a pipeline: after another statement it is refused
// with PostgreSQL's 25001 for pipelines, and nothing of the pipeline
// remains; as the first statement it runs (it may fail for its own
// reasons: the subscription's source does not exist), and so does the
// statement after it.
func (h *implicitHarness) checkPipelineRefusal(t *testing.T, text string, prepare func(string)) {
	ctx := context.Background()
	prepare("")
	before := h.state(t)
	err := h.pipeline(ctx, "SELECT 1; "+text)
	if sqlerr.Code(err) != sqlerr.ActiveSQLTransaction || !strings.Contains(err.Error(), "cannot be executed within a pipeline") {
		t.Errorf("SELECT 1; %s in a pipeline: %v, want 25001 cannot be executed within a pipeline", text, err)
	}
	if d := diffLines(before, h.state(t)); d != "" {
		t.Errorf("SELECT 1; %s in a pipeline, refused, left:\n%s", text, d)
	}
	err = h.pipeline(ctx, text+"; SELECT 1")
	if sqlerr.Code(err) == sqlerr.ActiveSQLTransaction {
		t.Errorf("%s; SELECT 1 in a pipeline: %v, want it run as the first statement", text, err)
	}
	if h.s.inBlock || h.s.implicit || h.s.ddlTx != nil || len(h.s.staged) > 0 || h.s.intent != nil {
		t.Errorf("%s: the pipeline's transaction is still open", text)
	}
}

// runStatement describes, binds and executes st; COPY FROM STDIN reads one
// row (6, 'f').
func runStatement(ctx context.Context, st pgwire.Statement) error {
	return runStatementWith(ctx, st, func() {})
}

// runStatementWith is runStatement calling beforeExecute between Bind and
// Execute, where pgwire opens a pipeline's implicit transaction.
func runStatementWith(ctx context.Context, st pgwire.Statement, beforeExecute func()) error {
	if _, err := st.Describe(ctx); err != nil {
		return err
	}
	p, err := st.Bind(ctx, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	beforeExecute()
	if cp, ok := p.(pgwire.CopyInPortal); ok {
		_, err := cp.CopyIn(ctx, &oneRow{row: [][]byte{[]byte("6"), []byte("f")}})
		return err
	}
	_, _, err = p.Execute(ctx, 0, discard{})
	return err
}

type oneRow struct {
	row  [][]byte
	read bool
}

func (r *oneRow) ReadRow() ([][]byte, error) {
	if r.read {
		return nil, io.EOF
	}
	r.read = true
	return r.row, nil
}

func (r *oneRow) Line() int64 { return 1 }

// state is everything a statement can leave behind, one fact a line.
func (h *implicitHarness) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	pool := h.s.e.cat.Pool()
	var lines []string
	add := func(q string) {
		t.Helper()
		rows, err := pool.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	const userSchemas = "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'"
	// Every relation of the catalog database, and every row of its tables.
	add(`SELECT 'relation ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || pg_get_userbyid(c.relowner)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ` + userSchemas + ` AND c.relkind IN ('r', 'S', 'v', 'm', 'p')`)
	var tables []string
	rows, err := pool.Query(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE `+userSchemas+` AND c.relkind IN ('r', 'p') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	rows.Close()
	for _, tbl := range tables {
		if implicitStateVolatile[tbl] {
			continue
		}
		add(fmt.Sprintf("SELECT %s || ' ' || x::text FROM %s x", quoteLiteral(tbl), tbl))
	}
	add(`SELECT 'member ' || pg_get_userbyid(roleid) || ' ' || pg_get_userbyid(member) FROM pg_auth_members`)
	add(`SELECT 'enum ' || t.typname || ' ' || e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid`)
	add(`SELECT 'type ' || n.nspname || '.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
		WHERE ` + userSchemas + ` AND t.typtype = 'e'`)
	add(`SELECT 'comment ' || classoid::regclass::text || ' ' || objoid || ' ' || objsubid || ' ' || description
		FROM pg_description WHERE objoid >= 16384`)
	// The warehouse's files.
	_ = filepath.WalkDir(h.wh, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			lines = append(lines, "file "+strings.TrimPrefix(p, h.wh))
		}
		return nil
	})
	// The session.
	s := h.s
	for _, k := range slices.Sorted(maps.Keys(s.settings)) {
		lines = append(lines, "setting "+k+"="+s.settings[k].value)
	}
	for _, k := range slices.Sorted(maps.Keys(s.cursors)) {
		lines = append(lines, "cursor "+k)
	}
	for _, k := range slices.Sorted(maps.Keys(s.temps)) {
		lines = append(lines, "temp "+k)
	}
	for _, k := range slices.Sorted(maps.Keys(s.tempFuncs)) {
		lines = append(lines, "function pg_temp."+k)
	}
	for _, k := range slices.Sorted(maps.Keys(s.sqlPrepared)) {
		lines = append(lines, "prepared "+k)
	}
	channels := s.listener.Channels()
	slices.Sort(channels)
	for _, ch := range channels {
		lines = append(lines, "listen "+ch)
	}
	*h.notified += len(s.TakeNotifications(1 << 30))
	lines = append(lines, fmt.Sprintf("notifications %d", *h.notified))
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// implicitStateVolatile are catalog tables whose rows record activity, not
// state a statement leaves: a write registers its intent there and ends it
// whether it commits or not.
var implicitStateVolatile = map[string]bool{}

// diffLines lists the lines only in a ("-") or only in b ("+").
func diffLines(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range as {
		if !slices.Contains(bs, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bs {
		if !slices.Contains(as, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
