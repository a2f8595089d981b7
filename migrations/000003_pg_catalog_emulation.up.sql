-- pg_catalog / information_schema emulation for pgwire clients (package pgcatalog).
--
-- Lake tables are rows of public.table_info, not PostgreSQL relations. Catalog
-- queries from clients (psql \d, pgjdbc DatabaseMetaData) run on this database
-- after pgcatalog.Rewrite has pointed their catalog relations at the views of
-- schema "lakesoul_pg" and a few OID-taking functions at the functions below.
--
-- Invariants:
--   * every emulation view has exactly the columns (names, order, types) of the
--     object it stands for in PostgreSQL 15 (one exception: pg_attribute's
--     attmissingval is text, a view cannot have an anyarray column);
--   * real rows are kept only for namespaces pg_catalog and information_schema
--     and the objects in them; everything else of this database (LakeSoul's
--     tables in public, schemas lakesoul and lakesoul_pg) is hidden;
--   * lake namespaces and tables appear with the OIDs of lakesoul.namespace_oid
--     and lakesoul.table_oid; one without an OID row does not appear;
--   * a lake table with a primary key has a virtual PK index and constraint,
--     both with OID table oid + 2^31 (table OIDs are < 2^31, see
--     lakesoul.object_oid_seq) and named <table>_pkey;
--   * column types agree with schema.PGTypeOf (what the wire reports);
--   * every view is security_invoker, so the invoking role's privileges and the
--     row-level security of LakeSoul's tables apply; the helper functions are
--     SECURITY INVOKER too.
-- Views named lake_* and functions not named after a pg_catalog function are
-- helpers: pgcatalog never points a client query at them.

CREATE SCHEMA IF NOT EXISTS lakesoul_pg;

-- Namespaces and tables created before this migration (or by LakeSoul's own
-- clients before it) get their OIDs now.
INSERT INTO lakesoul.namespace_oid (namespace)
SELECT namespace FROM public.namespace ORDER BY namespace
ON CONFLICT DO NOTHING;
INSERT INTO lakesoul.table_oid (table_id)
SELECT table_id FROM public.table_info ORDER BY table_id
ON CONFLICT DO NOTHING;

------------------------------------------------------------------------------
-- Helper functions: the lake metadata → PostgreSQL catalog mapping, defined once.
------------------------------------------------------------------------------

-- spark_pg_typid and spark_pg_typmod map a Spark type name (and the field's
-- optional "pg_type" metadata, the PostgreSQL type the column was declared
-- with) to the type OID and typmod of the column. They must agree with
-- schema.PGTypeOf: pg_type wins for varchar(n), bpchar(n), uuid, json and
-- jsonb; an unknown type is text. (Single expressions, so PostgreSQL inlines
-- them.)
CREATE OR REPLACE FUNCTION lakesoul_pg.spark_pg_typid(p_spark_type text, p_pg_type text)
RETURNS oid LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE split_part(p_pg_type, '(', 1)
             WHEN 'varchar' THEN 1043
             WHEN 'bpchar'  THEN 1042
             WHEN 'uuid'    THEN 2950
             WHEN 'json'    THEN 114
             WHEN 'jsonb'   THEN 3802
             ELSE CASE
               WHEN p_spark_type = 'long'             THEN 20
               WHEN p_spark_type = 'integer'          THEN 23
               WHEN p_spark_type IN ('short', 'byte') THEN 21
               WHEN p_spark_type = 'double'           THEN 701
               WHEN p_spark_type = 'float'            THEN 700
               WHEN p_spark_type = 'boolean'          THEN 16
               WHEN p_spark_type = 'string'           THEN 25
               WHEN p_spark_type = 'binary'           THEN 17
               WHEN p_spark_type = 'date'             THEN 1082
               WHEN p_spark_type = 'timestamp'        THEN 1184
               WHEN p_spark_type = 'timestamp_ntz'    THEN 1114
               WHEN p_spark_type ~ '^decimal\(\d{1,4},\s*\d{1,4}\)$' THEN 1700
               ELSE 25
             END
           END::oid
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.spark_pg_typmod(p_spark_type text, p_pg_type text)
RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
             WHEN split_part(p_pg_type, '(', 1) IN ('varchar', 'bpchar') THEN
                  coalesce(substring(p_pg_type FROM '^[^(]+\(([+-]?\d{1,9})\)?$')::int4 + 4, -1)
             WHEN split_part(p_pg_type, '(', 1) IN ('uuid', 'json', 'jsonb') THEN -1
             WHEN p_spark_type ~ '^decimal\(\d{1,4},\s*\d{1,4}\)$' THEN
                  ((substring(p_spark_type FROM '^decimal\((\d+)')::int4 << 16)
                   | substring(p_spark_type FROM '(\d+)\)$')::int4) + 4
             ELSE -1
           END
$$;

-- primary_key_columns returns the primary-key columns of a table_info.partitions
-- value "<range cols>;<pk cols>" (comma-separated lists), in key order.
CREATE OR REPLACE FUNCTION lakesoul_pg.primary_key_columns(p_partitions text)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_remove(string_to_array(split_part(coalesce(p_partitions, ''), ';', 2), ','), ''),
                    '{}'::text[])
$$;

-- schema_fields returns the "fields" array of a Spark StructType JSON
-- (table_info.table_schema), or an empty array when the text is not such JSON,
-- so one malformed table cannot break every catalog query.
CREATE OR REPLACE FUNCTION lakesoul_pg.schema_fields(p_table_schema text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v jsonb;
BEGIN
    v := p_table_schema::jsonb -> 'fields';
    IF jsonb_typeof(v) = 'array' THEN
        RETURN v;
    END IF;
    RETURN '[]';
EXCEPTION WHEN invalid_text_representation THEN
    RETURN '[]';
END
$$;

-- schema_columns returns the columns of a table schema: attnum 1..n in field
-- order, name, type (see spark_pg_typid) and the field's "nullable" (default
-- true). A single SELECT, not strict, so PostgreSQL inlines it into the
-- calling query.
CREATE OR REPLACE FUNCTION lakesoul_pg.schema_columns(p_table_schema text)
RETURNS TABLE (attnum int2, attname name, atttypid oid, atttypmod int4, nullable boolean)
LANGUAGE sql IMMUTABLE AS $$
    SELECT f.n::int2, (f.field->>'name')::name,
           lakesoul_pg.spark_pg_typid(f.type, f.field->'metadata'->>'pg_type'),
           lakesoul_pg.spark_pg_typmod(f.type, f.field->'metadata'->>'pg_type'),
           coalesce((f.field->>'nullable')::boolean, true)
      FROM (SELECT e.field, e.n,
                   CASE jsonb_typeof(e.field->'type') WHEN 'string' THEN e.field->>'type' END AS type
              FROM jsonb_array_elements(lakesoul_pg.schema_fields(p_table_schema))
                   WITH ORDINALITY AS e(field, n)) f
$$;

-- column_count is the number of columns schema_columns returns. It and
-- pk_attnums run once per table in every pg_class scan, so they are an
-- inlined expression and plpgsql made of simple expressions only (a query
-- inside a per-row function costs a hundred times more).
CREATE OR REPLACE FUNCTION lakesoul_pg.column_count(p_table_schema text)
RETURNS int2 LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_array_length(lakesoul_pg.schema_fields(p_table_schema))::int2
$$;

-- pk_attnums returns the attnums of the key columns p_pk in a table schema,
-- in key order; key columns missing from the schema are skipped.
CREATE OR REPLACE FUNCTION lakesoul_pg.pk_attnums(p_table_schema text, p_pk text[])
RETURNS int2[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v   jsonb;
    k   text;
    res int2[] := '{}';
BEGIN
    IF coalesce(cardinality(p_pk), 0) = 0 THEN
        RETURN res;
    END IF;
    v := lakesoul_pg.schema_fields(p_table_schema);
    FOREACH k IN ARRAY p_pk LOOP
        FOR i IN 0 .. jsonb_array_length(v) - 1 LOOP
            IF v -> i ->> 'name' = k THEN
                res := res || (i + 1)::int2;
                EXIT;
            END IF;
        END LOOP;
    END LOOP;
    RETURN res;
END
$$;

-- lake_owner is the role shown as owner of every lake object: the owner of
-- this (catalog) database.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_owner()
RETURNS oid LANGUAGE sql STABLE AS $$
    SELECT datdba FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()
$$;

-- lake_search_path is the session's lake search path: the namespaces of the
-- comma list in setting lakesoul.search_path (spaces and double quotes around
-- names ignored), "default" when unset or empty.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_search_path()
RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(n ORDER BY i), '{default}'::text[])
      FROM unnest(string_to_array(coalesce(current_setting('lakesoul.search_path', true), ''), ','))
           WITH ORDINALITY AS p(raw, i),
           LATERAL (SELECT btrim(btrim(p.raw), '"') AS n) x
     WHERE n <> ''
$$;

------------------------------------------------------------------------------
-- Helper views: lake objects in catalog terms.
------------------------------------------------------------------------------

CREATE OR REPLACE VIEW lakesoul_pg.lake_namespace WITH (security_invoker = true) AS
SELECT o.oid::oid AS oid, n.namespace::name AS nspname, n.comment
  FROM public.namespace n
  JOIN lakesoul.namespace_oid o ON o.namespace = n.namespace;

-- lake_table: one row per lake table. oid8, table_namespace and table_name
-- are the raw columns, for filters that should use LakeSoul's indexes.
CREATE OR REPLACE VIEW lakesoul_pg.lake_table WITH (security_invoker = true) AS
SELECT o.oid::oid AS oid, t.table_name::name AS relname, no.oid::oid AS relnamespace,
       t.table_namespace::name AS nspname, t.table_id, t.table_schema,
       lakesoul_pg.column_count(t.table_schema) AS relnatts,
       lakesoul_pg.pk_attnums(t.table_schema, lakesoul_pg.primary_key_columns(t.partitions)) AS pkattnums,
       lakesoul_pg.primary_key_columns(t.partitions) AS pk,
       o.oid AS oid8, t.table_namespace, t.table_name
  FROM public.table_info t
  JOIN lakesoul.table_oid o ON o.table_id = t.table_id
  JOIN public.namespace n ON n.namespace = t.table_namespace
  JOIN lakesoul.namespace_oid no ON no.namespace = n.namespace;

-- One row per column of a lake table; attnotnull for key columns and fields
-- declared "nullable": false. (The key test is by name: t.pkattnums would parse
-- the schema again for every column.)
CREATE OR REPLACE VIEW lakesoul_pg.lake_column WITH (security_invoker = true) AS
SELECT t.oid AS attrelid, c.attnum, c.attname, c.atttypid, c.atttypmod,
       (c.attname = ANY (t.pk) OR NOT c.nullable) AS attnotnull,
       t.relnamespace, t.nspname, t.relname
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL lakesoul_pg.schema_columns(t.table_schema) c;

-- The virtual primary-key index (and constraint) of each lake table with a key.
CREATE OR REPLACE VIEW lakesoul_pg.lake_index WITH (security_invoker = true) AS
SELECT (t.oid::int8 + 2147483648)::oid AS indexrelid, t.oid AS indrelid,
       (t.relname || '_pkey')::name AS relname, t.relname AS tablename,
       t.relnamespace, t.nspname, t.pkattnums, t.table_schema
  FROM lakesoul_pg.lake_table t
 WHERE cardinality(t.pkattnums) > 0;

-- lake_relation finds the lake table or PK index with OID p_oid (no row when
-- p_oid is not a lake relation); keycols are the table's key columns in key
-- order. OIDs below 10^9 (the start of lakesoul.object_oid_seq) are never
-- looked up; others go through lakesoul.table_oid's unique index on oid.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_relation(p_oid oid)
RETURNS TABLE (table_id text, nspname name, relname name, is_index boolean,
               tablename name, keycols name[])
LANGUAGE plpgsql STABLE STRICT ROWS 1 AS $$
DECLARE
    v_oid int8 := p_oid::int8;
    t     record;
    a     int2;
BEGIN
    IF v_oid < 1000000000 THEN
        RETURN;
    END IF;
    is_index := v_oid >= 2147483648;
    IF is_index THEN
        v_oid := v_oid - 2147483648;
    END IF;
    SELECT l.table_id, l.nspname, l.relname, l.pkattnums, l.table_schema INTO t
      FROM lakesoul_pg.lake_table l WHERE l.oid8 = v_oid;
    IF NOT FOUND OR (is_index AND cardinality(t.pkattnums) = 0) THEN
        RETURN;
    END IF;
    table_id := t.table_id;
    nspname := t.nspname;
    tablename := t.relname;
    relname := CASE WHEN is_index THEN (t.relname || '_pkey')::name ELSE t.relname END;
    keycols := '{}';
    FOREACH a IN ARRAY t.pkattnums LOOP
        keycols := keycols || ((lakesoul_pg.schema_fields(t.table_schema) -> (a - 1) ->> 'name')::name);
    END LOOP;
    RETURN NEXT;
END
$$;

------------------------------------------------------------------------------
-- Replacements for built-in functions that take relation OIDs. pgcatalog.Rewrite
-- points calls of the pg_catalog functions here. Each handles lake OIDs and
-- otherwise returns what the built-in function returns.
------------------------------------------------------------------------------

-- pg_table_is_visible: a lake relation is visible when its namespace is the
-- first namespace of the lake search path holding a relation of its name.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_table_is_visible(p_oid oid)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
    n text;
BEGIN
    SELECT l.nspname, l.relname INTO r FROM lakesoul_pg.lake_relation(p_oid) l;
    IF NOT FOUND THEN
        RETURN pg_catalog.pg_table_is_visible(p_oid);
    END IF;
    FOREACH n IN ARRAY lakesoul_pg.lake_search_path() LOOP
        IF n = r.nspname THEN
            RETURN true;
        END IF;
        IF EXISTS (SELECT 1 FROM lakesoul_pg.lake_table t
                    WHERE t.table_namespace = n
                      AND t.table_name IN (r.relname::text, left(r.relname, -5))
                      AND (t.relname = r.relname
                           OR (t.relname || '_pkey' = r.relname AND cardinality(t.pkattnums) > 0))) THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- pg_get_indexdef: column 0 is the whole CREATE INDEX statement, column k the
-- k-th key column (as the built-in does).
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

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_indexdef(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.pg_get_indexdef(p_oid, 0, false)
$$;

-- pg_get_constraintdef: the virtual PK constraint has the OID of its index.
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

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_constraintdef(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.pg_get_constraintdef(p_oid, false)
$$;

-- lake_relation_size is the size of a lake relation: the bytes of its live
-- data files (lakesoul.live_files) for a table, 0 for its PK index, NULL when
-- that cannot be read (function missing, no privilege).
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_relation_size(p_oid oid)
RETURNS bigint LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
    v bigint;
BEGIN
    SELECT * INTO r FROM lakesoul_pg.lake_relation(p_oid);
    IF NOT FOUND THEN
        RETURN NULL;
    ELSIF r.is_index THEN
        RETURN 0;
    END IF;
    BEGIN
        EXECUTE 'SELECT coalesce(sum(size), 0)::bigint FROM lakesoul.live_files($1)' INTO v USING r.table_id;
    EXCEPTION WHEN undefined_function OR insufficient_privilege THEN
        v := NULL;
    END;
    RETURN v;
END
$$;

-- is_lake_relation reports whether p_oid is a lake table or PK index.
CREATE OR REPLACE FUNCTION lakesoul_pg.is_lake_relation(p_oid oid)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM lakesoul_pg.lake_relation(p_oid));
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_relation_size(p_rel regclass, p_fork text)
RETURNS bigint LANGUAGE sql STABLE STRICT AS $$
    SELECT CASE WHEN NOT lakesoul_pg.is_lake_relation(p_rel) THEN pg_catalog.pg_relation_size(p_rel, p_fork)
                WHEN p_fork = 'main' THEN lakesoul_pg.lake_relation_size(p_rel)
                ELSE 0 END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_relation_size(p_rel regclass)
RETURNS bigint LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.pg_relation_size(p_rel, 'main')
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_table_size(p_rel regclass)
RETURNS bigint LANGUAGE sql STABLE STRICT AS $$
    SELECT CASE WHEN lakesoul_pg.is_lake_relation(p_rel) THEN lakesoul_pg.lake_relation_size(p_rel)
                ELSE pg_catalog.pg_table_size(p_rel) END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_total_relation_size(p_rel regclass)
RETURNS bigint LANGUAGE sql STABLE STRICT AS $$
    SELECT CASE WHEN lakesoul_pg.is_lake_relation(p_rel) THEN lakesoul_pg.lake_relation_size(p_rel)
                ELSE pg_catalog.pg_total_relation_size(p_rel) END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_indexes_size(p_rel regclass)
RETURNS bigint LANGUAGE sql STABLE STRICT AS $$
    SELECT CASE WHEN lakesoul_pg.is_lake_relation(p_rel) THEN 0::bigint
                ELSE pg_catalog.pg_indexes_size(p_rel) END
$$;

-- current_schema / current_schemas answer from the lake search path: the
-- namespaces in it that exist (current_schemas(true) adds pg_catalog first).
CREATE OR REPLACE FUNCTION lakesoul_pg.current_schemas(p_include_implicit boolean)
RETURNS name[] LANGUAGE sql STABLE STRICT AS $$
    SELECT CASE WHEN p_include_implicit THEN ARRAY['pg_catalog'::name] ELSE '{}'::name[] END
           || ARRAY(SELECT q.n::name
                      FROM unnest(lakesoul_pg.lake_search_path()) WITH ORDINALITY AS q(n, i)
                     WHERE EXISTS (SELECT 1 FROM lakesoul_pg.lake_namespace l WHERE l.nspname = q.n)
                     ORDER BY q.i)
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.current_schema()
RETURNS name LANGUAGE sql STABLE AS $$
    SELECT (lakesoul_pg.current_schemas(false))[1]
$$;

------------------------------------------------------------------------------
-- pg_catalog emulation views. Real rows: the system namespaces and their objects.
------------------------------------------------------------------------------

CREATE OR REPLACE VIEW lakesoul_pg.pg_namespace WITH (security_invoker = true) AS
SELECT n.* FROM pg_catalog.pg_namespace n
 WHERE n.nspname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT l.oid, l.nspname, lakesoul_pg.lake_owner(), NULL::aclitem[]
  FROM lakesoul_pg.lake_namespace l;

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
       r.relnatts, 0::int2 AS relchecks, false AS relhasrules, false AS relhastriggers,
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
          FROM lakesoul_pg.lake_index i) r;

-- Column rows for lake tables (attnum 1..n in schema order) and their PK
-- indexes (attnum 1..k in key order). Storage properties come from pg_type.
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

-- No lake table has column defaults.
CREATE OR REPLACE VIEW lakesoul_pg.pg_attrdef WITH (security_invoker = true) AS
SELECT d.* FROM pg_catalog.pg_attrdef d
 WHERE d.adrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                      WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                WHERE nspname IN ('pg_catalog', 'information_schema')));

-- Types, functions, triggers and policies: only those of the system namespaces
-- and system relations (lake tables have no row types, triggers or policies).
CREATE OR REPLACE VIEW lakesoul_pg.pg_type WITH (security_invoker = true) AS
SELECT t.* FROM pg_catalog.pg_type t
 WHERE t.typnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'));

CREATE OR REPLACE VIEW lakesoul_pg.pg_proc WITH (security_invoker = true) AS
SELECT p.* FROM pg_catalog.pg_proc p
 WHERE p.pronamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'));

CREATE OR REPLACE VIEW lakesoul_pg.pg_trigger WITH (security_invoker = true) AS
SELECT g.* FROM pg_catalog.pg_trigger g
 WHERE g.tgrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                      WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                WHERE nspname IN ('pg_catalog', 'information_schema')));

CREATE OR REPLACE VIEW lakesoul_pg.pg_policy WITH (security_invoker = true) AS
SELECT p.* FROM pg_catalog.pg_policy p
 WHERE p.polrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                       WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                 WHERE nspname IN ('pg_catalog', 'information_schema')));

-- The pg_catalog system views clients use to list relations.
CREATE OR REPLACE VIEW lakesoul_pg.pg_tables WITH (security_invoker = true) AS
SELECT t.* FROM pg_catalog.pg_tables t
 WHERE t.schemaname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT l.nspname, l.relname, pg_catalog.pg_get_userbyid(lakesoul_pg.lake_owner()), NULL::name,
       cardinality(l.pkattnums) > 0, false, false, false
  FROM lakesoul_pg.lake_table l;

CREATE OR REPLACE VIEW lakesoul_pg.pg_indexes WITH (security_invoker = true) AS
SELECT i.* FROM pg_catalog.pg_indexes i
 WHERE i.schemaname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT l.nspname, l.tablename, l.relname, NULL::name, lakesoul_pg.pg_get_indexdef(l.indexrelid)
  FROM lakesoul_pg.lake_index l;

CREATE OR REPLACE VIEW lakesoul_pg.pg_views WITH (security_invoker = true) AS
SELECT v.* FROM pg_catalog.pg_views v
 WHERE v.schemaname IN ('pg_catalog', 'information_schema');

CREATE OR REPLACE VIEW lakesoul_pg.pg_sequences WITH (security_invoker = true) AS
SELECT s.* FROM pg_catalog.pg_sequences s
 WHERE s.schemaname IN ('pg_catalog', 'information_schema');

-- Descriptions of hidden relations, namespaces, functions, types and
-- constraints are dropped; lake namespaces are described by namespace.comment.
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
 WHERE n.comment <> '';

------------------------------------------------------------------------------
-- information_schema emulation views (lakesoul_pg.info_<name>). Real rows: those
-- of the system schemas; lake rows are shown to whoever can read their metadata.
------------------------------------------------------------------------------

CREATE OR REPLACE VIEW lakesoul_pg.info_schemata WITH (security_invoker = true) AS
SELECT s.* FROM information_schema.schemata s
 WHERE s.schema_name IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       n.nspname::information_schema.sql_identifier,
       pg_catalog.pg_get_userbyid(lakesoul_pg.lake_owner())::information_schema.sql_identifier,
       NULL::information_schema.sql_identifier, NULL::information_schema.sql_identifier,
       NULL::information_schema.sql_identifier, NULL::information_schema.character_data
  FROM lakesoul_pg.lake_namespace n;

CREATE OR REPLACE VIEW lakesoul_pg.info_tables WITH (security_invoker = true) AS
SELECT t.* FROM information_schema.tables t
 WHERE t.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       l.nspname::information_schema.sql_identifier,
       l.relname::information_schema.sql_identifier,
       'BASE TABLE'::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.sql_identifier,
       NULL::information_schema.sql_identifier,
       'YES'::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       NULL::information_schema.character_data
  FROM lakesoul_pg.lake_table l;

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
       (CASE WHEN ty.typelem <> 0 AND ty.typlen = -1 THEN 'ARRAY'
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
       'pg_catalog'::information_schema.sql_identifier AS udt_schema,
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
  JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid;

-- Lake constraints: the primary key, and (as PostgreSQL 15 lists them) one
-- CHECK row "<nsp oid>_<rel oid>_<attnum>_not_null" per NOT NULL column.
CREATE OR REPLACE VIEW lakesoul_pg.info_table_constraints WITH (security_invoker = true) AS
SELECT c.* FROM information_schema.table_constraints c
 WHERE c.constraint_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       x.nspname::information_schema.sql_identifier,
       x.conname::information_schema.sql_identifier,
       pg_catalog.current_database()::information_schema.sql_identifier,
       x.nspname::information_schema.sql_identifier,
       x.relname::information_schema.sql_identifier,
       x.contype::information_schema.character_data,
       'NO'::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       'YES'::information_schema.yes_or_no, NULL::information_schema.yes_or_no
  FROM (SELECT i.nspname, i.relname AS conname, i.tablename AS relname, 'PRIMARY KEY' AS contype
          FROM lakesoul_pg.lake_index i
        UNION ALL
        SELECT a.nspname, format('%s_%s_%s_not_null', a.relnamespace, a.attrelid, a.attnum),
               a.relname, 'CHECK'
          FROM lakesoul_pg.lake_column a
         WHERE a.attnotnull) x;

CREATE OR REPLACE VIEW lakesoul_pg.info_key_column_usage WITH (security_invoker = true) AS
SELECT k.* FROM information_schema.key_column_usage k
 WHERE k.constraint_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       i.nspname::information_schema.sql_identifier,
       i.relname::information_schema.sql_identifier,
       pg_catalog.current_database()::information_schema.sql_identifier,
       i.nspname::information_schema.sql_identifier,
       i.tablename::information_schema.sql_identifier,
       a.attname::information_schema.sql_identifier,
       k.n::information_schema.cardinal_number,
       NULL::information_schema.cardinal_number
  FROM lakesoul_pg.lake_index i
 CROSS JOIN LATERAL unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
 CROSS JOIN LATERAL lakesoul_pg.schema_columns(i.table_schema) a
 WHERE a.attnum = k.attnum;

CREATE OR REPLACE VIEW lakesoul_pg.info_views WITH (security_invoker = true) AS
SELECT v.* FROM information_schema.views v
 WHERE v.table_schema IN ('pg_catalog', 'information_schema');

------------------------------------------------------------------------------
-- Description functions, over the emulated pg_description (same definitions as
-- the built-in SQL functions, other catalog).
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION lakesoul_pg.obj_description(p_oid oid, p_catalog name)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT d.description FROM lakesoul_pg.pg_description d
     WHERE d.objoid = p_oid AND d.objsubid = 0
       AND d.classoid = (SELECT c.oid FROM pg_catalog.pg_class c
                          WHERE c.relname = p_catalog AND c.relnamespace = 'pg_catalog'::regnamespace)
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.obj_description(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT d.description FROM lakesoul_pg.pg_description d
     WHERE d.objoid = p_oid AND d.objsubid = 0
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.col_description(p_oid oid, p_column int4)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT d.description FROM lakesoul_pg.pg_description d
     WHERE d.objoid = p_oid AND d.objsubid = p_column
       AND d.classoid = 'pg_catalog.pg_class'::regclass
$$;

-- Catalog queries over the union views get cost estimates far above
-- jit_above_cost (set-returning functions are assumed to return 1000 rows),
-- and JIT compilation then takes seconds for a query that runs in
-- milliseconds. Nothing in this database (LakeSoul's metadata OLTP included)
-- profits from JIT, so it is off for every new session of the database
-- (when the migrating role may say so; otherwise set jit = off for the
-- catalog sessions another way).
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'jit stays on: %', SQLERRM;
END
$$;

-- The views and functions are as readable as the real catalogs; what a role
-- sees of the lake is decided by its access to LakeSoul's tables.
GRANT USAGE ON SCHEMA lakesoul_pg TO PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA lakesoul_pg TO PUBLIC;
