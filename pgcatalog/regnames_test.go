package pgcatalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestObjectNames enumerates every relation, type and schema the emulation
// shows of the lake (tables, their key and column indexes, views,
// sequences, enum types, namespaces — LakeSoul's default one as public),
// and checks that each resolves by its qualified name through ::regclass /
// ::regtype / ::regnamespace (literals and parameters), to_regclass and
// friends, and prints as its name through ::regclass::text, as PostgreSQL
// does for its own objects; then the search path rules for unqualified
// names, pg_get_serial_sequence and has_schema_privilege.
func TestObjectNames(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_p', 'default', 'p', 'file:///lake/default/p', $1, '{}', ';id')`,
		`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"pg_default":"nextval('public.p_id_seq'::regclass)"}},{"name":"v","type":"string","nullable":true,"metadata":{}}]}`)
	exec(t, c.su, `SELECT lakesoul.create_sequence('default', 'p_id_seq', 1, 1, 1, 9223372036854775807, false, 'tid_p')`)
	exec(t, c.su, `SELECT lakesoul.create_sequence('s', 'q', 1, 1, 1, 100, false, NULL)`)
	exec(t, c.su, `SELECT lakesoul.create_view('s', 'v', 'SELECT 1 AS x', '{x}', '{23}', '{-1}', false)`)
	exec(t, c.su, `SELECT lakesoul.create_enum('s', 'Mood', '{sad,happy}')`)
	exec(t, c.su, `SELECT set_config('lakesoul.search_path', 'public', false)`)

	rels := query(t, c.su, `SELECT n.nspname, c.relname, c.oid::text, c.relkind::text
		FROM lakesoul_pg.pg_class c JOIN lakesoul_pg.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`)
	kinds := map[string]bool{}
	for _, r := range rels {
		kinds[r[3]] = true
	}
	for _, k := range []string{"r", "i", "v", "S"} {
		if !kinds[k] {
			t.Fatalf("no lake relation of kind %s to check: %v", k, rels)
		}
	}
	quote := func(s string) string { return query(t, c.su, `SELECT quote_ident($1)`, s)[0][0] }
	for _, r := range rels {
		ns, rel, oid := r[0], r[1], r[2]
		qualified := quote(ns) + "." + quote(rel)
		shown := qualified
		if ns == "public" {
			shown = quote(rel) // visible on the search path
		}
		lit := "'" + qualified + "'"
		for _, q := range []string{
			`SELECT ` + lit + `::regclass::oid::text`,
			`SELECT CAST(` + lit + ` AS pg_catalog.regclass)::oid::text`,
			`SELECT to_regclass(` + lit + `)::oid::text`,
			`SELECT c.oid::text FROM pg_class c WHERE c.oid = ` + lit + `::regclass`,
		} {
			if got := rewriteAndQuery(t, c.su, q); len(got) != 1 || got[0][0] != oid {
				t.Errorf("%s: %v, want %s", q, got, oid)
			}
		}
		out, _ := RewriteSQL(`SELECT $1::regclass::oid::text, $1::regclass::text`)
		if got, err := tryQuery(c.su, out, qualified); err != nil || got[0][0] != oid || got[0][1] != shown {
			t.Errorf("%s with $1 = %s: %v %v, want %s %s", out, qualified, got, err, oid, shown)
		}
		for _, q := range []string{
			`SELECT ` + oid + `::regclass::text`,
			`SELECT c.oid::regclass::text FROM pg_class c WHERE c.oid = ` + oid,
			`SELECT ` + lit + `::regclass`,
		} {
			if got := rewriteAndQuery(t, c.su, q); len(got) != 1 || got[0][0] != shown {
				t.Errorf("%s: %v, want %s", q, got, shown)
			}
		}
	}

	// Unqualified names: pg_catalog first, then the search path in order.
	for _, tc := range []struct{ path, name, want string }{
		{"public", "p", "p"},
		{"public", "t", ""},
		{"s, public", "t", "t"},
		{"public, s", "q", "q"},
		{"s", "pg_class", "pg_class"},
		{"s", "p", ""},
	} {
		exec(t, c.su, `SELECT set_config('lakesoul.search_path', $1, false)`, tc.path)
		got := rewriteAndQuery(t, c.su, `SELECT coalesce(to_regclass('`+tc.name+`')::text, '')`)
		if got[0][0] != tc.want {
			t.Errorf("search path %s: to_regclass(%s) = %q, want %q", tc.path, tc.name, got[0][0], tc.want)
		}
	}
	exec(t, c.su, `SELECT set_config('lakesoul.search_path', 'public', false)`)

	// Errors are PostgreSQL's.
	for q, code := range map[string]string{
		`SELECT 'nope'::regclass`:                    "42P01",
		`SELECT 's.nope'::regclass`:                  "42P01",
		`SELECT 'nosuch.t'::regclass`:                "3F000",
		`SELECT 'table_info'::regclass`:              "42P01", // the catalog database's own tables stay hidden
		`SELECT 's."Mood"'::regtype::text`:           "",
		`SELECT 'Mood'::regtype`:                     "42704",
		`SELECT 'nosuch'::regnamespace`:              "42704",
		`SELECT pg_get_serial_sequence('p', 'nope')`: "42703",
	} {
		out, err := RewriteSQL(q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tryQuery(c.su, out)
		var pe *pgconn.PgError
		got := ""
		if errors.As(err, &pe) {
			got = pe.Code
		} else if err != nil {
			got = err.Error()
		}
		if got != code {
			t.Errorf("%s: %v, want %q", q, err, code)
		}
	}
	for q, want := range map[string]string{
		`SELECT 's."Mood"'::regtype::text`:                                                      `s."Mood"`,
		`SELECT 'int4'::regtype::text`:                                                          "integer",
		`SELECT 'character varying'::regtype::text`:                                             "character varying",
		`SELECT to_regtype('s.nope') IS NULL`:                                                   "t",
		`SELECT 'public'::regnamespace::text`:                                                   "public",
		`SELECT 's'::regnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 's')`:         "t",
		`SELECT to_regnamespace('default') IS NULL`:                                             "t",
		`SELECT pg_get_serial_sequence('p', 'id')`:                                              "public.p_id_seq",
		`SELECT pg_get_serial_sequence('public.p', 'v') IS NULL`:                                "t",
		`SELECT pg_get_serial_sequence('pg_class', 'oid') IS NULL`:                              "t",
		`SELECT has_schema_privilege('public', 'USAGE')`:                                        "t",
		`SELECT has_schema_privilege('s', 'CREATE')`:                                            "t",
		`SELECT has_schema_privilege(n.oid, 'USAGE') FROM pg_namespace n WHERE n.nspname = 's'`: "t",
		`SELECT has_schema_privilege(current_user, 's', 'USAGE')`:                               "t",
		`SELECT has_schema_privilege('pg_catalog', 'USAGE')`:                                    "t",
	} {
		if got := rewriteAndQuery(t, c.su, q); len(got) != 1 || got[0][0] != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
	// A SERIAL default names its sequence as regclass output does, by the
	// search path (TypeORM compares column_default with nextval('t_id_seq'::regclass)).
	for _, tc := range []struct{ path, want string }{
		{"public", `nextval('p_id_seq'::regclass)`},
		{"s", `nextval('public.p_id_seq'::regclass)`},
	} {
		exec(t, c.su, `SELECT set_config('lakesoul.search_path', $1, false)`, tc.path)
		for _, q := range []string{
			`SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid WHERE c.relname = 'p'`,
			`SELECT column_default FROM information_schema.columns WHERE table_name = 'p' AND column_name = 'id'`,
		} {
			if got := rewriteAndQuery(t, c.su, q); len(got) != 1 || got[0][0] != tc.want {
				t.Errorf("search path %s: %s: %v, want %s", tc.path, q, got, tc.want)
			}
		}
	}
	exec(t, c.su, `SELECT set_config('lakesoul.search_path', 'public', false)`)
	out, _ := RewriteSQL(`SELECT t.oid::text FROM pg_type t WHERE t.oid = $1::regtype`)
	if got, err := tryQuery(c.su, out, `s."Mood"`); err != nil || len(got) != 1 {
		t.Errorf("$1::regtype with an enum name (psycopg's EnumInfo.fetch): %v %v", got, err)
	}
	if _, err := tryQuery(c.su, `SELECT lakesoul_pg.has_schema_privilege('nosuch', 'USAGE')`); err == nil {
		t.Errorf("has_schema_privilege of a missing schema succeeded")
	}
}

// TestObjectNameColumns: result columns of object-name casts are named as
// PostgreSQL names them.
func TestObjectNameColumns(t *testing.T) {
	for q, want := range map[string]string{
		`SELECT 't'::regclass FROM pg_class c`:            "regclass",
		`SELECT c.oid::regclass FROM pg_class c`:          "oid",
		`SELECT c.oid::regclass::text FROM pg_class c`:    "oid",
		`SELECT to_regclass('t') FROM pg_class c`:         "to_regclass",
		`SELECT 't'::regclass::text AS x FROM pg_class c`: "x",
	} {
		out, err := RewriteSQL(q)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, " AS "+want+" ") {
			t.Errorf("%s → %s: column not named %s", q, out, want)
		}
	}
}
