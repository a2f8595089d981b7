-- Back to the grants of migrations 6, 7, 8 and 10. Schema public stays
-- closed to PUBLIC's CREATE (PostgreSQL 15's default; reopening it would
-- reopen the hole, not restore a feature).

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
    LOOP
        EXECUTE format('REVOKE %I FROM %I, %I', v_ws, v_ws || '_users', v_ws || '_admins');
    END LOOP;
END
$$;

ALTER FUNCTION lakesoul.register_partition() SET search_path = pg_catalog, public;
ALTER FUNCTION lakesoul.compaction_enqueue() SET search_path = pg_catalog, public;
ALTER FUNCTION lakesoul.compaction_table_dropped() SET search_path = pg_catalog, public;

GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.compaction_job TO base_super_admin_role, base_admin_role, base_user_role;

GRANT SELECT, INSERT, UPDATE, DELETE
    ON lakesoul.partition_level_assets, lakesoul.table_level_assets,
       lakesoul.namespace_level_assets, lakesoul.domain_level_assets
    TO base_super_admin_role, base_admin_role, base_user_role;

DROP POLICY IF EXISTS discard_compressed_file_info_table ON public.discard_compressed_file_info;
ALTER TABLE public.discard_compressed_file_info DISABLE ROW LEVEL SECURITY;

DO $$
BEGIN
    IF to_regclass('public.lakesoul_go_migrations') IS NOT NULL THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON public.lakesoul_go_migrations TO base_super_admin_role, base_admin_role, base_user_role;
    END IF;
END
$$;
