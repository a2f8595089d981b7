-- Every catalog object is closed by default. Workspace roles — the base
-- roles every workspace role is a member of, and through them every
-- workspace user, some of whom (LakeSoul's own clients) log in to the
-- catalog directly — reach exactly what the design grants them, and every
-- row they may write is under row-level security. What the grants of
-- migration 8 ("all tables in schema …") and PostgreSQL's defaults left
-- open is closed here; who may call which function is decided on every
-- start by sqlfuncs/990_privileges.sql. catalog/privileges_test.go
-- enumerates every object of the database against the design's table of
-- grants, so an object added later without a decision fails it.
--
--   * lakesoul_go_migrations is golang-migrate's bookkeeping: a role that
--     could write it could mark the catalog dirty and stop every server
--     from starting. The migrator's alone.
--   * discard_compressed_file_info names files for deletion. LakeSoul's
--     clients record their compactions' discarded inputs in it, so the
--     workspace roles keep their grants, under row-level security: a row
--     is visible and writable only while the table it names (by path) is a
--     table the role sees. Collection never trusts a row alone either
--     (compaction/lifecycle.go: only files inside the named table's own
--     directory that no commit of it mentions are deleted).
--   * The asset views cannot be written (they aggregate); SELECT stays.
--   * compaction_job is the workers' queue: a role that could write a
--     job's outputs could make a worker delete them. Filled by a trigger
--     (SECURITY DEFINER) and the owner's functions only.
--   * SECURITY DEFINER functions name pg_temp last in their search_path,
--     so no temporary object of the caller can stand in for a catalog
--     relation; the sqlfuncs ones are defined so, these three are
--     migrations'.
--   * Nobody but the owner creates objects in schema public (PostgreSQL 15's
--     default, not older servers').
--   * A workspace's <ws>_users and <ws>_admins are members of <ws>, so a
--     user granted <ws>_users (the documented way to add a member) is a
--     member of the workspace for row-level security, sequence grants and
--     commit notices alike, and loses it with the REVOKE.

DO $$
BEGIN
    IF to_regclass('public.lakesoul_go_migrations') IS NOT NULL THEN
        REVOKE ALL ON public.lakesoul_go_migrations FROM PUBLIC, base_super_admin_role, base_admin_role, base_user_role;
    END IF;
END
$$;

ALTER TABLE public.discard_compressed_file_info ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS discard_compressed_file_info_table ON public.discard_compressed_file_info;
CREATE POLICY discard_compressed_file_info_table ON public.discard_compressed_file_info FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_path = discard_compressed_file_info.table_path))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_path = discard_compressed_file_info.table_path));

REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER
    ON lakesoul.partition_level_assets, lakesoul.table_level_assets,
       lakesoul.namespace_level_assets, lakesoul.domain_level_assets
  FROM PUBLIC, base_super_admin_role, base_admin_role, base_user_role;

REVOKE ALL ON lakesoul.compaction_job FROM PUBLIC, base_super_admin_role, base_admin_role, base_user_role;

ALTER FUNCTION lakesoul.register_partition() SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION lakesoul.compaction_enqueue() SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION lakesoul.compaction_table_dropped() SET search_path = pg_catalog, public, pg_temp;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- Workspaces created before this migration (roles are cluster-wide: another
-- database of the cluster may have done this already).
DO $$
DECLARE
    v_ws text;
BEGIN
    FOR v_ws IN
        SELECT w.rolname
          FROM pg_catalog.pg_roles w
          JOIN pg_catalog.pg_roles u ON u.rolname = w.rolname || '_users'
          JOIN pg_catalog.pg_roles a ON a.rolname = w.rolname || '_admins'
         WHERE NOT w.rolcanlogin
           AND pg_catalog.pg_has_role(u.oid, 'base_user_role', 'member')
           AND pg_catalog.pg_has_role(a.oid, 'base_admin_role', 'member')
           AND NOT pg_catalog.pg_has_role(w.oid, u.oid, 'member')
           AND NOT pg_catalog.pg_has_role(w.oid, a.oid, 'member')
    LOOP
        EXECUTE format('GRANT %I TO %I, %I', v_ws, v_ws || '_users', v_ws || '_admins');
    END LOOP;
END
$$;
