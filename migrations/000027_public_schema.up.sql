-- The PostgreSQL face names LakeSoul's default namespace "public" (package
-- pgcatalog: SchemaName/Namespace). LakeSoul's tables keep "default"; the
-- pg_catalog and information_schema emulation shows every namespace by its
-- PostgreSQL name, and the lake search path a catalog session carries
-- (lakesoul.search_path) is in PostgreSQL names too, "public" by default.
--
-- Invariant: lakesoul_pg.pg_schema_name and lake_namespace_name are
-- pgcatalog.SchemaName and Namespace ("default" is shown as "public"; no
-- namespace may be called "public", lakesoul.guard_namespace_name).

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_schema_name(p_namespace text)
RETURNS name LANGUAGE sql IMMUTABLE AS $$
    SELECT (CASE p_namespace WHEN 'default' THEN 'public' ELSE p_namespace END)::name
$$;

-- lake_namespace_name is the inverse: the LakeSoul namespace of a schema
-- name (none for "default", which is no schema on the PostgreSQL face).
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_namespace_name(p_schema text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_schema WHEN 'public' THEN 'default' WHEN 'default' THEN NULL ELSE p_schema END
$$;

CREATE OR REPLACE VIEW lakesoul_pg.lake_namespace WITH (security_invoker = true) AS
SELECT o.oid::oid AS oid, lakesoul_pg.pg_schema_name(n.namespace) AS nspname, n.comment
  FROM public.namespace n
  JOIN lakesoul.namespace_oid o ON o.namespace = n.namespace;

CREATE OR REPLACE VIEW lakesoul_pg.lake_table WITH (security_invoker = true) AS
SELECT o.oid::oid AS oid, t.table_name::name AS relname, no.oid::oid AS relnamespace,
       lakesoul_pg.pg_schema_name(t.table_namespace) AS nspname, t.table_id, t.table_schema,
       lakesoul_pg.column_count(t.table_schema) AS relnatts,
       lakesoul_pg.pk_attnums(t.table_schema, lakesoul_pg.primary_key_columns(t.partitions)) AS pkattnums,
       lakesoul_pg.primary_key_columns(t.partitions) AS pk,
       o.oid AS oid8, t.table_namespace, t.table_name
  FROM public.table_info t
  JOIN lakesoul.table_oid o ON o.table_id = t.table_id
  JOIN public.namespace n ON n.namespace = t.table_namespace
  JOIN lakesoul.namespace_oid no ON no.namespace = n.namespace;

CREATE OR REPLACE VIEW lakesoul_pg.lake_view WITH (security_invoker = true) AS
SELECT v.oid::oid AS oid, v.name::name AS relname, no.oid::oid AS relnamespace,
       lakesoul_pg.pg_schema_name(v.namespace) AS nspname,
       v.definition, v.columns, v.types, v.typmods
  FROM lakesoul.view v
  JOIN lakesoul.namespace_oid no ON no.namespace = v.namespace;

CREATE OR REPLACE VIEW lakesoul_pg.lake_enum WITH (security_invoker = true) AS
SELECT e.oid::oid AS oid, e.name::name AS typname, no.oid::oid AS typnamespace,
       lakesoul_pg.pg_schema_name(e.namespace) AS nspname
  FROM lakesoul.enum_type e
  JOIN lakesoul.namespace_oid no ON no.namespace = e.namespace;

-- The lake search path, in PostgreSQL names; "public" when unset, empty
-- when set to ''.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_search_path()
RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN current_setting('lakesoul.search_path', true) IS NULL THEN '{public}'::text[]
                ELSE coalesce(array_agg(n ORDER BY i), '{}'::text[]) END
      FROM unnest(string_to_array(coalesce(current_setting('lakesoul.search_path', true), ''), ','))
           WITH ORDINALITY AS p(raw, i),
           LATERAL (SELECT btrim(btrim(p.raw), '"') AS n) x
     WHERE n <> '' AND n <> '$user'
$$;

-- default_text is a lake column default as PostgreSQL shows it: the
-- sequence of nextval('s.q'::regclass) named as regclass output names it,
-- unqualified where the search path finds it (stored defaults are always
-- qualified, engine/columndefault.go). The lookup functions are
-- sqlfuncs/170_pg_names.sql's, called only when a default has such a call.
CREATE OR REPLACE FUNCTION lakesoul_pg.default_text(p_default text)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    m   text[];
    rel oid;
BEGIN
    m := regexp_match(p_default, '^nextval\(''((?:[^'']|'''')*)''::regclass\)$');
    IF m IS NULL THEN
        RETURN p_default;
    END IF;
    BEGIN
        rel := lakesoul_pg.regclass_lookup(replace(m[1], '''''', ''''));
    EXCEPTION WHEN OTHERS THEN
        RETURN p_default;
    END;
    IF rel IS NULL THEN
        RETURN p_default;
    END IF;
    RETURN format('nextval(%L::regclass)', lakesoul_pg.regclass_text(rel));
END
$$;

-- lake_attrdef (migration 21) with the defaults as default_text shows them:
-- pg_attrdef, pg_get_expr and information_schema.columns read it.
CREATE OR REPLACE VIEW lakesoul_pg.lake_attrdef WITH (security_invoker = true) AS
SELECT (1000000000 + ((t.oid8 - 1000000000) * 1600 + e.n) % 3294967295)::oid AS oid,
       t.oid AS adrelid, e.n::int2 AS adnum, lakesoul_pg.default_text(e.field->'metadata'->>'pg_default') AS adsrc
  FROM lakesoul_pg.lake_table t
 CROSS JOIN LATERAL jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) WITH ORDINALITY AS e(field, n)
 WHERE e.field->'metadata'->>'pg_default' IS NOT NULL
   AND e.field->'metadata'->>'pg_identity' IS NULL -- an identity column has no default in PostgreSQL
   AND (e.field->'metadata'->>'pg_default' !~* '\mnextval\s*\('
        OR EXISTS (SELECT 1 FROM lakesoul_pg.lake_sequence_owner o WHERE o.reloid = t.oid AND o.adnum = e.n));

-- pg_table_is_visible compares PostgreSQL names (the search path's and the
-- views').
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
                    WHERE t.table_namespace = lakesoul_pg.lake_namespace_name(n)
                      AND t.table_name IN (r.relname::text, left(r.relname, -5))
                      AND (t.relname = r.relname
                           OR (t.relname || '_pkey' = r.relname AND cardinality(t.pkattnums) > 0))) THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

GRANT EXECUTE ON FUNCTION lakesoul_pg.pg_schema_name(text), lakesoul_pg.lake_namespace_name(text) TO PUBLIC;
