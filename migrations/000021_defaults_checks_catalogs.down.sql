-- Back to the definitions of migrations 3, 16 and 19.
CREATE OR REPLACE VIEW lakesoul_pg.info_columns WITH (security_invoker = true) AS
SELECT c.* FROM information_schema.columns c
 WHERE c.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier AS table_catalog,
       a.nspname::information_schema.sql_identifier AS table_schema,
       a.relname::information_schema.sql_identifier AS table_name,
       a.attname::information_schema.sql_identifier AS column_name,
       a.attnum::information_schema.cardinal_number AS ordinal_position,
       NULL::information_schema.character_data AS column_default,
       (CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END)::information_schema.yes_or_no AS is_nullable,
       (CASE WHEN ty.typtype = 'e' THEN 'USER-DEFINED'
             WHEN ty.typelem <> 0 AND ty.typlen = -1 THEN 'ARRAY'
             ELSE pg_catalog.format_type(a.atttypid, NULL) END)::information_schema.character_data,
       information_schema._pg_char_max_length(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_char_octet_length(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_numeric_precision(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_numeric_precision_radix(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_numeric_scale(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_datetime_precision(a.atttypid, a.atttypmod)::information_schema.cardinal_number,
       information_schema._pg_interval_type(a.atttypid, a.atttypmod)::information_schema.character_data,
       NULL::information_schema.cardinal_number AS interval_precision,
       NULL::information_schema.sql_identifier AS character_set_catalog,
       NULL::information_schema.sql_identifier AS character_set_schema,
       NULL::information_schema.sql_identifier AS character_set_name,
       NULL::information_schema.sql_identifier AS collation_catalog,
       NULL::information_schema.sql_identifier AS collation_schema,
       NULL::information_schema.sql_identifier AS collation_name,
       NULL::information_schema.sql_identifier AS domain_catalog,
       NULL::information_schema.sql_identifier AS domain_schema,
       NULL::information_schema.sql_identifier AS domain_name,
       pg_catalog.current_database()::information_schema.sql_identifier AS udt_catalog,
       tn.nspname::information_schema.sql_identifier AS udt_schema,
       ty.typname::information_schema.sql_identifier AS udt_name,
       NULL::information_schema.sql_identifier AS scope_catalog,
       NULL::information_schema.sql_identifier AS scope_schema,
       NULL::information_schema.sql_identifier AS scope_name,
       NULL::information_schema.cardinal_number AS maximum_cardinality,
       a.attnum::information_schema.sql_identifier AS dtd_identifier,
       'NO'::information_schema.yes_or_no AS is_self_referencing,
       'NO'::information_schema.yes_or_no AS is_identity,
       NULL::information_schema.character_data AS identity_generation,
       NULL::information_schema.character_data AS identity_start,
       NULL::information_schema.character_data AS identity_increment,
       NULL::information_schema.character_data AS identity_maximum,
       NULL::information_schema.character_data AS identity_minimum,
       'NO'::information_schema.yes_or_no AS identity_cycle,
       'NEVER'::information_schema.character_data AS is_generated,
       NULL::information_schema.character_data AS generation_expression,
       'YES'::information_schema.yes_or_no AS is_updatable
  FROM lakesoul_pg.lake_column a
  JOIN lakesoul_pg.pg_type ty ON ty.oid = a.atttypid
  JOIN lakesoul_pg.pg_namespace tn ON tn.oid = ty.typnamespace;

CREATE OR REPLACE VIEW lakesoul_pg.pg_attribute WITH (security_invoker = true) AS
SELECT a.attrelid, a.attname, a.atttypid, a.attstattarget, a.attlen, a.attnum, a.attndims,
       a.attcacheoff, a.atttypmod, a.attbyval, a.attalign, a.attstorage, a.attcompression,
       a.attnotnull, a.atthasdef, a.atthasmissing, a.attidentity, a.attgenerated,
       a.attisdropped, a.attislocal, a.attinhcount, a.attcollation, a.attacl, a.attoptions,
       a.attfdwoptions, a.attmissingval::text AS attmissingval
  FROM pg_catalog.pg_attribute a
 WHERE a.attrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                       WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                 WHERE nspname IN ('pg_catalog', 'information_schema')))
UNION ALL
SELECT l.attrelid, l.attname, l.atttypid, -1 AS attstattarget, ty.typlen AS attlen, l.attnum,
       0 AS attndims, -1 AS attcacheoff, l.atttypmod, ty.typbyval AS attbyval,
       ty.typalign AS attalign, ty.typstorage AS attstorage, ''::"char" AS attcompression,
       l.attnotnull, false AS atthasdef, false AS atthasmissing, ''::"char" AS attidentity,
       ''::"char" AS attgenerated, false AS attisdropped, true AS attislocal, 0 AS attinhcount,
       ty.typcollation AS attcollation, NULL::aclitem[] AS attacl, NULL::text[] AS attoptions,
       NULL::text[] AS attfdwoptions, NULL::text AS attmissingval
  FROM (SELECT c.attrelid, c.attname, c.atttypid, c.attnum, c.atttypmod, c.attnotnull
          FROM lakesoul_pg.lake_column c
        UNION ALL
        SELECT i.indexrelid, c.attname, c.atttypid, k.n::int2, c.atttypmod, false
          FROM lakesoul_pg.lake_all_index i
         CROSS JOIN LATERAL unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
         CROSS JOIN LATERAL lakesoul_pg.schema_columns(i.table_schema) c
         WHERE c.attnum = k.attnum) l
  JOIN lakesoul_pg.pg_type ty ON ty.oid = l.atttypid;

CREATE OR REPLACE VIEW lakesoul_pg.pg_class WITH (security_invoker = true) AS
SELECT c.* FROM pg_catalog.pg_class c
 WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT r.oid, r.relname, r.relnamespace,
       0::oid AS reltype, 0::oid AS reloftype, lakesoul_pg.lake_owner() AS relowner,
       r.relam, 0::oid AS relfilenode, 0::oid AS reltablespace,
       0 AS relpages, -1::real AS reltuples, 0 AS relallvisible, 0::oid AS reltoastrelid,
       r.relhasindex, false AS relisshared, 'p'::"char" AS relpersistence, r.relkind,
       r.relnatts, 0::int2 AS relchecks, r.relkind = 'v' AS relhasrules, false AS relhastriggers,
       false AS relhassubclass, false AS relrowsecurity, false AS relforcerowsecurity,
       true AS relispopulated, r.relreplident, false AS relispartition, 0::oid AS relrewrite,
       '0'::xid AS relfrozenxid, '0'::xid AS relminmxid,
       NULL::aclitem[] AS relacl, NULL::text[] AS reloptions, NULL::pg_node_tree AS relpartbound
  FROM (SELECT t.oid, t.relname, t.relnamespace, 0::oid AS relam,
               (cardinality(t.pkattnums) > 0
                OR EXISTS (SELECT 1 FROM lakesoul.column_index ci WHERE ci.table_id = t.table_id)) AS relhasindex,
               'r'::"char" AS relkind,
               t.relnatts, 'd'::"char" AS relreplident
          FROM lakesoul_pg.lake_table t
        UNION ALL
        SELECT i.indexrelid, i.relname, i.relnamespace, 403::oid, false, 'i'::"char",
               cardinality(i.pkattnums)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_all_index i
        UNION ALL
        SELECT v.oid, v.relname, v.relnamespace, 0::oid, false, 'v'::"char",
               cardinality(v.columns)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_view v) r;

CREATE OR REPLACE VIEW lakesoul_pg.pg_constraint WITH (security_invoker = true) AS
SELECT c.* FROM pg_catalog.pg_constraint c
 WHERE c.connamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT i.indexrelid AS oid, i.relname AS conname, i.relnamespace AS connamespace,
       'p'::"char" AS contype, false AS condeferrable, false AS condeferred,
       true AS convalidated, i.indrelid AS conrelid, 0::oid AS contypid,
       i.indexrelid AS conindid, 0::oid AS conparentid, 0::oid AS confrelid,
       ' '::"char" AS confupdtype, ' '::"char" AS confdeltype, ' '::"char" AS confmatchtype,
       true AS conislocal, 0 AS coninhcount, true AS connoinherit, i.pkattnums AS conkey,
       NULL::int2[] AS confkey, NULL::oid[] AS conpfeqop, NULL::oid[] AS conppeqop,
       NULL::oid[] AS conffeqop, NULL::int2[] AS confdelsetcols, NULL::oid[] AS conexclop,
       NULL::pg_node_tree AS conbin
  FROM lakesoul_pg.lake_index i;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_constraintdef(p_oid oid, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
BEGIN
    SELECT * INTO r FROM lakesoul_pg.lake_relation(p_oid);
    IF NOT FOUND OR NOT r.is_index THEN
        RETURN pg_catalog.pg_get_constraintdef(p_oid, p_pretty);
    END IF;
    RETURN format('PRIMARY KEY (%s)', (SELECT string_agg(quote_ident(k), ', ') FROM unnest(r.keycols) k));
END
$$;

DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_expr(text, oid);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_expr(text, oid, boolean);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_expr(pg_node_tree, oid);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_expr(pg_node_tree, oid, boolean);
DROP VIEW IF EXISTS lakesoul_pg.pg_attrdef;
CREATE VIEW lakesoul_pg.pg_attrdef WITH (security_invoker = true) AS
SELECT d.* FROM pg_catalog.pg_attrdef d
 WHERE d.adrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                      WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                WHERE nspname IN ('pg_catalog', 'information_schema')));
GRANT SELECT ON lakesoul_pg.pg_attrdef TO PUBLIC;
DROP VIEW IF EXISTS lakesoul_pg.pg_depend;
DROP VIEW IF EXISTS lakesoul_pg.pg_sequence;
DROP VIEW IF EXISTS lakesoul_pg.lake_check;
DROP VIEW IF EXISTS lakesoul_pg.lake_attrdef;
DROP VIEW IF EXISTS lakesoul_pg.lake_sequence_owner;
DROP VIEW IF EXISTS lakesoul_pg.lake_identity;
DROP VIEW IF EXISTS lakesoul_pg.lake_sequence;
REVOKE UPDATE (owner_table) ON lakesoul.sequence FROM base_super_admin_role, base_admin_role, base_user_role;
REVOKE SELECT ON lakesoul.sequence FROM PUBLIC;
