-- Back to the definitions of migrations 3 and 21.
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

CREATE OR REPLACE VIEW lakesoul_pg.lake_column WITH (security_invoker = true) AS
SELECT t.oid AS attrelid, c.attnum, c.attname, c.atttypid, c.atttypmod,
       (c.attname = ANY (t.pk) OR NOT c.nullable) AS attnotnull,
       t.relnamespace, t.nspname, t.relname
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL lakesoul_pg.schema_columns(t.table_schema) c;

DROP VIEW IF EXISTS lakesoul_pg.pg_stat_all_tables, lakesoul_pg.pg_stat_user_tables, lakesoul_pg.pg_settings,
    lakesoul_pg.pg_database;
DROP FUNCTION IF EXISTS lakesoul_pg.current_setting(text);
DROP FUNCTION IF EXISTS lakesoul_pg.current_setting(text, boolean);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_show_all_settings();
DROP FUNCTION IF EXISTS lakesoul_pg.setting_shown(text);

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
  LEFT JOIN lakesoul_pg.lake_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  JOIN lakesoul_pg.pg_type ty ON ty.oid = a.atttypid
  JOIN lakesoul_pg.pg_namespace tn ON tn.oid = ty.typnamespace;

