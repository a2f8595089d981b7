-- Catalog facts ORMs and PostgreSQL's tools read (issue 35, item 8).
--
-- * Array columns have their array type in pg_attribute and
--   information_schema (schema_columns): the element's type's typarray, so
--   every element type schema_columns knows has its array by construction.
-- * Views' columns appear in pg_attribute and information_schema.columns
--   (lake_column holds every column of every lake relation, tables and
--   views), as PostgreSQL lists them for \d view
--   and JDBC's getColumns.
-- * information_schema.columns.is_identity and identity_generation for
--   identity columns.
-- * pg_database lists the one database the server serves (engine.DatabaseName,
--   "lakesoul"), with the catalog database's properties: template0,
--   template1 and postgres are the catalog cluster's, which no client of
--   this server can connect to (createdb, vacuumdb --all, \l).
-- * pg_settings, pg_show_all_settings() and current_setting() show only
--   the settings a session has (contexts user, superuser and internal): the
--   others (postmaster, sighup, backend, superuser-backend) configure the
--   catalog server itself — its data directory, files, port and sockets —
--   and are not this server's (\dconfig).
-- * pg_stat_user_tables and pg_stat_all_tables list lake tables (not the
--   catalog's own tables) with the counters the lake has.

CREATE OR REPLACE FUNCTION lakesoul_pg.schema_columns(p_table_schema text)
RETURNS TABLE (attnum int2, attname name, atttypid oid, atttypmod int4, nullable boolean)
LANGUAGE sql STABLE AS $$
    SELECT f.n::int2, (f.field->>'name')::name,
           CASE WHEN f.elem IS NULL
                THEN lakesoul_pg.spark_pg_typid(f.type, f.field->'metadata'->>'pg_type')
                ELSE (SELECT t.typarray FROM pg_catalog.pg_type t
                       WHERE t.oid = lakesoul_pg.spark_pg_typid(f.elem,
                                 regexp_replace(f.field->'metadata'->>'pg_type', '\[\]$', '')))
           END,
           CASE WHEN f.elem IS NULL THEN lakesoul_pg.spark_pg_typmod(f.type, f.field->'metadata'->>'pg_type') ELSE -1 END,
           coalesce((f.field->>'nullable')::boolean, true)
      FROM (SELECT e.field, e.n,
                   CASE jsonb_typeof(e.field->'type') WHEN 'string' THEN e.field->>'type' END AS type,
                   CASE WHEN e.field->'type'->>'type' = 'array' THEN e.field->'type'->>'elementType' END AS elem
              FROM jsonb_array_elements(lakesoul_pg.schema_fields(p_table_schema))
                   WITH ORDINALITY AS e(field, n)) f
$$;

-- One row per column of a lake relation: a table's (attnotnull for key
-- columns and fields declared "nullable": false) and a view's (lake_view's
-- OIDs are lakesoul.object_oid_seq's, as tables' are, so attrelid tells
-- which relation a row is of).
CREATE OR REPLACE VIEW lakesoul_pg.lake_column WITH (security_invoker = true) AS
SELECT t.oid AS attrelid, c.attnum, c.attname, c.atttypid, c.atttypmod,
       (c.attname = ANY (t.pk) OR NOT c.nullable) AS attnotnull,
       t.relnamespace, t.nspname, t.relname
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL lakesoul_pg.schema_columns(t.table_schema) c
UNION ALL
SELECT v.oid, c.n::int2, c.name::name, c.typ, c.typmod, false, v.relnamespace, v.nspname, v.relname
  FROM lakesoul_pg.lake_view v
 CROSS JOIN LATERAL unnest(v.columns, v.types, v.typmods) WITH ORDINALITY AS c(name, typ, typmod, n);

-- information_schema.columns: migration 21's, with is_identity and
-- identity_generation from lake_identity, and views not updatable.
CREATE OR REPLACE VIEW lakesoul_pg.info_columns WITH (security_invoker = true) AS
SELECT c.* FROM information_schema.columns c
 WHERE c.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier AS table_catalog,
       a.nspname::information_schema.sql_identifier AS table_schema,
       a.relname::information_schema.sql_identifier AS table_name,
       a.attname::information_schema.sql_identifier AS column_name,
       a.attnum::information_schema.cardinal_number AS ordinal_position,
       d.adsrc::information_schema.character_data AS column_default,
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
       (CASE WHEN id.attidentity IS NULL THEN 'NO' ELSE 'YES' END)::information_schema.yes_or_no AS is_identity,
       (CASE id.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END)::information_schema.character_data
           AS identity_generation,
       NULL::information_schema.character_data AS identity_start,
       NULL::information_schema.character_data AS identity_increment,
       NULL::information_schema.character_data AS identity_maximum,
       NULL::information_schema.character_data AS identity_minimum,
       'NO'::information_schema.yes_or_no AS identity_cycle,
       'NEVER'::information_schema.character_data AS is_generated,
       NULL::information_schema.character_data AS generation_expression,
       (CASE WHEN EXISTS (SELECT 1 FROM lakesoul_pg.lake_view v WHERE v.oid = a.attrelid) THEN 'NO' ELSE 'YES' END)
           ::information_schema.yes_or_no AS is_updatable
  FROM lakesoul_pg.lake_column a
  LEFT JOIN lakesoul_pg.lake_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  LEFT JOIN lakesoul_pg.lake_identity id ON id.reloid = a.attrelid AND id.attnum = a.attnum
  JOIN lakesoul_pg.pg_type ty ON ty.oid = a.atttypid
  JOIN lakesoul_pg.pg_namespace tn ON tn.oid = ty.typnamespace;

-- pg_database: the database this server serves.
CREATE OR REPLACE VIEW lakesoul_pg.pg_database WITH (security_invoker = true) AS
SELECT d.oid, 'lakesoul'::name AS datname, lakesoul_pg.lake_owner() AS datdba, d.encoding, d.datlocprovider,
       false AS datistemplate, true AS datallowconn, -1 AS datconnlimit, d.datfrozenxid, d.datminmxid,
       d.dattablespace, d.datcollate, d.datctype, d.daticulocale, d.datcollversion, NULL::aclitem[] AS datacl
  FROM pg_catalog.pg_database d
 WHERE d.datname = pg_catalog.current_database();

-- setting_shown: whether a setting of the catalog server is one a session
-- of this server has (see the top of this file).
CREATE OR REPLACE FUNCTION lakesoul_pg.setting_shown(p_context text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT p_context IN ('user', 'superuser', 'internal')
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_show_all_settings(
    OUT name text, OUT setting text, OUT unit text, OUT category text, OUT short_desc text, OUT extra_desc text,
    OUT context text, OUT vartype text, OUT source text, OUT min_val text, OUT max_val text, OUT enumvals text[],
    OUT boot_val text, OUT reset_val text, OUT sourcefile text, OUT sourceline integer, OUT pending_restart boolean)
RETURNS SETOF record LANGUAGE sql STABLE AS $$
    SELECT s.name, s.setting, s.unit, s.category, s.short_desc, s.extra_desc, s.context, s.vartype, s.source,
           s.min_val, s.max_val, s.enumvals, s.boot_val, s.reset_val, NULL::text, NULL::integer, s.pending_restart
      FROM pg_catalog.pg_show_all_settings() s
     WHERE lakesoul_pg.setting_shown(s.context)
$$;

CREATE OR REPLACE VIEW lakesoul_pg.pg_settings WITH (security_invoker = true) AS
SELECT s.name, s.setting, s.unit, s.category, s.short_desc, s.extra_desc, s.context, s.vartype, s.source,
       s.min_val, s.max_val, s.enumvals, s.boot_val, s.reset_val, s.sourcefile, s.sourceline, s.pending_restart
  FROM lakesoul_pg.pg_show_all_settings() s;

-- current_setting of a setting not shown is as unknown as PostgreSQL's
-- answer for a parameter it does not have.
CREATE OR REPLACE FUNCTION lakesoul_pg.current_setting(p_name text, p_missing_ok boolean)
RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_settings s WHERE lower(s.name) = lower(p_name)
                 AND NOT lakesoul_pg.setting_shown(s.context)) THEN
        IF p_missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'unrecognized configuration parameter "%"', p_name USING ERRCODE = '42704';
    END IF;
    RETURN pg_catalog.current_setting(p_name, p_missing_ok);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.current_setting(p_name text)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT lakesoul_pg.current_setting(p_name, false)
$$;

-- pg_stat_all_tables and pg_stat_user_tables: lake tables. The lake counts
-- no scans or row changes per statement, so those counters are 0.
CREATE OR REPLACE VIEW lakesoul_pg.pg_stat_user_tables WITH (security_invoker = true) AS
SELECT t.oid AS relid, t.nspname AS schemaname, t.relname,
       0::bigint AS seq_scan, 0::bigint AS seq_tup_read, NULL::bigint AS idx_scan, NULL::bigint AS idx_tup_fetch,
       0::bigint AS n_tup_ins, 0::bigint AS n_tup_upd, 0::bigint AS n_tup_del, 0::bigint AS n_tup_hot_upd,
       0::bigint AS n_live_tup, 0::bigint AS n_dead_tup, 0::bigint AS n_mod_since_analyze,
       0::bigint AS n_ins_since_vacuum, NULL::timestamptz AS last_vacuum, NULL::timestamptz AS last_autovacuum,
       NULL::timestamptz AS last_analyze, NULL::timestamptz AS last_autoanalyze, 0::bigint AS vacuum_count,
       0::bigint AS autovacuum_count, 0::bigint AS analyze_count, 0::bigint AS autoanalyze_count
  FROM lakesoul_pg.lake_table t;

CREATE OR REPLACE VIEW lakesoul_pg.pg_stat_all_tables WITH (security_invoker = true) AS
SELECT s.* FROM pg_catalog.pg_stat_all_tables s
 WHERE s.schemaname IN ('pg_catalog', 'information_schema', 'pg_toast')
UNION ALL
SELECT u.* FROM lakesoul_pg.pg_stat_user_tables u;

GRANT SELECT ON lakesoul_pg.pg_database, lakesoul_pg.pg_settings, lakesoul_pg.pg_stat_user_tables,
    lakesoul_pg.pg_stat_all_tables TO PUBLIC;
