-- Column defaults and CHECK constraints of lake tables in the catalog
-- emulation, so that pg_dump dumps them and psql's \d shows them.
--
-- A default is PostgreSQL expression text in its field's metadata
-- ("pg_default", schema.MetaDefault); a CHECK constraint is a table property
-- "pg_check.<name>" holding its condition (engine/checks.go). pg_attrdef
-- carries the default as text in adbin, and lakesoul_pg.pg_get_expr answers
-- text with itself: no node tree exists for an expression PostgreSQL never
-- parsed. pg_constraint lists the checks as contype 'c', and
-- pg_get_constraintdef renders them. pg_class.relchecks counts them (pg_dump
-- refuses a table whose count and rows disagree), pg_attribute.atthasdef
-- marks the columns with a default (pg_dump and psql look up pg_attrdef only
-- for those).
--
-- Lake sequences (migration 14) appear as relations of kind 'S' with the OID
-- of their object lakesoul_seq."s<id>" (real OIDs of the catalog database:
-- below 10^9 and never shown for anything else), pg_sequence shows their
-- options, and a sequence owned by a table (SERIAL, IDENTITY, ALTER SEQUENCE
-- … OWNED BY) has pg_depend's 'a' row to the column whose default calls it;
-- pg_dump then dumps it as CREATE SEQUENCE, OWNED BY, ALTER COLUMN … SET
-- DEFAULT and setval. A nextval default is shown only for such an owned
-- sequence: pg_dump writes other defaults into CREATE TABLE, before any
-- sequence exists.
--
-- OIDs. pg_attrdef and pg_constraint OIDs need only be unique within their
-- catalog. A default's is 10^9 + (table OID - 10^9) * 1600 + attnum (1600:
-- PostgreSQL's column limit), a check's 2^31 + (table OID - 10^9) * 1000 + k
-- for the k-th check by name (below the primary-key constraints, 2^31 + table
-- OID, which are at least 2^31 + 10^9); both wrap around in their range
-- rather than fail, which only a catalog of millions of tables reaches.

-- Read by the views below (the registry's row-level security keeps the
-- rows); ALTER SEQUENCE … OWNED BY sets owner_table, as the caller.
GRANT SELECT ON lakesoul.sequence TO PUBLIC;
GRANT UPDATE (owner_table) ON lakesoul.sequence TO base_super_admin_role, base_admin_role, base_user_role;

-- lake_sequence: the lake sequences the role sees, with their objects' OIDs.
CREATE OR REPLACE VIEW lakesoul_pg.lake_sequence WITH (security_invoker = true) AS
SELECT c.oid, s.name::name AS relname, no.oid::oid AS relnamespace, s.namespace, s.id, s.owner_table
  FROM lakesoul.sequence s
  JOIN lakesoul.namespace_oid no ON no.namespace = s.namespace
  JOIN pg_catalog.pg_class c ON c.relnamespace = 'lakesoul_seq'::regnamespace AND c.relname = 's' || s.id;

-- lake_sequence_owner: an owned sequence's table and the column (the first
-- whose default calls nextval of it by name), and whether that column is an
-- identity column (schema.MetaIdentity).
CREATE OR REPLACE VIEW lakesoul_pg.lake_sequence_owner WITH (security_invoker = true) AS
SELECT q.oid AS seqoid, t.oid AS reloid, d.adnum, d.ident
  FROM lakesoul_pg.lake_sequence q
  JOIN lakesoul_pg.lake_table t ON t.table_id = q.owner_table
 CROSS JOIN LATERAL (
        SELECT e.n::int2 AS adnum, e.field->'metadata'->>'pg_identity' IS NOT NULL AS ident
          FROM jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) WITH ORDINALITY AS e(field, n)
         WHERE e.field->'metadata'->>'pg_default' ~* '\mnextval\s*\('
           AND position(q.relname IN e.field->'metadata'->>'pg_default') > 0
         ORDER BY e.n LIMIT 1) d;

-- lake_identity: the identity columns of lake tables, with pg_attribute's
-- attidentity ('a' GENERATED ALWAYS, 'd' BY DEFAULT).
CREATE OR REPLACE VIEW lakesoul_pg.lake_identity WITH (security_invoker = true) AS
SELECT t.oid AS reloid, e.n::int2 AS attnum,
       (CASE e.field->'metadata'->>'pg_identity' WHEN 'always' THEN 'a' ELSE 'd' END)::"char" AS attidentity
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) WITH ORDINALITY AS e(field, n)
 WHERE e.field->'metadata'->>'pg_identity' IS NOT NULL;
GRANT SELECT ON lakesoul_pg.lake_sequence, lakesoul_pg.lake_sequence_owner, lakesoul_pg.lake_identity TO PUBLIC;

-- lake_attrdef: the defaults of lake tables' columns (nextval ones of owned
-- sequences only, see above; identity columns have none).
CREATE OR REPLACE VIEW lakesoul_pg.lake_attrdef WITH (security_invoker = true) AS
SELECT (1000000000 + ((t.oid8 - 1000000000) * 1600 + e.n) % 3294967295)::oid AS oid,
       t.oid AS adrelid, e.n::int2 AS adnum, e.field->'metadata'->>'pg_default' AS adsrc
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) WITH ORDINALITY AS e(field, n)
 WHERE e.field->'metadata'->>'pg_default' IS NOT NULL
   AND e.field->'metadata'->>'pg_identity' IS NULL -- an identity column has no default in PostgreSQL
   AND (e.field->'metadata'->>'pg_default' !~* '\mnextval\s*\('
        OR EXISTS (SELECT 1 FROM lakesoul_pg.lake_sequence_owner o WHERE o.reloid = t.oid AND o.adnum = e.n));

-- pg_sequence: the lake sequences' rows (the catalog database's own
-- sequences stay hidden).
CREATE OR REPLACE VIEW lakesoul_pg.pg_sequence WITH (security_invoker = true) AS
SELECT s.* FROM pg_catalog.pg_sequence s
 WHERE s.seqrelid IN (SELECT q.oid FROM lakesoul_pg.lake_sequence q);
GRANT SELECT ON lakesoul_pg.pg_sequence TO PUBLIC;

-- pg_depend: the real rows (unknown objects are ignored by its readers, as
-- before this view), the owned sequences' 'a' rows to their columns ('i' for
-- an identity column's: pg_dump writes ADD GENERATED … AS IDENTITY), and
-- their columns' defaults' 'n' rows to them (pg_dump then restores the
-- default after the sequence, with ALTER TABLE … SET DEFAULT).
CREATE OR REPLACE VIEW lakesoul_pg.pg_depend WITH (security_invoker = true) AS
SELECT d.* FROM pg_catalog.pg_depend d
UNION ALL
SELECT 'pg_catalog.pg_class'::regclass::oid, o.seqoid, 0, 'pg_catalog.pg_class'::regclass::oid, o.reloid, o.adnum::int4,
       (CASE WHEN o.ident THEN 'i' ELSE 'a' END)::"char"
  FROM lakesoul_pg.lake_sequence_owner o
UNION ALL
SELECT 'pg_catalog.pg_attrdef'::regclass::oid, a.oid, 0, 'pg_catalog.pg_class'::regclass::oid, o.seqoid, 0, 'n'::"char"
  FROM lakesoul_pg.lake_sequence_owner o
  JOIN lakesoul_pg.lake_attrdef a ON a.adrelid = o.reloid AND a.adnum = o.adnum;
GRANT SELECT ON lakesoul_pg.pg_depend TO PUBLIC;

-- lake_check: the CHECK constraints of lake tables, numbered by name.
CREATE OR REPLACE VIEW lakesoul_pg.lake_check WITH (security_invoker = true) AS
SELECT (2147483648 + ((t.oid8 - 1000000000) * 1000 + k.n - 1) % 1000000000)::oid AS oid,
       k.name::name AS conname, t.oid AS conrelid, t.relnamespace, k.src
  FROM lakesoul_pg.lake_table t
  JOIN public.table_info ti ON ti.table_id = t.table_id
 CROSS JOIN LATERAL (
        SELECT substr(p.key, length('pg_check.') + 1) AS name, p.value AS src,
               row_number() OVER (ORDER BY p.key) AS n
          FROM jsonb_each_text(coalesce(ti.properties::jsonb, '{}'::jsonb)) AS p(key, value)
         WHERE starts_with(p.key, 'pg_check.')) k;
GRANT SELECT ON lakesoul_pg.lake_attrdef, lakesoul_pg.lake_check TO PUBLIC;

-- pg_attrdef: adbin is text here (see above); system rows keep theirs as
-- text, read by pg_get_expr's text form only for lake tables.
DROP VIEW IF EXISTS lakesoul_pg.pg_attrdef;
CREATE VIEW lakesoul_pg.pg_attrdef WITH (security_invoker = true) AS
SELECT d.oid, d.adrelid, d.adnum, d.adbin::text AS adbin FROM pg_catalog.pg_attrdef d
 WHERE d.adrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                      WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                WHERE nspname IN ('pg_catalog', 'information_schema')))
UNION ALL
SELECT a.oid, a.adrelid, a.adnum, a.adsrc FROM lakesoul_pg.lake_attrdef a;
GRANT SELECT ON lakesoul_pg.pg_attrdef TO PUBLIC;

-- pg_get_expr: text (a lake default) is the expression itself; node trees
-- go to the built-in.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_expr(p_expr text, p_rel oid)
RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT p_expr $$;
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_expr(p_expr text, p_rel oid, p_pretty boolean)
RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT p_expr $$;
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_expr(p_expr pg_node_tree, p_rel oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$ SELECT pg_catalog.pg_get_expr(p_expr, p_rel) $$;
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_expr(p_expr pg_node_tree, p_rel oid, p_pretty boolean)
RETURNS text LANGUAGE sql STABLE STRICT AS $$ SELECT pg_catalog.pg_get_expr(p_expr, p_rel, p_pretty) $$;

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
  FROM lakesoul_pg.lake_index i
UNION ALL
SELECT k.oid, k.conname, k.relnamespace, 'c'::"char", false, false, true, k.conrelid, 0::oid,
       0::oid, 0::oid, 0::oid, ' '::"char", ' '::"char", ' '::"char", true, 0, false,
       NULL::int2[], NULL::int2[], NULL::oid[], NULL::oid[], NULL::oid[], NULL::int2[],
       NULL::oid[], NULL::pg_node_tree
  FROM lakesoul_pg.lake_check k;

-- pg_get_constraintdef: checks (OIDs 2^31 … 2^31 + 10^9) render from their
-- condition; the rest as before (migration 3).
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_constraintdef(p_oid oid, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
    v_src text;
BEGIN
    IF p_oid::int8 >= 2147483648 AND p_oid::int8 < 3147483648 THEN
        SELECT k.src INTO v_src FROM lakesoul_pg.lake_check k WHERE k.oid = p_oid;
        IF FOUND THEN
            RETURN format('CHECK (%s)', v_src);
        END IF;
    END IF;
    SELECT * INTO r FROM lakesoul_pg.lake_relation(p_oid);
    IF NOT FOUND OR NOT r.is_index THEN
        RETURN pg_catalog.pg_get_constraintdef(p_oid, p_pretty);
    END IF;
    RETURN format('PRIMARY KEY (%s)', (SELECT string_agg(quote_ident(k), ', ') FROM unnest(r.keycols) k));
END
$$;

-- pg_class: migration 16's, with relchecks counted from the properties, and
-- the lake sequences.
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
       r.relnatts, r.relchecks, r.relkind = 'v' AS relhasrules, false AS relhastriggers,
       false AS relhassubclass, false AS relrowsecurity, false AS relforcerowsecurity,
       true AS relispopulated, r.relreplident, false AS relispartition, 0::oid AS relrewrite,
       '0'::xid AS relfrozenxid, '0'::xid AS relminmxid,
       NULL::aclitem[] AS relacl, NULL::text[] AS reloptions, NULL::pg_node_tree AS relpartbound
  FROM (SELECT t.oid, t.relname, t.relnamespace, 0::oid AS relam,
               (cardinality(t.pkattnums) > 0
                OR EXISTS (SELECT 1 FROM lakesoul.column_index ci WHERE ci.table_id = t.table_id)) AS relhasindex,
               'r'::"char" AS relkind,
               t.relnatts, 'd'::"char" AS relreplident,
               (SELECT count(*) FROM public.table_info ti
                 CROSS JOIN LATERAL jsonb_object_keys(coalesce(ti.properties::jsonb, '{}'::jsonb)) AS p(key)
                 WHERE ti.table_id = t.table_id AND starts_with(p.key, 'pg_check.'))::int2 AS relchecks
          FROM lakesoul_pg.lake_table t
        UNION ALL
        SELECT i.indexrelid, i.relname, i.relnamespace, 403::oid, false, 'i'::"char",
               cardinality(i.pkattnums)::int2, 'n'::"char", 0::int2
          FROM lakesoul_pg.lake_all_index i
        UNION ALL
        SELECT v.oid, v.relname, v.relnamespace, 0::oid, false, 'v'::"char",
               cardinality(v.columns)::int2, 'n'::"char", 0::int2
          FROM lakesoul_pg.lake_view v
        UNION ALL
        SELECT q.oid, q.relname, q.relnamespace, 0::oid, false, 'S'::"char", 3::int2, 'n'::"char", 0::int2
          FROM lakesoul_pg.lake_sequence q) r;

-- pg_attribute: migration 19's, with atthasdef from lake_attrdef and
-- attidentity from lake_identity.
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
       l.attnotnull, l.atthasdef, false AS atthasmissing, l.attidentity,
       ''::"char" AS attgenerated, false AS attisdropped, true AS attislocal, 0 AS attinhcount,
       ty.typcollation AS attcollation, NULL::aclitem[] AS attacl, NULL::text[] AS attoptions,
       NULL::text[] AS attfdwoptions, NULL::text AS attmissingval
  FROM (SELECT c.attrelid, c.attname, c.atttypid, c.attnum, c.atttypmod, c.attnotnull,
               d.adnum IS NOT NULL AS atthasdef, coalesce(id.attidentity, '') AS attidentity
          FROM lakesoul_pg.lake_column c
          LEFT JOIN lakesoul_pg.lake_attrdef d ON d.adrelid = c.attrelid AND d.adnum = c.attnum
          LEFT JOIN lakesoul_pg.lake_identity id ON id.reloid = c.attrelid AND id.attnum = c.attnum
        UNION ALL
        SELECT i.indexrelid, c.attname, c.atttypid, k.n::int2, c.atttypmod, false, false, ''::"char"
          FROM lakesoul_pg.lake_all_index i
         CROSS JOIN LATERAL unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
         CROSS JOIN LATERAL lakesoul_pg.schema_columns(i.table_schema) c
         WHERE c.attnum = k.attnum) l
  JOIN lakesoul_pg.pg_type ty ON ty.oid = l.atttypid;

-- information_schema.columns: migration 19's, with column_default from
-- lake_attrdef (ORMs and BI tools read defaults there).
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
