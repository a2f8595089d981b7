package pgcatalog

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// loadFlow returns the statements a client sent for one command, as captured
// in testdata/<dir>/<name>.sql, with {{OID:<rel>}} replaced by lake OIDs.
func loadFlow(t *testing.T, dir, name string, oids map[string]string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for rel, oid := range oids {
		text = strings.ReplaceAll(text, "{{OID:"+rel+"}}", oid)
	}
	if strings.Contains(text, "{{OID:") {
		t.Fatalf("%s/%s: unresolved OID placeholder", dir, name)
	}
	stmts, err := pg_query.SplitWithParser(text, true)
	if err != nil {
		t.Fatal(err)
	}
	return stmts
}

// runFlow runs every statement of a flow through RewriteSQL on conn.
func runFlow(t *testing.T, conn *pgx.Conn, stmts []string) [][][]string {
	t.Helper()
	out := make([][][]string, len(stmts))
	for i, s := range stmts {
		out[i] = rewriteAndQuery(t, conn, s)
	}
	return out
}

// col returns column i of rows.
func col(rows [][]string, i int) []string {
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

func wantRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// tAttrs is the column query's (attname, format_type, attnotnull) of s.t.
func tAttrs() [][]string {
	var out [][]string
	for _, c := range tColumns {
		out = append(out, []string{c[0], c[1], fmt.Sprint(c[0] == "id")[:1]})
	}
	return out
}

// psqlChecks verifies what psql 15 would print for each captured command
// (file name in testdata/psql, see commands.txt there). Every flow also runs
// through the generic checks in TestPsqlCommands.
var psqlChecks = map[string]func(t *testing.T, c *catalogDB, res [][][]string){
	// \dt with lakesoul.search_path = 'public,s': the visible lake tables.
	"dt": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\dt`, res[0], [][]string{{"s", "t", "table", c.owner}, {"s", "u", "table", c.owner}})
	},
	"dt_s": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\dt s.*`, res[0], [][]string{{"s", "t", "table", c.owner}, {"s", "u", "table", c.owner}})
	},
	"dtplus_s": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\dt+ s.* names`, [][]string{col(res[0], 0), col(res[0], 1), col(res[0], 2)},
			[][]string{{"s", "s"}, {"t", "u"}, {"table", "table"}})
	},
	"d": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\d`, res[0], [][]string{{"s", "t", "table", c.owner}, {"s", "u", "table", c.owner}})
	},
	"dplus": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\d+ names`, [][]string{col(res[0], 1)}, [][]string{{"t", "u"}})
	},
	"dn": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\dn`, res[0], [][]string{{"public", c.owner}, {"s", c.owner}})
	},
	"dnplus": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\dn+`, res[0], [][]string{{"public", c.owner, null, null}, {"s", c.owner, null, "sales data"}})
	},
	"l": func(t *testing.T, c *catalogDB, res [][][]string) {
		if len(res[0]) == 0 {
			t.Errorf(`\l: no databases`)
		}
	},
	"d_s_t":     checkDescribeT,
	"dplus_s_t": checkDescribeT,
	"d_s_u": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\d s.u lookup`, res[0], [][]string{{c.oids["s.u"], "s", "u"}})
		if res[1][0][1] != "r" || res[1][0][2] != "f" {
			t.Errorf(`\d s.u: relkind/relhasindex %q, want r/f`, res[1][0])
		}
		wantRows(t, `\d s.u columns`, [][]string{col(res[2], 0), col(res[2], 1), col(res[2], 3)},
			[][]string{{"a", "b"}, {"integer", "text"}, {"f", "f"}})
	},
	"d_s_t_pkey": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\d s.t_pkey lookup`, res[0], [][]string{{c.oids["s.t_pkey"], "s", "t_pkey"}})
		if res[1][0][1] != "i" || res[1][0][14] != "btree" {
			t.Errorf(`\d s.t_pkey: relkind/amname %q, want i/btree`, res[1][0])
		}
		wantRows(t, `\d s.t_pkey columns`, res[2], [][]string{{"id", "bigint", "yes", "id"}})
		wantRows(t, `\d s.t_pkey index`, res[3], [][]string{{"t", "t", "f", "t", "f", "f", "f", "f", "btree", "t", null}})
	},
	"d_s": func(t *testing.T, c *catalogDB, res [][][]string) {
		wantRows(t, `\d s.* lookup`, res[0], [][]string{
			{c.oids["s.t"], "s", "t"}, {c.oids["s.t_pkey"], "s", "t_pkey"}, {c.oids["s.u"], "s", "u"}})
	},
}

// checkDescribeT checks \d s.t and \d+ s.t: lookup, table kind, columns with
// types and NOT NULL, and the "Indexes:" footer's primary key.
func checkDescribeT(t *testing.T, c *catalogDB, res [][][]string) {
	wantRows(t, `\d s.t lookup`, res[0], [][]string{{c.oids["s.t"], "s", "t"}})
	if r := res[1][0]; r[1] != "r" || r[2] != "t" {
		t.Errorf(`\d s.t: relkind/relhasindex %q, want r/t`, r)
	}
	got := make([][]string, len(res[2]))
	for i, r := range res[2] {
		got[i] = []string{r[0], r[1], r[3]}
		if r[2] != null || r[5] != "" || r[6] != "" {
			t.Errorf(`\d s.t: column %s has default/identity/generated %q`, r[0], r)
		}
	}
	wantRows(t, `\d s.t columns`, got, tAttrs())
	wantRows(t, `\d s.t indexes`, res[3], [][]string{{"t_pkey", "t", "t", "f", "t",
		"CREATE UNIQUE INDEX t_pkey ON s.t USING btree (id)", "PRIMARY KEY (id)", "p", "f", "f", "f", "0"}})
	for i := 4; i < len(res); i++ {
		if len(res[i]) != 0 {
			t.Errorf(`\d s.t: footer query %d returned %q, want nothing`, i, res[i])
		}
	}
}

func TestPsqlCommands(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `UPDATE public.namespace SET comment = 'sales data' WHERE namespace = 's'`)
	rd, _ := c.reader(t)
	sessions := map[string]*pgx.Conn{"superuser": c.su, "reader": rd}
	for _, conn := range sessions {
		exec(t, conn, `SET lakesoul.search_path = 'public,s'`)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "psql", "commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, cmd, _ := strings.Cut(line, "|")
		check := psqlChecks[name]
		if check == nil {
			t.Errorf("no check for %s (%s)", name, cmd)
			continue
		}
		for who, conn := range sessions {
			t.Run(name+"/"+who, func(t *testing.T) {
				res := runFlow(t, conn, loadFlow(t, "psql", name, c.oids))
				for i, rows := range res {
					assertNoInternalNames(t, fmt.Sprintf("%s statement %d", cmd, i), rows)
				}
				check(t, c, res)
			})
		}
	}
}

// TestPsqlSearchPath: \dt lists what lakesoul.search_path makes visible.
func TestPsqlSearchPath(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `SELECT lakesoul.create_table('tid_dt', 'default', 't', 'file:///lake/default/t', $1, '{}', ';')`, uSchema)
	dt := loadFlow(t, "psql", "dt", nil)
	for _, tc := range []struct {
		path string
		want [][]string
	}{
		// LakeSoul's namespace "default" is the schema public (SchemaName).
		{"", nil}, // an empty search path, as pg_dump sets it: nothing is visible
		{"public", [][]string{{"public", "t"}}},
		{"s", [][]string{{"s", "t"}, {"s", "u"}}},
		{"s, public", [][]string{{"s", "t"}, {"s", "u"}}}, // public.t is hidden by s.t
		{`public,"s"`, [][]string{{"public", "t"}, {"s", "u"}}},
		{`default,"s"`, [][]string{{"s", "t"}, {"s", "u"}}}, // no schema is called default
		{"nosuch", nil},
	} {
		exec(t, c.su, `SELECT set_config('lakesoul.search_path', $1, false)`, tc.path)
		res := runFlow(t, c.su, dt)
		var got [][]string
		for _, r := range res[0] {
			got = append(got, r[:2])
		}
		wantRows(t, "search_path "+tc.path, got, tc.want)
	}
}
