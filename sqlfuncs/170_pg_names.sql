-- Object names on the PostgreSQL face (package pgcatalog, regnames.go):
-- what ::regclass, ::regtype, ::regnamespace, to_regclass, to_regtype,
-- to_regnamespace, pg_get_serial_sequence and has_schema_privilege answer
-- for lake objects, which are no relations, types or schemas of this
-- database. pgcatalog.Rewrite points a catalog query's casts and calls
-- here; each function resolves names as PostgreSQL does — quoting and case
-- folding (parse_ident), pg_catalog searched first, then the lake search
-- path (lakesoul.search_path, PostgreSQL names) — over the emulation views,
-- so the calling role sees exactly the objects it may see, and answers
-- everything else (system objects, OIDs) with the built-in function.
-- Errors are PostgreSQL's (42P01, 3F000, 42704, 42703, 22P02).

-- lake_class_oid: the OID of relation p_name in schema p_schema as
-- pg_class shows it (system relations and lake tables, views, sequences
-- and indexes); NULL when there is none.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_class_oid(p_schema text, p_name text)
RETURNS oid LANGUAGE sql STABLE STRICT AS $$
    SELECT c.oid FROM lakesoul_pg.pg_class c
      JOIN lakesoul_pg.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = p_schema AND c.relname = p_name
     LIMIT 1
$$;

-- lake_type_oid: the OID of type p_name in schema p_schema (a lake enum
-- type or a type of pg_catalog); NULL when there is none.
CREATE OR REPLACE FUNCTION lakesoul_pg.lake_type_oid(p_schema text, p_name text)
RETURNS oid LANGUAGE sql STABLE STRICT AS $$
    SELECT coalesce(
        (SELECT e.oid FROM lakesoul_pg.lake_enum e WHERE e.nspname = p_schema AND e.typname = p_name LIMIT 1),
        (SELECT t.oid FROM pg_catalog.pg_type t
          WHERE t.typnamespace = 'pg_catalog'::regnamespace AND p_schema = 'pg_catalog' AND t.typname = p_name))
$$;

-- name_parts splits a qualified name as regclass input reads it; 22P02
-- "invalid name syntax" when it is none.
CREATE OR REPLACE FUNCTION lakesoul_pg.name_parts(p_name text)
RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    v text[];
BEGIN
    v := pg_catalog.parse_ident(p_name);
    IF cardinality(v) NOT BETWEEN 1 AND 3 THEN
        RAISE EXCEPTION 'improper relation name (too many dotted names): %', p_name USING ERRCODE = '42601';
    END IF;
    IF cardinality(v) = 3 THEN
        IF v[1] <> pg_catalog.current_database() THEN
            RAISE EXCEPTION 'cross-database references are not implemented: %', p_name USING ERRCODE = '0A000';
        END IF;
        v := v[2:3];
    END IF;
    RETURN v;
EXCEPTION WHEN invalid_text_representation THEN
    RAISE EXCEPTION 'invalid name syntax' USING ERRCODE = '42602';
END
$$;

-- regclass_lookup: the relation a regclass input names, or NULL; 3F000
-- when the schema it names does not exist.
CREATE OR REPLACE FUNCTION lakesoul_pg.regclass_lookup(p_name text)
RETURNS oid LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    v   text[];
    s   text;
    res oid;
BEGIN
    IF p_name ~ '^\s*[0-9]+\s*$' THEN
        RETURN p_name::oid; -- an OID, taken as it is
    END IF;
    v := lakesoul_pg.name_parts(p_name);
    IF cardinality(v) = 2 THEN
        IF NOT EXISTS (SELECT 1 FROM lakesoul_pg.pg_namespace n WHERE n.nspname = v[1]) THEN
            RAISE EXCEPTION 'schema "%" does not exist', v[1] USING ERRCODE = '3F000';
        END IF;
        RETURN lakesoul_pg.lake_class_oid(v[1], v[2]);
    END IF;
    FOREACH s IN ARRAY ARRAY['pg_catalog'] || lakesoul_pg.lake_search_path() LOOP
        res := lakesoul_pg.lake_class_oid(s, v[1]);
        IF res IS NOT NULL THEN
            RETURN res;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- regclass(text) is text::regclass; regclass(oid) is oid::regclass.
CREATE OR REPLACE FUNCTION lakesoul_pg.regclass(p_name text)
RETURNS regclass LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    res oid;
BEGIN
    res := lakesoul_pg.regclass_lookup(p_name);
    IF res IS NULL THEN
        RAISE EXCEPTION 'relation "%" does not exist', p_name USING ERRCODE = '42P01';
    END IF;
    RETURN res::regclass;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regclass(p_oid oid)
RETURNS regclass LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT p_oid::regclass
$$;

-- to_regclass: NULL where ::regclass fails for want of the object.
CREATE OR REPLACE FUNCTION lakesoul_pg.to_regclass(p_name text)
RETURNS regclass LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    RETURN lakesoul_pg.regclass_lookup(p_name)::regclass;
EXCEPTION WHEN invalid_schema_name THEN
    RETURN NULL;
END
$$;

-- regclass_text is regclass output: the relation's name, qualified when it
-- is not visible in the search path; the OID as a number when no relation
-- has it.
CREATE OR REPLACE FUNCTION lakesoul_pg.regclass_text(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT coalesce(
        (SELECT CASE WHEN lakesoul_pg.regclass_lookup(pg_catalog.quote_ident(c.relname)) = c.oid
                     THEN pg_catalog.quote_ident(c.relname) -- what the name alone finds
                     ELSE pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname) END
           FROM lakesoul_pg.pg_class c
           JOIN lakesoul_pg.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.oid = p_oid
          LIMIT 1),
        p_oid::text)
$$;

-- regtype: type names (lake enum types by the search path), else the
-- built-in input, which knows PostgreSQL's type syntax (character varying,
-- int4[], …).
CREATE OR REPLACE FUNCTION lakesoul_pg.regtype_lookup(p_name text)
RETURNS oid LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    v   text[];
    s   text;
    res oid;
BEGIN
    IF p_name ~ '^\s*[0-9]+\s*$' THEN
        RETURN p_name::oid;
    END IF;
    BEGIN
        v := lakesoul_pg.name_parts(p_name);
    EXCEPTION WHEN OTHERS THEN
        v := NULL; -- type syntax (varchar(10), int[]): the built-in's
    END;
    IF cardinality(v) = 2 THEN
        res := lakesoul_pg.lake_type_oid(v[1], v[2]);
    ELSIF cardinality(v) = 1 THEN
        FOREACH s IN ARRAY lakesoul_pg.lake_search_path() LOOP
            res := (SELECT e.oid FROM lakesoul_pg.lake_enum e WHERE e.nspname = s AND e.typname = v[1] LIMIT 1);
            EXIT WHEN res IS NOT NULL;
        END LOOP;
    END IF;
    IF res IS NOT NULL THEN
        RETURN res;
    END IF;
    IF cardinality(v) = 2 AND v[1] NOT IN ('pg_catalog', 'information_schema') THEN
        RETURN NULL; -- never a type of the catalog database's own schemas
    END IF;
    RETURN pg_catalog.to_regtype(p_name);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regtype(p_name text)
RETURNS regtype LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    res oid;
BEGIN
    res := lakesoul_pg.regtype_lookup(p_name);
    IF res IS NULL THEN
        RAISE EXCEPTION 'type "%" does not exist', p_name USING ERRCODE = '42704';
    END IF;
    RETURN res::regtype;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regtype(p_oid oid)
RETURNS regtype LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT p_oid::regtype
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.to_regtype(p_name text)
RETURNS regtype LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.regtype_lookup(p_name)::regtype
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regtype_text(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.format_type(p_oid, NULL)
$$;

-- regnamespace: lake namespaces by their PostgreSQL names, and the system
-- schemas.
CREATE OR REPLACE FUNCTION lakesoul_pg.regnamespace(p_name text)
RETURNS regnamespace LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    v   text[];
    res oid;
BEGIN
    IF p_name ~ '^\s*[0-9]+\s*$' THEN
        RETURN p_name::oid::regnamespace;
    END IF;
    v := pg_catalog.parse_ident(p_name);
    IF cardinality(v) <> 1 THEN
        RAISE EXCEPTION 'invalid name syntax' USING ERRCODE = '42602';
    END IF;
    SELECT n.oid INTO res FROM lakesoul_pg.pg_namespace n WHERE n.nspname = v[1];
    IF res IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', v[1] USING ERRCODE = '42704';
    END IF;
    RETURN res::regnamespace;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regnamespace(p_oid oid)
RETURNS regnamespace LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT p_oid::regnamespace
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.to_regnamespace(p_name text)
RETURNS regnamespace LANGUAGE sql STABLE STRICT AS $$
    SELECT n.oid::regnamespace FROM lakesoul_pg.pg_namespace n
     WHERE n.nspname = (pg_catalog.parse_ident(p_name))[1] AND cardinality(pg_catalog.parse_ident(p_name)) = 1
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.regnamespace_text(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT coalesce((SELECT pg_catalog.quote_ident(n.nspname) FROM lakesoul_pg.pg_namespace n WHERE n.oid = p_oid),
                    p_oid::text)
$$;

-- pg_get_serial_sequence: the sequence a lake column owns (SERIAL or
-- IDENTITY), qualified and quoted as PostgreSQL returns it; NULL for a
-- column that owns none. The column name is taken as written (PostgreSQL
-- folds it only when unquoted, which a client's value never is).
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_serial_sequence(p_table text, p_column text)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    rel  oid;
    col  int2;
    res  text;
BEGIN
    rel := lakesoul_pg.regclass(p_table);
    IF NOT EXISTS (SELECT 1 FROM lakesoul_pg.lake_relation(rel)) THEN
        RETURN pg_catalog.pg_get_serial_sequence(p_table, p_column);
    END IF;
    SELECT a.attnum INTO col FROM lakesoul_pg.lake_column a WHERE a.attrelid = rel AND a.attname = p_column;
    IF col IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', p_column, (SELECT l.relname FROM lakesoul_pg.lake_relation(rel) l)
            USING ERRCODE = '42703';
    END IF;
    SELECT pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(q.relname) INTO res
      FROM lakesoul_pg.lake_sequence_owner o
      JOIN lakesoul_pg.lake_sequence q ON q.oid = o.seqoid
      JOIN lakesoul_pg.lake_namespace n ON n.oid = q.relnamespace
     WHERE o.reloid = rel AND o.adnum = col
     LIMIT 1;
    RETURN res;
END
$$;

-- has_schema_privilege of a lake namespace: a role that sees the namespace
-- (row-level security) may use it and create in it as its workspace
-- allows; the catalog decides that when the object is created, so both are
-- true here. Other schemas: the built-in.
CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_schema text, p_privilege text)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    IF p_schema NOT IN ('pg_catalog', 'information_schema') THEN
        IF EXISTS (SELECT 1 FROM lakesoul_pg.lake_namespace n WHERE n.nspname = p_schema) THEN
            PERFORM pg_catalog.has_schema_privilege('pg_catalog', p_privilege); -- checks the privilege's spelling
            RETURN true;
        END IF;
        RAISE EXCEPTION 'schema "%" does not exist', p_schema USING ERRCODE = '3F000';
    END IF;
    RETURN pg_catalog.has_schema_privilege(p_schema, p_privilege);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_user name, p_schema text, p_privilege text)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    IF p_user <> current_user THEN
        -- Another role's view of the lake is not this session's to tell.
        PERFORM pg_catalog.has_schema_privilege(p_user, 'pg_catalog', p_privilege);
    END IF;
    RETURN lakesoul_pg.has_schema_privilege(p_schema, p_privilege);
END
$$;

-- The built-in's other forms: a schema by OID, a role by OID.
CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_schema oid, p_privilege text)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    n name;
BEGIN
    SELECT l.nspname INTO n FROM lakesoul_pg.lake_namespace l WHERE l.oid = p_schema;
    IF n IS NULL THEN
        RETURN pg_catalog.has_schema_privilege(p_schema, p_privilege);
    END IF;
    RETURN lakesoul_pg.has_schema_privilege(n::text, p_privilege);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_user name, p_schema oid, p_privilege text)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    IF p_user <> current_user THEN
        PERFORM pg_catalog.has_schema_privilege(p_user, 'pg_catalog', p_privilege);
    END IF;
    RETURN lakesoul_pg.has_schema_privilege(p_schema, p_privilege);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_user oid, p_schema text, p_privilege text)
RETURNS boolean LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.has_schema_privilege((SELECT r.rolname FROM pg_catalog.pg_roles r WHERE r.oid = p_user), p_schema, p_privilege)
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.has_schema_privilege(p_user oid, p_schema oid, p_privilege text)
RETURNS boolean LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.has_schema_privilege((SELECT r.rolname FROM pg_catalog.pg_roles r WHERE r.oid = p_user), p_schema, p_privilege)
$$;
