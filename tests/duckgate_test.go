package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/engine"
)

// gatePosition is a statement sequence with one place for a function: E
// is an expression position (the call as a value), T a FROM position (the
// call as a table). Steps run in order on one session; the sequence
// stops at the first error.
type gatePosition struct {
	name   string
	steps  []string
	pgwire bool // COPY TO STDOUT: pgwire's sub-protocol only
}

// gateScalarPositions place a call {E} in every clause of every statement
// kind that DuckDB evaluates, stored expressions included.
var gateScalarPositions = []gatePosition{
	{name: "select list", steps: []string{"SELECT {E}"}},
	{name: "select list over a table", steps: []string{"SELECT {E} FROM dg_sm.k"}},
	{name: "where", steps: []string{"SELECT id FROM dg_sm.k WHERE {E} IS NOT NULL"}},
	{name: "join condition", steps: []string{"SELECT k.id FROM dg_sm.k k JOIN dg_sm.a a ON k.id = a.id AND {E} IS NOT NULL"}},
	{name: "having", steps: []string{"SELECT id FROM dg_sm.k GROUP BY id HAVING count({E}) >= 0"}},
	{name: "order by", steps: []string{"SELECT id FROM dg_sm.k ORDER BY {E}"}},
	{name: "window", steps: []string{"SELECT row_number() OVER (ORDER BY {E}) FROM dg_sm.k"}},
	{name: "scalar subquery", steps: []string{"SELECT (SELECT {E}) FROM dg_sm.k"}},
	{name: "cte", steps: []string{"WITH c AS (SELECT {E} AS x) SELECT * FROM c"}},
	{name: "lateral", steps: []string{"SELECT l.x FROM dg_sm.k, LATERAL (SELECT {E} AS x) l"}},
	{name: "in subquery", steps: []string{"SELECT id FROM dg_sm.k WHERE id IN (SELECT id FROM dg_sm.a WHERE {E} IS NOT NULL)"}},
	{name: "insert values", steps: []string{"INSERT INTO dg_sm.k VALUES (100, ({E})::text) RETURNING v"}},
	{name: "insert select into append", steps: []string{"INSERT INTO dg_sm.a SELECT 100, ({E})::text RETURNING v"}},
	{name: "on conflict set", steps: []string{"INSERT INTO dg_sm.k VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = ({E})::text RETURNING v"}},
	{name: "on conflict where", steps: []string{"INSERT INTO dg_sm.k VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE {E} IS NOT NULL"}},
	{name: "on conflict set subquery", steps: []string{"INSERT INTO dg_sm.k VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = (SELECT ({E})::text) RETURNING v"}},
	{name: "insert returning", steps: []string{"INSERT INTO dg_sm.k VALUES (103, 'r') RETURNING {E}"}},
	{name: "update set", steps: []string{"UPDATE dg_sm.k SET v = ({E})::text WHERE id = 2 RETURNING v"}},
	{name: "update where", steps: []string{"UPDATE dg_sm.k SET v = 'u' WHERE {E} IS NOT NULL AND id = 2"}},
	{name: "update append table", steps: []string{"UPDATE dg_sm.a SET v = ({E})::text WHERE id = 2 RETURNING v"}},
	{name: "update returning", steps: []string{"UPDATE dg_sm.k SET v = 'u' WHERE id = 2 RETURNING {E}"}},
	{name: "delete where", steps: []string{"DELETE FROM dg_sm.k WHERE id = 999 AND {E} IS NOT NULL"}},
	{name: "delete append table", steps: []string{"DELETE FROM dg_sm.a WHERE id = 999 AND {E} IS NOT NULL"}},
	{name: "delete returning", steps: []string{"DELETE FROM dg_sm.k WHERE id = 103 RETURNING {E}"}},
	// The MERGE source is one row per id: the insert positions add id 100
	// to dg_sm.a once per protocol, and two source rows matching one
	// target row are 21000, as in PostgreSQL.
	{name: "merge on", steps: []string{"MERGE INTO dg_sm.k t USING (SELECT id, max(v) AS v FROM dg_sm.a GROUP BY id) s ON s.id = t.id AND {E} IS NOT NULL WHEN MATCHED THEN UPDATE SET v = s.v"}},
	{name: "merge set", steps: []string{"MERGE INTO dg_sm.k t USING (SELECT id, max(v) AS v FROM dg_sm.a GROUP BY id) s ON s.id = t.id WHEN MATCHED THEN UPDATE SET v = ({E})::text", "SELECT v FROM dg_sm.k"}},
	{name: "merge when", steps: []string{"MERGE INTO dg_sm.k t USING (SELECT id, max(v) AS v FROM dg_sm.a GROUP BY id) s ON s.id = t.id WHEN MATCHED AND {E} IS NOT NULL THEN UPDATE SET v = s.v"}},
	{name: "merge insert", steps: []string{"MERGE INTO dg_sm.k t USING (SELECT id, max(v) AS v FROM dg_sm.a GROUP BY id) s ON s.id + 1000 = t.id WHEN NOT MATCHED THEN INSERT VALUES (s.id + 1000, ({E})::text)", "SELECT v FROM dg_sm.k"}},
	{name: "lake check", steps: []string{"CREATE TABLE dg_sm.chk{N} (id bigint, v text CHECK ({E} IS NOT NULL))", "INSERT INTO dg_sm.chk{N} VALUES (1, 'a')"}},
	{name: "temp default", steps: []string{"CREATE TEMP TABLE tdef{N} (id bigint, v text DEFAULT ({E})::text)", "INSERT INTO tdef{N} (id) VALUES (1)", "SELECT * FROM tdef{N}", "DROP TABLE tdef{N}"}},
	{name: "temp check", steps: []string{"CREATE TEMP TABLE tchk{N} (id bigint CHECK ({E} IS NOT NULL))", "INSERT INTO tchk{N} VALUES (1)", "DROP TABLE tchk{N}"}},
	{name: "temp create as", steps: []string{"CREATE TEMP TABLE tas{N} AS SELECT {E} AS x", "SELECT * FROM tas{N}", "DROP TABLE tas{N}"}},
	{name: "temp dml", steps: []string{"CREATE TEMP TABLE tdml{N} (id bigint, v text)", "INSERT INTO tdml{N} SELECT 1, ({E})::text",
		"UPDATE tdml{N} SET v = ({E})::text", "SELECT * FROM tdml{N}", "DROP TABLE tdml{N}"}},
	{name: "copy", steps: []string{"COPY (SELECT {E}) TO STDOUT"}, pgwire: true},
	{name: "explain", steps: []string{"EXPLAIN SELECT {E} FROM dg_sm.k"}},
	{name: "explain analyze", steps: []string{"EXPLAIN ANALYZE SELECT {E} FROM dg_sm.k"}},
	{name: "prepare", steps: []string{"PREPARE p{N} AS SELECT {E} FROM dg_sm.k", "EXECUTE p{N}", "DEALLOCATE p{N}"}},
	{name: "cursor", steps: []string{"BEGIN", "DECLARE c{N} CURSOR FOR SELECT {E} FROM dg_sm.k", "FETCH ALL FROM c{N}", "COMMIT"}},
	{name: "create table as", steps: []string{"CREATE TABLE dg_sm.ctas{N} AS SELECT {E} AS x", "SELECT * FROM dg_sm.ctas{N}"}},
	{name: "select into", steps: []string{"SELECT {E} AS x INTO dg_sm.into{N} FROM dg_sm.k", "SELECT * FROM dg_sm.into{N}"}},
	{name: "view", steps: []string{"CREATE VIEW dg_sm.v{N} AS SELECT {E} AS x FROM dg_sm.k", "SELECT * FROM dg_sm.v{N}"}},
}

// gateTablePositions place a call {T} as a FROM item.
var gateTablePositions = []gatePosition{
	{name: "from", steps: []string{"SELECT * FROM {T}"}},
	{name: "from list", steps: []string{"SELECT k.id FROM dg_sm.k k, {T}"}},
	{name: "join", steps: []string{"SELECT k.id FROM dg_sm.k k JOIN {T} ON true"}},
	{name: "rows from", steps: []string{"SELECT * FROM ROWS FROM ({C}) AS x"}},
	{name: "scalar subquery", steps: []string{"SELECT (SELECT count(*) FROM {T}) FROM dg_sm.k"}},
	{name: "cte", steps: []string{"WITH c AS (SELECT * FROM {T}) SELECT count(*) FROM c"}},
	{name: "exists", steps: []string{"SELECT id FROM dg_sm.k WHERE EXISTS (SELECT 1 FROM {T})"}},
	{name: "lateral", steps: []string{"SELECT k.id FROM dg_sm.k k, LATERAL (SELECT * FROM {T}) l"}},
	{name: "insert select", steps: []string{"INSERT INTO dg_sm.a SELECT 200, x::text FROM {T} RETURNING v"}},
	{name: "on conflict set", steps: []string{"INSERT INTO dg_sm.k VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = (SELECT string_agg(x::text, ',') FROM {T}) RETURNING v"}},
	{name: "on conflict where", steps: []string{"INSERT INTO dg_sm.k VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET v = excluded.v WHERE EXISTS (SELECT 1 FROM {T})"}},
	{name: "update where", steps: []string{"UPDATE dg_sm.k SET v = 'z' WHERE id IN (SELECT 2 FROM {T})"}},
	{name: "update from", steps: []string{"UPDATE dg_sm.k SET v = x::text FROM {T} WHERE k.id = 2 RETURNING v"}},
	{name: "delete where", steps: []string{"DELETE FROM dg_sm.k WHERE id = 999 AND EXISTS (SELECT 1 FROM {T})"}},
	{name: "merge using", steps: []string{"MERGE INTO dg_sm.k t USING (SELECT 2 AS id, x::text AS v FROM {T} LIMIT 1) s ON s.id = t.id WHEN MATCHED THEN UPDATE SET v = s.v", "SELECT v FROM dg_sm.k"}},
	{name: "returning", steps: []string{"INSERT INTO dg_sm.k VALUES (104, 'r') ON CONFLICT (id) DO NOTHING RETURNING (SELECT count(*) FROM {T})"}},
	{name: "temp create as", steps: []string{"CREATE TEMP TABLE tf{N} AS SELECT * FROM {T}", "SELECT * FROM tf{N}", "DROP TABLE tf{N}"}},
	{name: "copy", steps: []string{"COPY (SELECT * FROM {T}) TO STDOUT"}, pgwire: true},
	{name: "explain", steps: []string{"EXPLAIN SELECT k.id FROM dg_sm.k k, {T}"}},
	{name: "prepare", steps: []string{"PREPARE pf{N} AS SELECT * FROM {T}", "EXECUTE pf{N}", "DEALLOCATE pf{N}"}},
	{name: "cursor", steps: []string{"BEGIN", "DECLARE cf{N} CURSOR FOR SELECT * FROM {T}", "FETCH ALL FROM cf{N}", "COMMIT"}},
	{name: "view", steps: []string{"CREATE VIEW dg_sm.vf{N} AS SELECT * FROM {T}", "SELECT * FROM dg_sm.vf{N}"}},
	{name: "create table as", steps: []string{"CREATE TABLE dg_sm.ctf{N} AS SELECT * FROM {T}", "SELECT * FROM dg_sm.ctf{N}"}},
	{name: "select into", steps: []string{"SELECT * INTO dg_sm.itf{N} FROM {T}", "SELECT * FROM dg_sm.itf{N}"}},
}

// gateSession runs statements on one session of one protocol and returns
// everything the client got back as text: rows, COPY data, and errors.
type gateSession interface {
	run(ctx context.Context, query string) (out string, code string, err error)
}

type pgwireGate struct{ c *pgx.Conn }

func (g pgwireGate) run(ctx context.Context, q string) (string, string, error) {
	if strings.HasPrefix(q, "COPY ") {
		var buf bytes.Buffer
		_, err := g.c.PgConn().CopyTo(ctx, &buf, q)
		return buf.String(), pgCode(err), err
	}
	results, err := g.c.PgConn().Exec(ctx, q).ReadAll()
	var out strings.Builder
	for _, r := range results {
		for _, row := range r.Rows {
			for _, v := range row {
				out.Write(v)
				out.WriteByte('|')
			}
			out.WriteByte('\n')
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		fmt.Fprintf(&out, "%s %s %s %s", pe.Message, pe.Detail, pe.Hint, pe.Where)
	}
	return out.String(), pgCode(err), err
}

type flightGate struct {
	cl  *flightsql.Client
	ctx context.Context // the client's authenticated context
}

func (g flightGate) run(ctx context.Context, q string) (string, string, error) {
	var out string
	var err error
	upper := strings.ToUpper(q)
	if strings.HasPrefix(upper, "SELECT") || strings.HasPrefix(upper, "WITH") || strings.HasPrefix(upper, "EXPLAIN") ||
		strings.HasPrefix(upper, "EXECUTE") || strings.HasPrefix(upper, "FETCH") || strings.Contains(upper, "RETURNING") {
		var rows []string
		rows, _, err = flightRows(g.ctx, g.cl, q)
		out = strings.Join(rows, "\n")
	} else {
		_, err = g.cl.ExecuteUpdate(g.ctx, q)
	}
	code := ""
	if err != nil {
		out += "\n" + err.Error()
		if i := strings.Index(err.Error(), "SQLSTATE "); i >= 0 && len(err.Error()) >= i+14 {
			code = err.Error()[i+9 : i+14]
		}
	}
	return out, code, err
}

// TestDuckGateRefusesDuckDBFunctions: no statement a user writes, at any
// clause of any statement kind, can call a DuckDB function outside the
// engine's allowed surface — every one DuckDB has, listed from DuckDB
// itself, is placed at every expression and FROM position of the corpus
// above, over pgwire and over Flight SQL, with a path as its argument: a
// file planted in DuckDB's own spill directory (the one directory DuckDB's
// configuration leaves open to it); the file functions also get the
// victim workspace's Parquet files, a file planted in its warehouse
// directory and one in the server's temp directory. Each is refused with
// 42883, as PostgreSQL refuses a function it does not have (a function
// PostgreSQL has gets PostgreSQL's or the engine's answer), and nothing a
// client gets back (rows, COPY data, errors) holds a planted file's
// contents, a name from a listing, or the victim's rows. The functions of the surface run
// at expression positions with the same path without giving them either.
// Every position is first run with an allowed call, which must succeed,
// so each refusal is the gate's. The server serves both doors after.
func TestDuckGateRefusesDuckDBFunctions(t *testing.T) {
	s, addr := flightServerT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	admin := s.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('dg_v')", "SELECT lakesoul.create_workspace('dg_m')",
		"SELECT lakesoul.create_user('dg_victim', 'victim-pw', 'dg_v', admin => true)",
		"SELECT lakesoul.create_user('dg_mallory', 'mallory-pw', 'dg_m', admin => true)")
	marker := func(prefix string) string {
		b := make([]byte, 6)
		rand.Read(b)
		return prefix + hex.EncodeToString(b)
	}
	secret, content, name := marker("dgsecret"), marker("dgcontent"), marker("dgplant")
	victim := s.login(t, ctx, "dg_victim", "victim-pw")
	mustExec(t, ctx, victim, "CREATE SCHEMA dg_sv",
		"CREATE TABLE dg_sv.secret (id bigint PRIMARY KEY, v text)", "INSERT INTO dg_sv.secret VALUES (1, '"+secret+"')",
		"UPDATE dg_sv.secret SET v = 'overwritten' WHERE id = 1",
		"CREATE TABLE dg_sv.log (v text)", "INSERT INTO dg_sv.log VALUES ('"+secret+"')")
	wh := filepath.Join(s.dataDir, "warehouse")
	duckTemp := filepath.Join(s.dataDir, "tmp", "duckdb")
	plant := func(dir string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(p, []byte("a,b\n1,"+content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inDuckTemp := plant(duckTemp)
	filePaths := []string{plant(filepath.Join(wh, "dg_sv")), plant(filepath.Join(s.dataDir, "tmp")),
		filepath.Join(wh, "dg_sv", "secret", "*.parquet"), filepath.Join(wh, "*", "*", "*"), duckTemp + "/*"}

	mallory := s.login(t, ctx, "dg_mallory", "mallory-pw")
	mustExec(t, ctx, mallory, "CREATE SCHEMA dg_sm",
		"CREATE TABLE dg_sm.k (id bigint PRIMARY KEY, v text)", "INSERT INTO dg_sm.k VALUES (1, 'a'), (2, 'b')",
		"CREATE TABLE dg_sm.a (id bigint, v text)", "INSERT INTO dg_sm.a VALUES (1, 'a'), (2, 'b')")
	fl, fctx := mustFlight(t, ctx, addr, "dg_mallory", "mallory-pw")
	sessions := map[string]gateSession{"pgwire": pgwireGate{mallory}, "flight": flightGate{fl, fctx}}

	// Every function DuckDB has, from DuckDB itself.
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	var all []string
	rows, err := duck.QueryContext(ctx, "SELECT DISTINCT function_name FROM duckdb_functions() ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		all = append(all, n)
	}
	rows.Close()
	scalar, table := engine.DuckDBSurface()
	var refused, allowed []string
	for _, n := range all {
		if slices.Contains(scalar, strings.ToLower(n)) || slices.Contains(table, strings.ToLower(n)) {
			allowed = append(allowed, n)
		} else {
			refused = append(refused, n)
		}
	}
	if len(refused) < 500 || !slices.Contains(refused, "read_parquet") || !slices.Contains(refused, "current_setting") {
		t.Fatalf("DuckDB lists %d functions, %d outside the surface", len(all), len(refused))
	}
	// PostgreSQL's own functions (and type names, which PostgreSQL calls
	// as casts) get PostgreSQL's answer where PostgreSQL
	// answers (statements without lake tables run on the catalog) or the
	// engine's (current_setting, nextval, …; 0A000 for those DuckDB would
	// answer from its state): only that nothing leaks is checked for them.
	pgFuncs := map[string]bool{}
	for _, n := range queryStrings(t, ctx, s.catalogConn(t), `SELECT proname FROM pg_proc
		WHERE pronamespace = 'pg_catalog'::regnamespace UNION SELECT typname FROM pg_type`) { // t(x) casts to type t
		pgFuncs[n] = true
	}
	fileFuncs := []string{"read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema", "read_csv", "read_csv_auto",
		"read_json", "read_json_auto", "read_text", "read_blob", "glob", "sniff_csv", "query_table"}

	seq := 0
	// A leak is a planted file's contents, the victim's rows, or a planted
	// file's name the statement did not write itself (a listing).
	leak := func(out, call string) bool {
		return strings.Contains(out, content) || strings.Contains(out, secret) ||
			strings.Contains(out, name) && !strings.Contains(call, name)
	}
	// runPosition runs p with its place filled by call (an expression) and
	// returns the first error's SQLSTATE and what came back.
	runPosition := func(g gateSession, proto string, p gatePosition, call string) (string, string) {
		seq++
		var got strings.Builder
		inBlock := false
		for _, st := range p.steps {
			q := strings.NewReplacer("{E}", call, "{T}", call+" AS x", "{C}", call, "{N}", fmt.Sprint(seq)).Replace(st)
			out, code, err := g.run(ctx, q)
			got.WriteString(out)
			inBlock = inBlock || st == "BEGIN"
			if err != nil {
				if inBlock {
					g.run(ctx, "ROLLBACK")
				}
				if code == "" {
					code = "error: " + err.Error()
				}
				return code, got.String()
			}
		}
		return "", got.String()
	}
	failures := 0
	check := func(proto string, p gatePosition, positions string, fn, call string, wantRefused bool) {
		if p.pgwire && proto != "pgwire" {
			return
		}
		code, out := runPosition(sessions[proto], proto, p, call)
		if leak(out, call) {
			failures++
			t.Errorf("%s, %s %q, %s: a planted file or the victim's rows came back:\n%s", proto, positions, p.name, call, out)
		}
		if wantRefused && code != "42883" {
			failures++
			t.Errorf("%s, %s %q, %s: got %q, want 42883 (%.300s)", proto, positions, p.name, fn, code, out)
		}
	}
	for _, proto := range []string{"pgwire", "flight"} {
		// Controls: each position works with an allowed call.
		for _, p := range gateScalarPositions {
			if p.pgwire && proto != "pgwire" {
				continue
			}
			if code, out := runPosition(sessions[proto], proto, p, "md5('dg')"); code != "" {
				t.Fatalf("%s, expression position %q does not run with an allowed call: %s %s", proto, p.name, code, out)
			}
		}
		for _, p := range gateTablePositions {
			if p.pgwire && proto != "pgwire" {
				continue
			}
			if code, out := runPosition(sessions[proto], proto, p, "generate_series(1, 2)"); code != "" {
				t.Fatalf("%s, FROM position %q does not run with an allowed call: %s %s", proto, p.name, code, out)
			}
		}
		for _, fn := range refused {
			ident := `"` + strings.ReplaceAll(fn, `"`, `""`) + `"`
			paths := []string{inDuckTemp}
			if slices.Contains(fileFuncs, fn) {
				paths = append(paths, filePaths...)
			}
			for _, path := range paths {
				call := ident + "(" + quoteSQL(path) + ")"
				for _, p := range gateScalarPositions {
					check(proto, p, "expression position", fn, call, !pgFuncs[fn])
				}
				for _, p := range gateTablePositions {
					check(proto, p, "FROM position", fn, call, !pgFuncs[fn])
				}
			}
			if failures > 40 {
				t.Fatalf("stopped after %d failures", failures)
			}
		}
		// The surface computes on its arguments: a path is just text.
		for _, fn := range allowed {
			call := `"` + fn + `"(` + quoteSQL(inDuckTemp) + ")"
			for _, p := range gateScalarPositions[:4] {
				check(proto, p, "expression position", fn, call, false)
			}
		}
	}
	for proto, g := range sessions {
		if out, _, err := g.run(ctx, "SELECT count(*) FROM dg_sm.k"); err != nil {
			t.Errorf("%s: the server no longer serves: %v %s", proto, err, out)
		}
	}
}

// quoteSQL is s as an SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
