-- Column indexes (CREATE [UNIQUE] INDEX … [USING btree] (col, …)) on lake
-- tables. An index names columns whose data files carry a Parquet bloom
-- filter per row group (besides the statistics and page index every column
-- has): writers and compaction add the filters from the moment the index
-- exists, and reads skip files and row groups by them. A UNIQUE index is
-- allowed only on the primary key, which is unique already.
CREATE TABLE lakesoul.column_index (
    index_name  text        NOT NULL,
    table_id    text        NOT NULL REFERENCES public.table_info (table_id) ON DELETE CASCADE,
    columns     text[]      NOT NULL CHECK (cardinality(columns) > 0),
    is_unique   boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, index_name)
);

-- Visible, and changeable, for roles that see the table (RLS on table_info).
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.column_index
    TO base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.column_index ENABLE ROW LEVEL SECURITY;
CREATE POLICY column_index_visible ON lakesoul.column_index FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = column_index.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = column_index.table_id));

-- The catalog emulation shows column indexes as PostgreSQL shows indexes
-- (psql \di, \d, pg_indexes): relations of kind 'i' with OIDs 2^31 + n
-- (n from column_index.oid_seq, below 10^9: the range between the virtual
-- primary-key indexes, 2^31 + table OID, and nothing).
CREATE SEQUENCE lakesoul.column_index_oid_seq MINVALUE 1 MAXVALUE 999999999;
GRANT USAGE ON SEQUENCE lakesoul.column_index_oid_seq TO base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.column_index ADD COLUMN oid8 bigint NOT NULL UNIQUE
    DEFAULT 2147483648 + nextval('lakesoul.column_index_oid_seq');

-- Every index of a lake table: the virtual primary-key index (lake_index)
-- and the column indexes, with lake_index's columns.
CREATE OR REPLACE VIEW lakesoul_pg.lake_all_index WITH (security_invoker = true) AS
SELECT i.indexrelid, i.indrelid, i.relname, i.tablename, i.relnamespace, i.nspname, i.pkattnums,
       i.table_schema, true AS is_unique, true AS is_primary
  FROM lakesoul_pg.lake_index i
UNION ALL
SELECT ci.oid8::oid, t.oid, ci.index_name::name, t.relname, t.relnamespace, t.nspname,
       ARRAY(SELECT c.attnum FROM unnest(ci.columns) WITH ORDINALITY AS u(name, n)
               JOIN lakesoul_pg.schema_columns(t.table_schema) c ON c.attname = u.name
              ORDER BY u.n)::int2[],
       t.table_schema, ci.is_unique, false
  FROM lakesoul.column_index ci
  JOIN lakesoul_pg.lake_table t ON t.table_id = ci.table_id;
GRANT SELECT ON lakesoul_pg.lake_all_index TO PUBLIC;
GRANT SELECT ON lakesoul.column_index TO PUBLIC; -- read by the views above; RLS keeps the rows

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
  JOIN pg_catalog.pg_type ty ON ty.oid = l.atttypid;

CREATE OR REPLACE VIEW lakesoul_pg.pg_index WITH (security_invoker = true) AS
SELECT i.* FROM pg_catalog.pg_index i
 WHERE i.indrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                       WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                 WHERE nspname IN ('pg_catalog', 'information_schema')))
UNION ALL
SELECT i.indexrelid, i.indrelid, cardinality(i.pkattnums)::int2, cardinality(i.pkattnums)::int2,
       i.is_unique AS indisunique, false AS indnullsnotdistinct, i.is_primary AS indisprimary,
       false AS indisexclusion, true AS indimmediate, false AS indisclustered,
       true AS indisvalid, false AS indcheckxmin, true AS indisready, true AS indislive,
       false AS indisreplident,
       array_to_string(i.pkattnums, ' ')::int2vector AS indkey,
       k.collations::oidvector AS indcollation, k.classes::oidvector AS indclass,
       array_to_string(array_fill(0, ARRAY[cardinality(i.pkattnums)]), ' ')::int2vector AS indoption,
       NULL::pg_node_tree AS indexprs, NULL::pg_node_tree AS indpred
  FROM lakesoul_pg.lake_all_index i
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
  FROM lakesoul_pg.lake_all_index l;

-- pg_get_indexdef of a column index; other OIDs as before.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_indexdef(p_oid oid, p_column int4, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
    ci record;
BEGIN
    SELECT i.relname, i.nspname, i.tablename, i.is_unique, ARRAY(SELECT c.attname FROM unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
                                  JOIN lakesoul_pg.schema_columns(i.table_schema) c ON c.attnum = k.attnum ORDER BY k.n) AS cols
      INTO ci FROM lakesoul_pg.lake_all_index i WHERE i.indexrelid = p_oid AND NOT i.is_primary;
    IF FOUND THEN
        IF p_column = 0 THEN
            RETURN format('CREATE %sINDEX %I ON %I.%I USING btree (%s)', CASE WHEN ci.is_unique THEN 'UNIQUE ' ELSE '' END,
                          ci.relname, ci.nspname, ci.tablename, (SELECT string_agg(quote_ident(k), ', ') FROM unnest(ci.cols) k));
        END IF;
        RETURN quote_ident(ci.cols[p_column]);
    END IF;
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

-- Comments on lake tables and their columns (COMMENT ON, engine/comment.go)
-- are the table properties "comment" and "comment.<column>".
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
  FROM lakesoul_pg.lake_namespace n
 WHERE n.comment <> ''
UNION ALL
SELECT t.oid, 'pg_catalog.pg_class'::regclass::oid, 0, ti.properties->>'comment'
  FROM lakesoul_pg.lake_table t
  JOIN public.table_info ti ON ti.table_id = t.table_id
 WHERE ti.properties->>'comment' IS NOT NULL
UNION ALL
SELECT t.oid, 'pg_catalog.pg_class'::regclass::oid, c.attnum, ti.properties->>('comment.' || c.attname)
  FROM lakesoul_pg.lake_table t
  JOIN public.table_info ti ON ti.table_id = t.table_id
 CROSS JOIN LATERAL lakesoul_pg.schema_columns(t.table_schema) c
 WHERE ti.properties->>('comment.' || c.attname) IS NOT NULL;
