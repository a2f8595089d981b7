package pgcatalog

import (
	"fmt"
	"strings"
	"testing"
)

// TestMatchesRealTable compares what the emulation says of lake table s.t
// with what PostgreSQL says of a real table rs.t declared with the same types
// and primary key.
func TestMatchesRealTable(t *testing.T) {
	c := newCatalogDB(t)
	exec(t, c.su, `CREATE SCHEMA rs; CREATE TABLE rs.t (id bigint PRIMARY KEY, d date, name text,
		amount numeric(10,2), score double precision, v varchar(20), uid uuid, ts timestamptz,
		tsn timestamp, b bytea, f real, i integer, sm smallint, "by" smallint, ok boolean, j json)`)
	lake, real := c.oids["s.t"], query(t, c.su, `SELECT 'rs.t'::regclass::oid::text`)[0][0]
	realIdx := query(t, c.su, `SELECT 'rs.t_pkey'::regclass::oid::text`)[0][0]
	lakeNsp := query(t, c.su, `SELECT oid::text FROM lakesoul_pg.pg_namespace WHERE nspname = 's'`)[0][0]
	realNsp := query(t, c.su, `SELECT 'rs'::regnamespace::oid::text`)[0][0]
	for _, tc := range []struct {
		what, sql  string
		lake, real []any
	}{
		{"pg_attribute", `SELECT attname, atttypid, attstattarget, attlen, attnum, attndims, attcacheoff,
			atttypmod, attbyval, attalign, attstorage, attnotnull, atthasdef, atthasmissing, attidentity,
			attgenerated, attisdropped, attislocal, attinhcount, attcollation, attacl, attoptions
			FROM %s.pg_attribute WHERE attrelid = $1 AND attnum > 0 ORDER BY attnum`,
			[]any{lake}, []any{real}},
		{"pg_class", `SELECT relname, relkind, relnatts, relhasindex, relpersistence, relreplident, relchecks,
			relhasrules, relhastriggers, relrowsecurity, relispartition, reloftype, reloptions
			FROM %s.pg_class WHERE oid = $1`, []any{lake}, []any{real}},
		{"pg_index", `SELECT indnatts, indnkeyatts, indisunique, indnullsnotdistinct, indisprimary,
			indisexclusion, indimmediate, indisclustered, indisvalid, indcheckxmin, indisready, indislive,
			indisreplident, indkey, indcollation, indclass, indoption, indexprs, indpred,
			c.relname, c.relkind, c.relam, c.relnatts
			FROM %[1]s.pg_index i JOIN %[1]s.pg_class c ON c.oid = i.indexrelid WHERE indrelid = $1`,
			[]any{lake}, []any{real}},
		{"index pg_attribute", `SELECT attname, atttypid, attnum, atttypmod, attnotnull
			FROM %s.pg_attribute WHERE attrelid = $1 ORDER BY attnum`,
			[]any{c.oids["s.t_pkey"]}, []any{realIdx}},
		{"pg_constraint", `SELECT conname, contype, condeferrable, condeferred, convalidated, contypid,
			conindid = (SELECT indexrelid FROM %[1]s.pg_index WHERE indrelid = $1), conparentid, confrelid,
			confupdtype, confdeltype, confmatchtype, conislocal, coninhcount, connoinherit, conkey,
			confkey, conpfeqop, conppeqop, conffeqop, confdelsetcols, conexclop, conbin
			FROM %[1]s.pg_constraint WHERE conrelid = $1`, []any{lake}, []any{real}},
		{"pg_get_*def", `SELECT replace(%[1]s.pg_get_indexdef(i.indexrelid), $2, 'X'),
			%[1]s.pg_get_indexdef(i.indexrelid, 1, true),
			%[1]s.pg_get_indexdef(i.indexrelid, 0, true) = %[1]s.pg_get_indexdef(i.indexrelid),
			%[1]s.pg_get_constraintdef(k.oid), %[1]s.pg_get_constraintdef(k.oid, true)
			FROM %[1]s.pg_index i JOIN %[1]s.pg_constraint k ON k.conindid = i.indexrelid
			WHERE i.indrelid = $1`, []any{lake, "s.t"}, []any{real, "rs.t"}},
		{"pg_tables", `SELECT tablename, tableowner, tablespace, hasindexes, hasrules, hastriggers, rowsecurity
			FROM %s.pg_tables WHERE schemaname = $1 AND tablename = 't'`, []any{"s"}, []any{"rs"}},
		{"pg_indexes", `SELECT tablename, indexname, tablespace, replace(indexdef, $1, 'X')
			FROM %s.pg_indexes WHERE schemaname = $2 AND tablename = 't'`,
			[]any{"s.t", "s"}, []any{"rs.t", "rs"}},
		{"information_schema.columns", `SELECT table_name, column_name, ordinal_position, column_default,
			is_nullable, data_type, character_maximum_length, character_octet_length, numeric_precision,
			numeric_precision_radix, numeric_scale, datetime_precision, interval_type, interval_precision,
			character_set_catalog, character_set_schema, character_set_name, collation_catalog,
			collation_schema, collation_name, domain_catalog, domain_schema, domain_name, udt_catalog,
			udt_schema, udt_name, scope_catalog, scope_schema, scope_name, maximum_cardinality,
			dtd_identifier, is_self_referencing, is_identity, identity_generation, identity_start,
			identity_increment, identity_maximum, identity_minimum, identity_cycle, is_generated,
			generation_expression, is_updatable
			FROM %s WHERE table_schema = $1 AND table_name = 't' ORDER BY ordinal_position`,
			[]any{"s"}, []any{"rs"}},
		{"information_schema.tables", `SELECT table_catalog, table_name, table_type,
			self_referencing_column_name, reference_generation, user_defined_type_catalog,
			user_defined_type_schema, user_defined_type_name, is_insertable_into, is_typed, commit_action
			FROM %s WHERE table_schema = $1 AND table_name = 't'`, []any{"s"}, []any{"rs"}},
		{"information_schema.table_constraints", `SELECT constraint_catalog,
			replace(replace(constraint_name, $2, 'R'), $3, 'N'), table_catalog, table_name, constraint_type,
			is_deferrable, initially_deferred, enforced, nulls_distinct
			FROM %s WHERE table_schema = $1 AND table_name = 't' ORDER BY 2`,
			[]any{"s", lake, lakeNsp}, []any{"rs", real, realNsp}},
		{"information_schema.key_column_usage", `SELECT constraint_catalog, constraint_name, table_catalog,
			table_name, column_name, ordinal_position, position_in_unique_constraint
			FROM %s WHERE table_schema = $1`, []any{"s"}, []any{"rs"}},
	} {
		lakeSQL, realSQL := fmt.Sprintf(tc.sql, EmulationSchema), fmt.Sprintf(tc.sql, "pg_catalog")
		if view, ok := strings.CutPrefix(tc.what, "information_schema."); ok {
			lakeSQL, realSQL = fmt.Sprintf(tc.sql, EmulationSchema+".info_"+view), fmt.Sprintf(tc.sql, tc.what)
		}
		got, want := query(t, c.su, lakeSQL, tc.lake...), query(t, c.su, realSQL, tc.real...)
		if len(want) == 0 {
			t.Errorf("%s: the real table has no rows; the comparison proves nothing", tc.what)
		}
		wantRows(t, tc.what, got, want)
	}
}
