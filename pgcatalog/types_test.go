package pgcatalog

import (
	"fmt"
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
)

// TestTypeMapping checks the SQL type mapping against schema.PGTypeOf, which
// decides the types the wire reports for the same columns.
func TestTypeMapping(t *testing.T) {
	c := newCatalogDB(t)
	fields := []string{
		`{"name":"a","type":"long"}`, `{"name":"a","type":"integer"}`, `{"name":"a","type":"short"}`,
		`{"name":"a","type":"byte"}`, `{"name":"a","type":"double"}`, `{"name":"a","type":"float"}`,
		`{"name":"a","type":"boolean"}`, `{"name":"a","type":"string"}`, `{"name":"a","type":"binary"}`,
		`{"name":"a","type":"date"}`, `{"name":"a","type":"timestamp"}`, `{"name":"a","type":"timestamp_ntz"}`,
		`{"name":"a","type":"decimal(10,2)"}`, `{"name":"a","type":"decimal(38, 0)"}`,
		`{"name":"a","type":"decimal(1,1)"}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"varchar(20)"}}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"varchar"}}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"bpchar(3)"}}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"uuid"}}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"json"}}`,
		`{"name":"a","type":"string","metadata":{"pg_type":"jsonb"}}`,
		`{"name":"a","type":"long","metadata":{"pg_type":"something"}}`,
	}
	for _, f := range fields {
		js := `{"type":"struct","fields":[` + f + `]}`
		sc, err := schema.FromSparkJSON(js)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		oid, mod := schema.PGTypeOf(sc.Field(0))
		want := fmt.Sprintf("%d %d", oid, mod)
		got := query(t, c.su, `SELECT atttypid::text || ' ' || atttypmod FROM lakesoul_pg.schema_columns($1)`, js)
		if len(got) != 1 || got[0][0] != want {
			t.Errorf("%s: SQL says %v, schema.PGTypeOf says %s", f, got, want)
		}
	}
	// Malformed schemas have no columns instead of failing every query.
	for _, js := range []string{`not json`, `{"type":"struct"}`, `{"fields":{}}`, ``} {
		if got := query(t, c.su, `SELECT count(*)::text FROM lakesoul_pg.schema_columns($1)`, js); got[0][0] != "0" {
			t.Errorf("schema_columns(%q) has %s columns", js, got[0][0])
		}
	}
}
