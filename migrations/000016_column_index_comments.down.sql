-- Previous definitions (migrations 3 and 14), then the index objects.
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
               cardinality(t.pkattnums) > 0 AS relhasindex, 'r'::"char" AS relkind,
               t.relnatts, 'd'::"char" AS relreplident
          FROM lakesoul_pg.lake_table t
        UNION ALL
        SELECT i.indexrelid, i.relname, i.relnamespace, 403::oid, false, 'i'::"char",
               cardinality(i.pkattnums)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_index i
        UNION ALL
        SELECT v.oid, v.relname, v.relnamespace, 0::oid, false, 'v'::"char",
               cardinality(v.columns)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_view v) r;

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
          FROM lakesoul_pg.lake_index i
         CROSS JOIN LATERAL unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
         CROSS JOIN LATERAL lakesoul_pg.schema_columns(i.table_schema) c
         WHERE c.attnum = k.attnum) l
  JOIN pg_catalog.pg_type ty ON ty.oid = l.atttypid;

CREATE OR REPLACE VIEW lakesoul_pg.pg_index WITH (security_invoker = true) AS
SELECT i.* FROM pg_catalog.pg_index i
 WHERE i.indrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                       WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                 WHERE nspname IN ('pg_catalog', 'information_schema')))
UNION ALL
SELECT i.indexrelid, i.indrelid, cardinality(i.pkattnums)::int2, cardinality(i.pkattnums)::int2,
       true AS indisunique, false AS indnullsnotdistinct, true AS indisprimary,
       false AS indisexclusion, true AS indimmediate, false AS indisclustered,
       true AS indisvalid, false AS indcheckxmin, true AS indisready, true AS indislive,
       false AS indisreplident,
       array_to_string(i.pkattnums, ' ')::int2vector AS indkey,
       k.collations::oidvector AS indcollation, k.classes::oidvector AS indclass,
       array_to_string(array_fill(0, ARRAY[cardinality(i.pkattnums)]), ' ')::int2vector AS indoption,
       NULL::pg_node_tree AS indexprs, NULL::pg_node_tree AS indpred
  FROM lakesoul_pg.lake_index i
 CROSS JOIN LATERAL (
        SELECT string_agg(coalesce(ty.typcollation, 0)::text, ' ' ORDER BY k.n) AS collations,
               string_agg(coalesce(oc.oid, 0)::text, ' ' ORDER BY k.n) AS classes
          FROM unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
          JOIN lakesoul_pg.schema_columns(i.table_schema) c ON c.attnum = k.attnum
          LEFT JOIN pg_catalog.pg_type ty ON ty.oid = c.atttypid
          LEFT JOIN pg_catalog.pg_opclass oc
                 ON oc.opcmethod = 403 AND oc.opcdefault AND oc.opcintype = c.atttypid) k;

CREATE OR REPLACE VIEW lakesoul_pg.pg_indexes WITH (security_invoker = true) AS
SELECT i.* FROM pg_catalog.pg_indexes i
 WHERE i.schemaname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT l.nspname, l.tablename, l.relname, NULL::name, lakesoul_pg.pg_get_indexdef(l.indexrelid)
  FROM lakesoul_pg.lake_index l;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_indexdef(p_oid oid, p_column int4, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
BEGIN
    SELECT * INTO r FROM lakesoul_pg.lake_relation(p_oid);
    IF NOT FOUND OR NOT r.is_index THEN
        RETURN pg_catalog.pg_get_indexdef(p_oid, p_column, p_pretty);
    ELSIF p_column = 0 THEN
        RETURN format('CREATE UNIQUE INDEX %I ON %I.%I USING btree (%s)', r.relname, r.nspname,
                      r.tablename, (SELECT string_agg(quote_ident(k), ', ') FROM unnest(r.keycols) k));
    END IF;
    RETURN quote_ident(r.keycols[p_column]);
END
$$;

CREATE OR REPLACE VIEW lakesoul_pg.pg_description WITH (security_invoker = true) AS
SELECT d.* FROM pg_catalog.pg_description d
 WHERE d.classoid NOT IN ('pg_catalog.pg_class'::regclass, 'pg_catalog.pg_namespace'::regclass,
                          'pg_catalog.pg_proc'::regclass, 'pg_catalog.pg_type'::regclass,
                          'pg_catalog.pg_constraint'::regclass)
UNION ALL
SELECT d.* FROM pg_catalog.pg_description d
  JOIN pg_catalog.pg_class c ON c.oid = d.objoid
 WHERE d.classoid = 'pg_catalog.pg_class'::regclass
   AND c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT d.* FROM pg_catalog.pg_description d
  JOIN pg_catalog.pg_namespace n ON n.oid = d.objoid
 WHERE d.classoid = 'pg_catalog.pg_namespace'::regclass
   AND n.nspname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT d.* FROM pg_catalog.pg_description d
  JOIN pg_catalog.pg_proc p ON p.oid = d.objoid
 WHERE d.classoid = 'pg_catalog.pg_proc'::regclass
   AND p.pronamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT d.* FROM pg_catalog.pg_description d
  JOIN pg_catalog.pg_type t ON t.oid = d.objoid
 WHERE d.classoid = 'pg_catalog.pg_type'::regclass
   AND t.typnamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT d.* FROM pg_catalog.pg_description d
  JOIN pg_catalog.pg_constraint c ON c.oid = d.objoid
 WHERE d.classoid = 'pg_catalog.pg_constraint'::regclass
   AND c.connamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT n.oid, 'pg_catalog.pg_namespace'::regclass::oid, 0, n.comment
  FROM lakesoul_pg.lake_namespace n;

DROP VIEW IF EXISTS lakesoul_pg.lake_all_index;
DROP TABLE IF EXISTS lakesoul.column_index;
DROP SEQUENCE IF EXISTS lakesoul.column_index_oid_seq;
