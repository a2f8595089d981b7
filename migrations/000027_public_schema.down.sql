-- Back to LakeSoul's namespace names in the emulation (migrations 3, 14, 19).

CREATE OR REPLACE VIEW lakesoul_pg.lake_namespace WITH (security_invoker = true) AS
SELECT o.oid::oid AS oid, n.namespace::name AS nspname, n.comment
  FROM public.namespace n
  JOIN lakesoul.namespace_oid o ON o.namespace = n.namespace;

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

CREATE OR REPLACE VIEW lakesoul_pg.lake_view WITH (security_invoker = true) AS
SELECT v.oid::oid AS oid, v.name::name AS relname, no.oid::oid AS relnamespace, v.namespace::name AS nspname,
       v.definition, v.columns, v.types, v.typmods
  FROM lakesoul.view v
  JOIN lakesoul.namespace_oid no ON no.namespace = v.namespace;

CREATE OR REPLACE VIEW lakesoul_pg.lake_enum WITH (security_invoker = true) AS
SELECT e.oid::oid AS oid, e.name::name AS typname, no.oid::oid AS typnamespace, e.namespace::name AS nspname
  FROM lakesoul.enum_type e
  JOIN lakesoul.namespace_oid no ON no.namespace = e.namespace;

CREATE OR REPLACE FUNCTION lakesoul_pg.lake_search_path()
RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(n ORDER BY i), '{default}'::text[])
      FROM unnest(string_to_array(coalesce(current_setting('lakesoul.search_path', true), ''), ','))
           WITH ORDINALITY AS p(raw, i),
           LATERAL (SELECT btrim(btrim(p.raw), '"') AS n) x
     WHERE n <> ''
$$;

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

CREATE OR REPLACE VIEW lakesoul_pg.lake_attrdef WITH (security_invoker = true) AS
SELECT (1000000000 + ((t.oid8 - 1000000000) * 1600 + e.n) % 3294967295)::oid AS oid,
       t.oid AS adrelid, e.n::int2 AS adnum, e.field->'metadata'->>'pg_default' AS adsrc
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) WITH ORDINALITY AS e(field, n)
 WHERE e.field->'metadata'->>'pg_default' IS NOT NULL
   AND e.field->'metadata'->>'pg_identity' IS NULL -- an identity column has no default in PostgreSQL
   AND (e.field->'metadata'->>'pg_default' !~* '\mnextval\s*\('
        OR EXISTS (SELECT 1 FROM lakesoul_pg.lake_sequence_owner o WHERE o.reloid = t.oid AND o.adnum = e.n));

DROP FUNCTION IF EXISTS lakesoul_pg.default_text(text);
DROP FUNCTION IF EXISTS lakesoul_pg.lake_namespace_name(text);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_schema_name(text);
