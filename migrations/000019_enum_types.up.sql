-- Enum types of lake namespaces (CREATE TYPE … AS ENUM, ALTER TYPE … ADD
-- VALUE / RENAME VALUE, DROP TYPE; sqlfuncs/150_enums.sql, engine/enum.go).
--
-- A type is a row of lakesoul.enum_type with its labels in
-- lakesoul.enum_label; values never live in the catalog: a lake column of an
-- enum type is a string column (Parquet strings, so other readers see the
-- labels) whose field metadata pg_type is "enum:<type oid>".
--
-- Invariants:
--   * a type's OID comes from lakesoul.object_oid_seq (below 2^31, never an
--     OID of the catalog database's own objects), as do its labels' OIDs;
--   * labels of a type are distinct, and none is a former name of a label
--     of the type (so a value in a file means one label);
--   * labels of a type are distinct and their sort orders distinct; the
--     order of sort_order is the order of the values (PostgreSQL's
--     enumsortorder: ADD VALUE BEFORE/AFTER takes the midpoint);
--   * a type belongs to its namespace: dropping the namespace drops it;
--   * a role sees and changes the types of the domains it sees (row-level
--     security as on lakesoul.view), and a type's namespace is one of its
--     domain;
--   * the pg_catalog emulation shows each visible type in pg_type (typtype
--     'e') and its labels in pg_enum; columns of the type carry its OID in
--     pg_attribute and 'USER-DEFINED' in information_schema.columns.

GRANT USAGE ON SEQUENCE lakesoul.object_oid_seq TO base_super_admin_role, base_admin_role, base_user_role;

CREATE TABLE lakesoul.enum_type (
    oid       bigint NOT NULL PRIMARY KEY DEFAULT nextval('lakesoul.object_oid_seq'),
    namespace text   NOT NULL REFERENCES public.namespace (namespace) ON DELETE CASCADE,
    name      text   NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 63),
    domain    text   NOT NULL,
    UNIQUE (namespace, name)
);
ALTER TABLE lakesoul.enum_type ENABLE ROW LEVEL SECURITY;
CREATE POLICY enum_type_domain ON lakesoul.enum_type FOR ALL
    USING (lakesoul.domain_visible(domain)) WITH CHECK (lakesoul.domain_visible(domain));
CREATE POLICY enum_type_namespace ON lakesoul.enum_type AS RESTRICTIVE FOR ALL USING (true)
    WITH CHECK (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = enum_type.namespace AND n.domain = enum_type.domain));
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.enum_type TO base_super_admin_role, base_admin_role, base_user_role;

CREATE TABLE lakesoul.enum_label (
    oid        bigint NOT NULL PRIMARY KEY DEFAULT nextval('lakesoul.object_oid_seq'),
    type_oid   bigint NOT NULL REFERENCES lakesoul.enum_type (oid) ON DELETE CASCADE,
    label      text   NOT NULL CHECK (octet_length(label) BETWEEN 1 AND 63),
    sort_order real   NOT NULL,
    -- the label's former names (RENAME VALUE): data files written before a
    -- rename hold them, and reads map them to the label
    former     text[] NOT NULL DEFAULT '{}',
    UNIQUE (type_oid, label),
    UNIQUE (type_oid, sort_order)
);
ALTER TABLE lakesoul.enum_label ENABLE ROW LEVEL SECURITY;
CREATE POLICY enum_label_visible ON lakesoul.enum_label FOR ALL
    USING (EXISTS (SELECT 1 FROM lakesoul.enum_type t WHERE t.oid = enum_label.type_oid))
    WITH CHECK (EXISTS (SELECT 1 FROM lakesoul.enum_type t WHERE t.oid = enum_label.type_oid));
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.enum_label TO base_super_admin_role, base_admin_role, base_user_role;
GRANT SELECT ON lakesoul.enum_type, lakesoul.enum_label TO PUBLIC; -- read by the views below; RLS keeps the rows

-- lake_enum: the visible enum types with their namespace OIDs.
CREATE OR REPLACE VIEW lakesoul_pg.lake_enum WITH (security_invoker = true) AS
SELECT e.oid::oid AS oid, e.name::name AS typname, no.oid::oid AS typnamespace, e.namespace::name AS nspname
  FROM lakesoul.enum_type e
  JOIN lakesoul.namespace_oid no ON no.namespace = e.namespace;
GRANT SELECT ON lakesoul_pg.lake_enum TO PUBLIC;

CREATE OR REPLACE FUNCTION lakesoul_pg.spark_pg_typid(p_spark_type text, p_pg_type text)
RETURNS oid LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_pg_type ~ '^enum:[0-9]{1,10}$' THEN substr(p_pg_type, 6)::bigint ELSE CASE split_part(p_pg_type, '(', 1)
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
           END END::oid
$$;

CREATE OR REPLACE VIEW lakesoul_pg.pg_type WITH (security_invoker = true) AS
SELECT t.* FROM pg_catalog.pg_type t
 WHERE t.typnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT e.oid, e.typname, e.typnamespace, lakesoul_pg.lake_owner(), 4::int2, true, 'e'::"char", 'E'::"char",
       false, true, ','::"char", 0::oid, '-'::regproc, 0::oid, 0::oid,
       'pg_catalog.enum_in'::regproc, 'pg_catalog.enum_out'::regproc,
       'pg_catalog.enum_recv'::regproc, 'pg_catalog.enum_send'::regproc,
       '-'::regproc, '-'::regproc, '-'::regproc, 'i'::"char", 'p'::"char", false, 0::oid, -1, 0, 0::oid,
       NULL::pg_node_tree, NULL::text, NULL::aclitem[]
  FROM lakesoul_pg.lake_enum e;

CREATE OR REPLACE VIEW lakesoul_pg.pg_enum WITH (security_invoker = true) AS
SELECT e.* FROM pg_catalog.pg_enum e
 WHERE e.enumtypid IN (SELECT t.oid FROM pg_catalog.pg_type t
                        WHERE t.typnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                  WHERE nspname IN ('pg_catalog', 'information_schema')))
UNION ALL
SELECT l.oid::oid, l.type_oid::oid, l.sort_order, l.label::name
  FROM lakesoul.enum_label l
  JOIN lakesoul_pg.lake_enum e ON e.oid = l.type_oid;
GRANT SELECT ON lakesoul_pg.pg_enum TO PUBLIC;

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

-- format_type and pg_type_is_visible know lake enum types (psql's \d and \dT)
-- and defer to the built-ins for every other OID. A type outside the lake
-- search path is shown qualified, as PostgreSQL shows it.
CREATE OR REPLACE FUNCTION lakesoul_pg.format_type(p_oid oid, p_typmod int4)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT CASE WHEN e.nspname = ANY (lakesoul_pg.lake_search_path()) THEN pg_catalog.quote_ident(e.typname)
                     ELSE pg_catalog.quote_ident(e.nspname) || '.' || pg_catalog.quote_ident(e.typname) END
           FROM lakesoul_pg.lake_enum e WHERE e.oid = p_oid),
        pg_catalog.format_type(p_oid, p_typmod))
$$;
GRANT EXECUTE ON FUNCTION lakesoul_pg.format_type(oid, int4) TO PUBLIC;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_type_is_visible(p_oid oid)
RETURNS boolean LANGUAGE sql STABLE STRICT AS $$
    SELECT coalesce(
        (SELECT e.nspname = ANY (lakesoul_pg.lake_search_path()) FROM lakesoul_pg.lake_enum e WHERE e.oid = p_oid),
        pg_catalog.pg_type_is_visible(p_oid))
$$;
GRANT EXECUTE ON FUNCTION lakesoul_pg.pg_type_is_visible(oid) TO PUBLIC;
