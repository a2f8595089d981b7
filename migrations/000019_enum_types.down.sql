DROP FUNCTION IF EXISTS lakesoul_pg.pg_type_is_visible(oid);
DROP FUNCTION IF EXISTS lakesoul_pg.format_type(oid, int4);
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

CREATE OR REPLACE VIEW lakesoul_pg.pg_type WITH (security_invoker = true) AS
SELECT t.* FROM pg_catalog.pg_type t
 WHERE t.typnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'));

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

DROP VIEW IF EXISTS lakesoul_pg.pg_enum;
DROP VIEW IF EXISTS lakesoul_pg.lake_enum;
DROP TABLE IF EXISTS lakesoul.enum_label;
DROP TABLE IF EXISTS lakesoul.enum_type;
