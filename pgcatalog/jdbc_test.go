package pgcatalog

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// jdbcChecks verifies pgjdbc 42.5's DatabaseMetaData queries, captured in
// testdata/jdbc (see Capture.java there), for schema "s" and table "t".
var jdbcChecks = map[string]func(t *testing.T, c *catalogDB, rows [][]string){
	"getSchemas": func(t *testing.T, c *catalogDB, rows [][]string) {
		wantRows(t, "getSchemas", [][]string{col(rows, 0)},
			[][]string{{"information_schema", "pg_catalog", "public", "s"}})
	},
	"getSchemasPattern": func(t *testing.T, c *catalogDB, rows [][]string) {
		wantRows(t, "getSchemas(s)", rows, [][]string{{"s", null}})
	},
	"getTables": func(t *testing.T, c *catalogDB, rows [][]string) {
		var got [][]string
		for _, r := range rows {
			got = append(got, r[1:5])
		}
		wantRows(t, "getTables(s, TABLE)", got, [][]string{{"s", "t", "TABLE", null}, {"s", "u", "TABLE", null}})
	},
	"getTablesAll": func(t *testing.T, c *catalogDB, rows [][]string) {
		var lake, index [][]string
		system := 0
		for _, r := range rows {
			switch {
			case r[1] == "s" && r[3] == "INDEX":
				index = append(index, r[1:4])
			case r[1] == "s":
				lake = append(lake, r[1:4])
			case r[1] == "pg_catalog" || r[1] == "information_schema":
				system++
			default:
				t.Errorf("getTables(all): unexpected row %q", r)
			}
		}
		wantRows(t, "getTables(all) lake tables", lake, [][]string{{"s", "t", "TABLE"}, {"s", "u", "TABLE"}})
		wantRows(t, "getTables(all) lake indexes", index, [][]string{{"s", "t_pkey", "INDEX"}})
		if !slices.ContainsFunc(rows, func(r []string) bool { return r[2] == "pg_class" && r[3] == "SYSTEM TABLE" }) {
			t.Errorf("getTables(all): no pg_catalog.pg_class (%d system rows)", system)
		}
	},
	"getColumns": func(t *testing.T, c *catalogDB, rows [][]string) {
		// nspname, relname, attname, atttypid, attnotnull, atttypmod, …, attnum
		var got [][]string
		for _, r := range rows {
			got = append(got, []string{r[2], r[3], r[4], r[5], r[8]})
		}
		want := [][]string{
			{"id", "20", "t", "-1", "1"}, {"d", "1082", "f", "-1", "2"}, {"name", "25", "f", "-1", "3"},
			{"amount", "1700", "f", fmt.Sprint(10<<16 | 2 + 4), "4"}, {"score", "701", "f", "-1", "5"},
			{"v", "1043", "f", "24", "6"}, {"uid", "2950", "f", "-1", "7"}, {"ts", "1184", "f", "-1", "8"},
			{"tsn", "1114", "f", "-1", "9"}, {"b", "17", "f", "-1", "10"}, {"f", "700", "f", "-1", "11"},
			{"i", "23", "f", "-1", "12"}, {"sm", "21", "f", "-1", "13"}, {"by", "21", "f", "-1", "14"},
			{"ok", "16", "f", "-1", "15"}, {"j", "114", "f", "-1", "16"},
		}
		wantRows(t, "getColumns(s, t)", got, want)
	},
	"getPrimaryKeys": func(t *testing.T, c *catalogDB, rows [][]string) {
		wantRows(t, "getPrimaryKeys(s, t)", rows, [][]string{{null, "s", "t", "id", "1", "t_pkey"}})
	},
	"getIndexInfo": func(t *testing.T, c *catalogDB, rows [][]string) {
		var got [][]string
		for _, r := range rows {
			got = append(got, r[1:10])
		}
		wantRows(t, "getIndexInfo(s, t)", got, [][]string{{"s", "t", "f", null, "t_pkey", "3", "1", "id", "A"}})
	},
}

func TestJDBCMetaData(t *testing.T) {
	c := newCatalogDB(t)
	rd, _ := c.reader(t)
	for name, check := range jdbcChecks {
		for who, conn := range map[string]*pgx.Conn{"superuser": c.su, "reader": rd} {
			t.Run(name+"/"+who, func(t *testing.T) {
				stmts := loadFlow(t, "jdbc", name, nil)
				if len(stmts) != 1 {
					t.Fatalf("%d statements, want 1", len(stmts))
				}
				rows := runFlow(t, conn, stmts)[0]
				assertNoInternalNames(t, name, rows)
				check(t, c, rows)
			})
		}
	}
}
