package pgcatalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lakesoul-go/lakesoul/schema"
)

// TestTypeMapping checks the SQL type mapping against schema.PGTypeOf, which
// decides the types the wire reports for the same columns, for both forms of
// table_schema: each Spark field as LakeSoul's older writers stored it, and
// the same column in Arrow Java's form (schema.FormatTableSchema, what this
// server and LakeSoul's current engines write).
func TestTypeMapping(t *testing.T) {
	c := newCatalogDB(t)
	fields := []string{
		`{"name":"a","nullable":true,"type":"long"}`, `{"name":"a","nullable":true,"type":"integer"}`, `{"name":"a","nullable":true,"type":"short"}`,
		`{"name":"a","nullable":true,"type":"byte"}`, `{"name":"a","nullable":true,"type":"double"}`, `{"name":"a","nullable":true,"type":"float"}`,
		`{"name":"a","nullable":true,"type":"boolean"}`, `{"name":"a","nullable":true,"type":"string"}`, `{"name":"a","nullable":true,"type":"binary"}`,
		`{"name":"a","nullable":true,"type":"date"}`, `{"name":"a","nullable":true,"type":"timestamp"}`, `{"name":"a","nullable":true,"type":"timestamp_ntz"}`,
		`{"name":"a","nullable":true,"type":"decimal(10,2)"}`, `{"name":"a","nullable":true,"type":"decimal(38, 0)"}`,
		`{"name":"a","nullable":true,"type":"decimal(1,1)"}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"varchar(20)"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"varchar"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"bpchar(3)"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"uuid"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"json"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"jsonb"}}`,
		`{"name":"a","nullable":true,"type":"long","metadata":{"pg_type":"something"}}`,
		`{"name":"a","nullable":true,"type":{"type":"array","elementType":"long","containsNull":true}}`,
		`{"name":"a","nullable":true,"type":{"type":"array","elementType":"string","containsNull":true}}`,
		`{"name":"a","nullable":true,"type":{"type":"array","elementType":"boolean","containsNull":true}}`,
		`{"name":"a","nullable":true,"type":{"type":"array","elementType":"float","containsNull":false},"metadata":{"pg_type":"vector(3)"}}`,
		`{"name":"a","nullable":true,"type":"string","metadata":{"pg_type":"varchar(20)","pg_default":"'x'::text"}}`,
	}
	for _, f := range fields {
		js := `{"type":"struct","fields":[` + f + `]}`
		sc, err := schema.ParseTableSchema(js)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		oid, mod := schema.PGTypeOf(sc.Field(0))
		want := fmt.Sprintf("%d %d %v", oid, mod, sc.Field(0).Nullable)
		if schema.IsArray(sc.Field(0)) || schema.VectorDims(sc.Field(0)) > 0 {
			// The emulated catalog shows array and vector columns as text
			// (the wire types them); both forms must show them alike.
			want = query(t, c.su, `SELECT atttypid::text || ' ' || atttypmod || ' ' || nullable FROM lakesoul_pg.schema_columns($1)`, js)[0][0]
		}
		arrowJava, err := schema.FormatTableSchema(sc)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := schema.ParseTableSchema(arrowJava)
		if err != nil || !back.Equal(sc) || !back.Field(0).Metadata.Equal(sc.Field(0).Metadata) {
			t.Errorf("%s: Arrow Java form %s reads back as %v (%v), want %v", f, arrowJava, back, err, sc)
		}
		for _, js := range []string{js, arrowJava} {
			got := query(t, c.su, `SELECT atttypid::text || ' ' || atttypmod || ' ' || nullable FROM lakesoul_pg.schema_columns($1)`, js)
			if len(got) != 1 || got[0][0] != want {
				t.Errorf("%s: SQL says %v, schema.PGTypeOf says %s", js, got, want)
			}
			// The metadata the catalog views read (defaults, identities,
			// enum types) is the same in both forms.
			md := query(t, c.su, `SELECT coalesce(lakesoul_pg.schema_fields($1) -> 0 -> 'metadata', '{}')::text`, js)
			wantMD := query(t, c.su, `SELECT coalesce(($1::jsonb -> 'fields' -> 0 -> 'metadata'), '{}')::text`,
				`{"type":"struct","fields":[`+f+`]}`)
			if md[0][0] != wantMD[0][0] {
				t.Errorf("%s: metadata %s, want %s", js, md[0][0], wantMD[0][0])
			}
		}
	}
	// A column of a type the server does not store reads as text in the
	// catalog and is refused by the server, naming the column.
	for _, f := range []string{
		`{"name":"u","nullable":true,"type":{"name":"int","bitWidth":64,"isSigned":false},"children":[]}`,
		`{"name":"u","nullable":true,"type":{"name":"time","bitWidth":64,"unit":"MICROSECOND"},"children":[]}`,
		`{"name":"u","nullable":true,"type":{"name":"timestamp","unit":"NANOSECOND","timezone":null},"children":[]}`,
		`{"name":"u","nullable":true,"type":{"name":"struct"},"children":[{"name":"x","nullable":true,"type":{"name":"utf8"},"children":[]}]}`,
	} {
		js := `{"fields":[` + f + `]}`
		if _, err := schema.ParseTableSchema(js); err == nil || !strings.Contains(err.Error(), `column "u"`) {
			t.Errorf("%s: ParseTableSchema gave %v, want an error naming column u", js, err)
		}
		if got := query(t, c.su, `SELECT attname || ' ' || atttypid FROM lakesoul_pg.schema_columns($1)`, js); len(got) != 1 || got[0][0] != "u 25" {
			t.Errorf("%s: SQL says %v, want u as text", js, got)
		}
	}
	// Malformed schemas have no columns instead of failing every query.
	for _, js := range []string{`not json`, `{"type":"struct"}`, `{"fields":{}}`, ``, `{"fields":{"a":1}}`} {
		if got := query(t, c.su, `SELECT count(*)::text FROM lakesoul_pg.schema_columns($1)`, js); got[0][0] != "0" {
			t.Errorf("schema_columns(%q) has %s columns", js, got[0][0])
		}
	}
}
