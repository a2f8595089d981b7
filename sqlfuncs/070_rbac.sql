-- Workspace administration (LakeSoul's meta_rbac_add_domain / add_user).
-- Callers must be allowed to create roles (the admin role lakesoul is a
-- superuser); identifiers and passwords are quoted with format(%I / %L).
-- A workspace is LakeSoul's three roles <ws>, <ws>_admins and <ws>_users,
-- the latter two members of <ws> (LakeSoul's script makes them unrelated;
-- create_user grants <ws> too, as LakeSoul's does).

CREATE OR REPLACE FUNCTION lakesoul.create_workspace(p_name text)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_role text;
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z_][a-z0-9_]{0,40}$' OR p_name IN ('public', 'lake-public') THEN
        RAISE EXCEPTION 'invalid workspace name %', coalesce(quote_literal(p_name), 'NULL')
            USING ERRCODE = '22023', HINT = 'lower-case letters, digits and _, starting with a letter';
    END IF;
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'only administrators may create workspaces' USING ERRCODE = '42501';
    END IF;
    FOREACH v_role IN ARRAY ARRAY[p_name, p_name || '_admins', p_name || '_users'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN INHERIT', v_role);
        END IF;
    END LOOP;
    EXECUTE format('GRANT base_admin_role TO %I', p_name || '_admins');
    EXECUTE format('GRANT base_user_role TO %I', p_name || '_users');
    -- Members of <ws>_users or <ws>_admins are members of the workspace
    -- itself: GRANT <ws>_users TO bob is all it takes to add bob.
    EXECUTE format('GRANT %I TO %I, %I', p_name, p_name || '_users', p_name || '_admins');
    RETURN p_name;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul.create_user(p_name text, p_password text, p_workspace text, admin boolean DEFAULT false)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    IF p_name IS NULL OR p_name !~ '^[a-z_][a-z0-9_]{0,62}$' THEN
        RAISE EXCEPTION 'invalid user name %', coalesce(quote_literal(p_name), 'NULL') USING ERRCODE = '22023';
    END IF;
    IF p_password IS NULL OR length(p_password) < 1 THEN
        RAISE EXCEPTION 'a password is required' USING ERRCODE = '22023';
    END IF;
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'only administrators may create users' USING ERRCODE = '42501';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_workspace || '_users') THEN
        RAISE EXCEPTION 'workspace "%" does not exist', p_workspace USING ERRCODE = '42704';
    END IF;
    SET LOCAL password_encryption = 'scram-sha-256';
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_name) THEN
        EXECUTE format('ALTER ROLE %I LOGIN PASSWORD %L', p_name, p_password);
    ELSE
        EXECUTE format('CREATE ROLE %I LOGIN INHERIT PASSWORD %L', p_name, p_password);
    END IF;
    EXECUTE format('GRANT %I TO %I', p_workspace, p_name);
    IF admin THEN
        EXECUTE format('GRANT %I TO %I', p_workspace || '_admins', p_name);
    ELSE
        EXECUTE format('GRANT %I TO %I', p_workspace || '_users', p_name);
    END IF;
    RETURN p_name;
END
$$;

-- default_workspace is the workspace new namespaces of the current role go
-- to when the session names none: its only workspace, else public.
CREATE OR REPLACE FUNCTION lakesoul.default_workspace()
RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog AS $$
    SELECT CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN 'public'
                WHEN count(*) = 1 THEN min(ws) ELSE 'public' END
      FROM (SELECT DISTINCT left(r.rolname, length(r.rolname) - length('_users')) AS ws
              FROM pg_roles r
             WHERE r.rolname LIKE '%\_users' AND pg_has_role(current_user, r.oid, 'member')
             UNION
            SELECT DISTINCT left(r.rolname, length(r.rolname) - length('_admins'))
              FROM pg_roles r
             WHERE r.rolname LIKE '%\_admins' AND pg_has_role(current_user, r.oid, 'member')) w
$$;

-- lakesoul.tables (040) is recreated here on every start; it reads as the
-- invoking role (security_invoker), so row-level security decides its rows.
GRANT SELECT ON lakesoul.tables TO PUBLIC;
