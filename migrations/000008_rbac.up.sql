-- Workspaces and row-level security, LakeSoul's RBAC model (its
-- meta_rbac_init.sql semantics): a workspace ("domain") is a group role <ws>
-- with <ws>_admins and <ws>_users; catalog rows carry the domain they belong
-- to, and a role sees a row when the domain is public / lake-public, is the
-- role itself, or is a role it is a member of. Superusers (the admin role
-- lakesoul) bypass RLS. Later migrations that add tables must grant the base
-- roles what they need.

ALTER TABLE public.namespace ADD COLUMN IF NOT EXISTS creator text DEFAULT current_user;
ALTER TABLE public.table_info ADD COLUMN IF NOT EXISTS creator text DEFAULT current_user;

CREATE INDEX IF NOT EXISTS namespace_domain_index ON public.namespace (domain);
CREATE INDEX IF NOT EXISTS table_info_domain_index ON public.table_info (domain);
CREATE INDEX IF NOT EXISTS table_name_id_domain_index ON public.table_name_id (domain);
CREATE INDEX IF NOT EXISTS table_path_id_domain_index ON public.table_path_id (domain);
CREATE INDEX IF NOT EXISTS data_commit_info_domain_index ON public.data_commit_info (domain);
CREATE INDEX IF NOT EXISTS partition_info_domain_index ON public.partition_info (domain);

-- Roles are cluster-wide: another database of the cluster may have created
-- them already, possibly at this very moment.
DO $$
DECLARE
    r text[];
BEGIN
    FOREACH r SLICE 1 IN ARRAY ARRAY[['base_super_admin_role', 'NOLOGIN BYPASSRLS CREATEROLE'],
                                     ['base_admin_role', 'NOLOGIN'], ['base_user_role', 'NOLOGIN']] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r[1]) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I %s', r[1], r[2]);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
        END IF;
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA public, lakesoul, lakesoul_pg TO base_super_admin_role, base_admin_role, base_user_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO base_super_admin_role, base_admin_role, base_user_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA lakesoul TO base_super_admin_role, base_admin_role, base_user_role;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public, lakesoul TO base_super_admin_role, base_admin_role, base_user_role;
GRANT SELECT ON ALL TABLES IN SCHEMA lakesoul_pg TO base_super_admin_role, base_admin_role, base_user_role;
REVOKE INSERT, UPDATE, DELETE ON public.global_config FROM base_admin_role, base_user_role;
REVOKE INSERT, UPDATE, DELETE ON public.namespace FROM base_user_role;

-- domain_visible is LakeSoul's visibility predicate V(domain).
CREATE OR REPLACE FUNCTION lakesoul.domain_visible(p_domain text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog AS $$
    SELECT p_domain IN ('public', 'lake-public')
        OR p_domain = current_user
        OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = p_domain AND pg_has_role(current_user, r.oid, 'member'))
$$;

-- domain_admin: may the current role create or drop namespaces of p_domain?
CREATE OR REPLACE FUNCTION lakesoul.domain_admin(p_domain text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog AS $$
    SELECT EXISTS (SELECT 1 FROM pg_roles r
                    WHERE r.rolname = p_domain || '_admins' AND pg_has_role(current_user, r.oid, 'member'))
$$;

ALTER TABLE public.namespace ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS namespace_select ON public.namespace;
DROP POLICY IF EXISTS namespace_insert ON public.namespace;
DROP POLICY IF EXISTS namespace_update ON public.namespace;
DROP POLICY IF EXISTS namespace_delete ON public.namespace;
CREATE POLICY namespace_select ON public.namespace FOR SELECT USING (lakesoul.domain_visible(domain));
CREATE POLICY namespace_insert ON public.namespace FOR INSERT WITH CHECK (lakesoul.domain_admin(domain));
CREATE POLICY namespace_update ON public.namespace FOR UPDATE USING (lakesoul.domain_admin(domain));
CREATE POLICY namespace_delete ON public.namespace FOR DELETE USING (lakesoul.domain_admin(domain));

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['table_info', 'table_name_id', 'table_path_id', 'data_commit_info', 'partition_info'] LOOP
        EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('DROP POLICY IF EXISTS %I ON public.%I', t || '_domain', t);
        EXECUTE format('CREATE POLICY %I ON public.%I FOR ALL USING (lakesoul.domain_visible(domain)) WITH CHECK (lakesoul.domain_visible(domain))',
                       t || '_domain', t);
    END LOOP;
END
$$;

-- The partition registry (migration 6) lists partition values: visible only
-- for tables the role can see.
ALTER TABLE lakesoul.partition_registry ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS partition_registry_visible ON lakesoul.partition_registry;
CREATE POLICY partition_registry_visible ON lakesoul.partition_registry FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = partition_registry.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = partition_registry.table_id));
