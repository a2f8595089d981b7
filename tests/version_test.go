package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestServerVersionConsistent checks that every way a client asks for the
// server version agrees with the server_version of ParameterStatus: SHOW,
// version() and current_setting() (which would otherwise answer from the
// catalog PostgreSQL), through pgx (extended and simple protocol) and psql,
// and that psql's \d, which picks its queries by that version, still works.
func TestServerVersionConsistent(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)

	ver := c.PgConn().ParameterStatus("server_version")
	major, minor, ok := strings.Cut(ver, ".")
	mj, err1 := strconv.Atoi(major)
	mn, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || mj < 16 {
		t.Fatalf("ParameterStatus server_version %q, want 16.x", ver)
	}
	num := strconv.Itoa(mj*10000 + mn)
	versionPrefix := "PostgreSQL " + ver + " "

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var v, colName string
		rows, err := c.Query(ctx, "SELECT version()", mode)
		if err != nil {
			t.Fatalf("SELECT version() (%v): %v", mode, err)
		}
		for rows.Next() {
			colName = rows.FieldDescriptions()[0].Name
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("SELECT version() (%v): %v", mode, err)
		}
		if !strings.HasPrefix(v, versionPrefix) || colName != "version" {
			t.Errorf("SELECT version() (%v) = %q in column %q, want %q… in column version", mode, v, colName, versionPrefix)
		}
		wantRows(t, fmt.Sprintf("settings (%v)", mode), queryStrings(t, ctx, c,
			`SELECT current_setting('server_version'), current_setting('server_version_num'),
			        pg_catalog.current_setting('SERVER_VERSION', true), current_setting('server_version_num')::int = `+num+`,
			        pg_catalog.version() = version()`, mode),
			[]string{ver + "|" + num + "|" + ver + "|true|true"})
		wantRows(t, fmt.Sprintf("SHOW server_version (%v)", mode), queryStrings(t, ctx, c, "SHOW server_version", mode), []string{ver})
		wantRows(t, fmt.Sprintf("SHOW server_version_num (%v)", mode), queryStrings(t, ctx, c, "SHOW server_version_num", mode), []string{num})
	}
	// Other settings still come from the catalog PostgreSQL.
	wantRows(t, "current_setting('max_identifier_length')",
		queryStrings(t, ctx, c, "SELECT current_setting('max_identifier_length')"), []string{"63"})

	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	got := strings.Split(strings.TrimSpace(p.exec(ctx, "SELECT version()", "SHOW server_version", "SHOW server_version_num",
		"SELECT current_setting('server_version') || ' ' || current_setting('server_version_num')")), "\n")
	if len(got) != 4 || !strings.HasPrefix(got[0], versionPrefix) || got[1] != ver || got[2] != num || got[3] != ver+" "+num {
		t.Errorf("psql versions: %q, want %q…, %s, %s, %s %s", got, versionPrefix, ver, num, ver, num)
	}
	mustExec(t, ctx, c, "CREATE SCHEMA vers", "CREATE TABLE vers.t (id bigint PRIMARY KEY, name text)")
	if out := p.exec(ctx, `\d vers.t`); !strings.Contains(out, "id|bigint") || !strings.Contains(out, "name|text") {
		t.Errorf(`psql \d vers.t:\n%s`, out)
	}
}
