DROP POLICY IF EXISTS table_info_namespace_domain ON public.table_info;
DROP POLICY IF EXISTS table_name_id_namespace_domain ON public.table_name_id;
DROP POLICY IF EXISTS table_path_id_namespace_domain ON public.table_path_id;
DROP POLICY IF EXISTS data_commit_info_table_domain ON public.data_commit_info;
DROP POLICY IF EXISTS partition_info_table_domain ON public.partition_info;

ALTER VIEW lakesoul.partition_level_assets RESET (security_invoker);
ALTER VIEW lakesoul.table_level_assets RESET (security_invoker);
ALTER VIEW lakesoul.namespace_level_assets RESET (security_invoker);
ALTER VIEW lakesoul.domain_level_assets RESET (security_invoker);

GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.compaction_task TO base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.compaction_task DISABLE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS namespace_oid_visible ON lakesoul.namespace_oid;
ALTER TABLE lakesoul.namespace_oid DISABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS table_oid_visible ON lakesoul.table_oid;
ALTER TABLE lakesoul.table_oid DISABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS table_created_visible ON lakesoul.table_created;
ALTER TABLE lakesoul.table_created DISABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS compaction_job_visible ON lakesoul.compaction_job;
ALTER TABLE lakesoul.compaction_job DISABLE ROW LEVEL SECURITY;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'pg_advisory_lock(bigint)', 'pg_advisory_lock(integer, integer)',
        'pg_advisory_lock_shared(bigint)', 'pg_advisory_lock_shared(integer, integer)',
        'pg_advisory_xact_lock(bigint)', 'pg_advisory_xact_lock(integer, integer)',
        'pg_advisory_xact_lock_shared(bigint)', 'pg_advisory_xact_lock_shared(integer, integer)',
        'pg_try_advisory_lock(bigint)', 'pg_try_advisory_lock(integer, integer)',
        'pg_try_advisory_lock_shared(bigint)', 'pg_try_advisory_lock_shared(integer, integer)',
        'pg_try_advisory_xact_lock(bigint)', 'pg_try_advisory_xact_lock(integer, integer)',
        'pg_try_advisory_xact_lock_shared(bigint)', 'pg_try_advisory_xact_lock_shared(integer, integer)'] LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION pg_catalog.%s TO PUBLIC', f);
    END LOOP;
END
$$;
