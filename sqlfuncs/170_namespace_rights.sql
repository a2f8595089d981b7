-- Who may create, alter and drop the objects of a namespace, and what only
-- the server writes (migration 23 puts the triggers on the tables; the
-- functions are here). lakesoul.internal_property and
-- lakesoul.internal_column_key are made from the server binary's lists by
-- catalog.ApplyFunctions before this file runs.

-- face_namespace is the name PostgreSQL's face gives namespace p_namespace:
-- LakeSoul's "default" is schema public.
CREATE OR REPLACE FUNCTION lakesoul.face_namespace(p_namespace text)
RETURNS text LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog AS $$
    SELECT CASE WHEN p_namespace = 'default' THEN 'public' ELSE p_namespace END
$$;

-- may_create: may the current role create objects in namespace p_namespace,
-- and alter and drop them? As PostgreSQL 15 has it for its public schema:
-- superusers and the catalog's owner may; in a workspace's namespace the
-- workspace's members (LakeSoul's RBAC: a workspace's objects are its
-- members'); in a namespace of domain public (the default namespace, and
-- those an administrator made outside any workspace) only roles granted
-- CREATE on it (GRANT CREATE ON SCHEMA: lakesoul.namespace_grant, grantee 0
-- standing for PUBLIC). False for a namespace the role does not see.
CREATE OR REPLACE FUNCTION lakesoul.may_create(p_namespace text)
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog AS $$
    SELECT coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false)
        OR pg_has_role(current_user, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'lakesoul'), 'USAGE')
        OR EXISTS (SELECT 1 FROM public.namespace n
                    WHERE n.namespace = p_namespace
                      AND (coalesce(n.domain, 'public') NOT IN ('public', 'lake-public') AND lakesoul.domain_visible(n.domain)
                           OR EXISTS (SELECT 1 FROM lakesoul.namespace_grant g
                                       WHERE g.namespace = n.namespace
                                         AND (g.grantee = 0
                                              OR EXISTS (SELECT 1 FROM pg_roles r
                                                          WHERE r.oid = g.grantee AND pg_has_role(current_user, r.oid, 'USAGE'))))))
$$;

-- server_session: is this session the LakeSoul server's own login (the role
-- that applied these functions, whose connections run the server's
-- statements as the sessions' roles) or a superuser's? A workspace user
-- connected to the catalog directly is not, whatever role it sets.
CREATE OR REPLACE FUNCTION lakesoul.server_session()
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    SELECT session_user = current_user
        OR coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user), false)
$$;

-- guard_namespace_objects (trigger, BEFORE INSERT/UPDATE/DELETE FOR EACH ROW)
-- refuses a change to an object of a namespace the role may not create in
-- (may_create): 42501 "permission denied for schema s" for a new object,
-- "must be owner of <kind> <name>" for a change or drop, as PostgreSQL says
-- them. Arguments: the row's column naming its namespace (or table_id: the
-- namespace of that table; type_oid: of that enum type), the object's kind,
-- the column of its name ('' for none). An update is checked for the row's
-- old and new namespace. A row whose table or type is gone (a cascade of
-- its drop) or whose namespace is gone (a cascade of the namespace's drop,
-- which the namespace's policies allowed) is let go.
CREATE OR REPLACE FUNCTION lakesoul.guard_namespace_objects()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
DECLARE
    v_col  text := TG_ARGV[0];
    v_kind text := TG_ARGV[1];
    v_name text := TG_ARGV[2];
    v_row  jsonb;
    v_ns   text;
BEGIN
    FOREACH v_row IN ARRAY CASE TG_OP WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)]
                                      WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)]
                                      ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END LOOP
        v_ns := CASE v_col
            WHEN 'table_id' THEN (SELECT t.table_namespace FROM public.table_info t WHERE t.table_id = v_row->>'table_id')
            WHEN 'type_oid' THEN (SELECT e.namespace FROM lakesoul.enum_type e WHERE e.oid = (v_row->>'type_oid')::bigint)
            ELSE v_row->>v_col END;
        CONTINUE WHEN v_ns IS NULL AND v_col IN ('table_id', 'type_oid');
        CONTINUE WHEN TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = v_ns);
        IF NOT lakesoul.may_create(v_ns) THEN
            IF TG_OP = 'INSERT' OR v_name = '' THEN
                RAISE EXCEPTION 'permission denied for schema %', lakesoul.face_namespace(v_ns) USING ERRCODE = '42501';
            END IF;
            RAISE EXCEPTION 'must be owner of % %', v_kind, v_row->>v_name USING ERRCODE = '42501';
        END IF;
    END LOOP;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

-- guard_internal_keys (trigger on table_info, BEFORE INSERT/UPDATE) refuses,
-- from every session but the server's, a table property or column metadata
-- key only the server writes (lakesoul.internal_property,
-- lakesoul.internal_column_key) that is new or changed: CHECK conditions and
-- column defaults are expression text the server evaluates, so only text
-- its statements validated may be stored. Removing one is allowed, as
-- LakeSoul's clients rewrite a table's schema and properties whole.
CREATE OR REPLACE FUNCTION lakesoul.guard_internal_keys()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
DECLARE
    v_old_props  jsonb := '{}';
    v_new_props  jsonb := coalesce(NEW.properties::jsonb, '{}');
    v_old_fields jsonb := '[]';
    v_key        text;
BEGIN
    IF lakesoul.server_session() THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        v_old_props := coalesce(OLD.properties::jsonb, '{}');
        v_old_fields := lakesoul_pg.schema_fields(OLD.table_schema);
    END IF;
    IF jsonb_typeof(v_old_props) <> 'object' THEN
        v_old_props := '{}';
    END IF;
    IF jsonb_typeof(v_new_props) = 'object' THEN
        SELECT p.key INTO v_key FROM jsonb_each(v_new_props) p
         WHERE lakesoul.internal_property(p.key) AND p.value IS DISTINCT FROM (v_old_props -> p.key)
         LIMIT 1;
        IF v_key IS NOT NULL THEN
            RAISE EXCEPTION 'permission denied to set table property "%"', v_key USING ERRCODE = '42501',
                DETAIL = 'Only the LakeSoul server writes it, from the statement that owns it.';
        END IF;
    END IF;
    SELECT (f->>'name') || '.' || m.key INTO v_key
      FROM jsonb_array_elements(lakesoul_pg.schema_fields(NEW.table_schema)) f
     CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(f->'metadata') = 'object' THEN f->'metadata' ELSE '{}' END) m
     WHERE lakesoul.internal_column_key(m.key)
       AND m.value IS DISTINCT FROM (SELECT o->'metadata'->m.key
                                       FROM jsonb_array_elements(v_old_fields) o
                                      WHERE o->>'name' = f->>'name' AND jsonb_typeof(o->'metadata') = 'object'
                                      LIMIT 1)
     LIMIT 1;
    IF v_key IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied to set column metadata "%"', v_key USING ERRCODE = '42501',
            DETAIL = 'Only the LakeSoul server writes it, from the statement that owns it.';
    END IF;
    RETURN NEW;
END
$$;

-- guard_view_definition (trigger on lakesoul.view, BEFORE INSERT/UPDATE):
-- a view's definition is stored only by the server's CREATE VIEW and
-- renames, which resolve every name in it with the creator's rights.
CREATE OR REPLACE FUNCTION lakesoul.guard_view_definition()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
    IF NOT lakesoul.server_session() THEN
        RAISE EXCEPTION 'permission denied for table view' USING ERRCODE = '42501',
            DETAIL = 'Views are stored by the LakeSoul server''s CREATE VIEW.';
    END IF;
    RETURN NEW;
END
$$;

-- guard_namespace_name (trigger on namespace, BEFORE INSERT/UPDATE): no
-- namespace is called public, which PostgreSQL's face already calls the
-- default namespace (and stored definitions name it so).
CREATE OR REPLACE FUNCTION lakesoul.guard_namespace_name()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
    IF NEW.namespace = 'public' AND (TG_OP = 'INSERT' OR OLD.namespace IS DISTINCT FROM 'public') THEN
        RAISE EXCEPTION 'schema "public" already exists' USING ERRCODE = '42P06',
            HINT = 'LakeSoul''s namespace "default" is PostgreSQL''s schema public.';
    END IF;
    RETURN NEW;
END
$$;

-- grant_namespace grants (p_grant) or revokes CREATE on namespace
-- p_namespace to role p_grantee ('public': PUBLIC), as the caller: only
-- superusers and the catalog's owner may, as only a schema's owner grants
-- on it (42501). A workspace's namespace is its members' (0A000).
CREATE OR REPLACE FUNCTION lakesoul.grant_namespace(p_namespace text, p_grantee text, p_grant boolean)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
DECLARE
    v_ns     text := lakesoul.seq_namespace(p_namespace);
    v_domain text;
    v_role   oid := 0;
BEGIN
    SELECT coalesce(n.domain, 'public') INTO v_domain FROM public.namespace n WHERE n.namespace = v_ns;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    IF NOT (coalesce((SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user), false)
            OR pg_has_role(current_user, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'lakesoul'), 'USAGE')) THEN
        RAISE EXCEPTION 'permission denied for schema %', p_namespace USING ERRCODE = '42501';
    END IF;
    IF v_domain NOT IN ('public', 'lake-public') THEN
        RAISE EXCEPTION 'GRANT/REVOKE ON SCHEMA % is not supported: it belongs to workspace %', p_namespace, v_domain
            USING ERRCODE = '0A000', HINT = format('Its workspace''s members create there: GRANT %I TO role.', v_domain);
    END IF;
    IF p_grantee <> 'public' THEN
        SELECT r.oid INTO v_role FROM pg_roles r WHERE r.rolname = p_grantee;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'role "%" does not exist', p_grantee USING ERRCODE = '42704';
        END IF;
    END IF;
    IF p_grant THEN
        INSERT INTO lakesoul.namespace_grant (namespace, grantee) VALUES (v_ns, v_role) ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM lakesoul.namespace_grant WHERE namespace = v_ns AND grantee = v_role;
    END IF;
END
$$;
