-- User-written SQL reaches the catalog only on the user's own login (see
-- engine/catalogtx.go), so PostgreSQL's privileges are the whole guard. This
-- migration closes what those privileges left open:
--
--   * Advisory locks are the commit protocol's (partition and namespace
--     locks). Users may not take any: EXECUTE on the lock-taking functions is
--     revoked from PUBLIC and granted to the catalog owner only; the server's
--     own statements, which run as the session's role, take them through
--     lakesoul.xact_lock (sqlfuncs/005_locks.sql), which is
--     SECURITY DEFINER and refuses every login but the owner's.
--   * lakesoul.namespace_oid, table_oid, table_created and compaction_job
--     show a row only when its namespace or table is visible to the role
--     (row-level security, as for LakeSoul's own tables); compaction_task is
--     the workers' alone.
--   * The asset views read as the invoking role, so row-level security on
--     the tables they aggregate applies to them.
--   * A row a role writes must belong where its domain says: a table's rows
--     (table_info, table_name_id, table_path_id) to a namespace of the same
--     domain, a commit's rows (data_commit_info, partition_info) to a table of
--     the same domain. Without this a workspace user with a direct catalog
--     connection could file a table under another workspace's namespace or
--     add versions to another workspace's table (restrictive policies: they
--     narrow what LakeSoul's domain policies of migration 8 allow).

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
        EXECUTE format('REVOKE EXECUTE ON FUNCTION pg_catalog.%s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION pg_catalog.%s TO %I', f, current_user);
    END LOOP;
END
$$;

ALTER TABLE lakesoul.namespace_oid ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS namespace_oid_visible ON lakesoul.namespace_oid;
CREATE POLICY namespace_oid_visible ON lakesoul.namespace_oid FOR ALL
    USING (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = namespace_oid.namespace))
    WITH CHECK (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = namespace_oid.namespace));

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['table_oid', 'table_created', 'compaction_job'] LOOP
        EXECUTE format('ALTER TABLE lakesoul.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('DROP POLICY IF EXISTS %I ON lakesoul.%I', t || '_visible', t);
        EXECUTE format('CREATE POLICY %I ON lakesoul.%I FOR ALL '
                       'USING (EXISTS (SELECT 1 FROM public.table_info i WHERE i.table_id = %I.table_id)) '
                       'WITH CHECK (EXISTS (SELECT 1 FROM public.table_info i WHERE i.table_id = %I.table_id))',
                       t || '_visible', t, t, t);
    END LOOP;
END
$$;

ALTER TABLE lakesoul.compaction_task ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON lakesoul.compaction_task FROM base_super_admin_role, base_admin_role, base_user_role;

ALTER VIEW lakesoul.partition_level_assets SET (security_invoker = true);
ALTER VIEW lakesoul.table_level_assets SET (security_invoker = true);
ALTER VIEW lakesoul.namespace_level_assets SET (security_invoker = true);
ALTER VIEW lakesoul.domain_level_assets SET (security_invoker = true);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['table_info', 'table_name_id', 'table_path_id'] LOOP
        EXECUTE format('DROP POLICY IF EXISTS %I ON public.%I', t || '_namespace_domain', t);
        EXECUTE format('CREATE POLICY %I ON public.%I AS RESTRICTIVE FOR ALL USING (true) '
                       'WITH CHECK (EXISTS (SELECT 1 FROM public.namespace n '
                       'WHERE n.namespace = %I.table_namespace AND n.domain = %I.domain))',
                       t || '_namespace_domain', t, t, t);
    END LOOP;
    FOREACH t IN ARRAY ARRAY['data_commit_info', 'partition_info'] LOOP
        EXECUTE format('DROP POLICY IF EXISTS %I ON public.%I', t || '_table_domain', t);
        EXECUTE format('CREATE POLICY %I ON public.%I AS RESTRICTIVE FOR ALL USING (true) '
                       'WITH CHECK (EXISTS (SELECT 1 FROM public.table_info i '
                       'WHERE i.table_id = %I.table_id AND i.domain = %I.domain))',
                       t || '_table_domain', t, t, t);
    END LOOP;
END
$$;
