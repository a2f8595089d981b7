-- Who may call the catalog's functions. Applied after every other script, on
-- every start.
--
-- PostgreSQL lets PUBLIC execute every function it creates, and CREATE OR
-- REPLACE keeps whatever a function had. Here every function, procedure and
-- aggregate of the schemas LakeSoul-Go owns (lakesoul, lakesoul_pg,
-- lakesoul_seq, public; extensions' members aside) is taken from PUBLIC and
-- from the workspace roles — the base roles every workspace role is a member
-- of — and given back only where a list below names it. A function a script
-- adds is thus the catalog owner's (and superusers') alone until it is
-- listed, whatever it does. Grants to other roles (an operator's) are left
-- as they are. catalog/privileges_test.go holds the same decisions as its
-- table of expected grants and enumerates every function of the database
-- against it.
--
--   * PUBLIC: the pg_catalog emulation (every function of lakesoul_pg: the
--     helpers of its views, which any login may read, all SECURITY INVOKER)
--     and the row-level-security predicates the policies call.
--   * Workspace roles: what the server calls as the session's role
--     (catalog.Catalog.As) and what those functions call in turn. All are
--     SECURITY INVOKER, so they can do no more than the caller's own grants
--     and policies allow, except the SECURITY DEFINER ones listed in the
--     test, each of which checks its caller (xact_lock refuses every login
--     but the server's, write_intent_consume needs the intent's secret
--     token, the sequence and enum helpers act on registry rows, the access
--     key functions on the caller's own keys).
--   * Nobody else: the workers' functions (compaction queue and commit,
--     lifecycle, write intents' bookkeeping, CDC, commit notices),
--     administration (create_workspace, create_user: superusers, who need no
--     grant) and trigger functions (a trigger fires without EXECUTE).
DO $$
DECLARE
    v_public text[] := ARRAY['domain_visible', 'domain_admin'];
    v_workspace text[] := ARRAY[
        'add_primary_key', 'add_primary_key_emptying', 'alter_table', 'change_commits', 'change_files', 'check_existed', 'check_partition',
        'cleanup', 'cleanup_files', 'cleanup_partition', 'commit', 'commit_lock_rows', 'commit_many', 'commit_one_partition',
        'compact_targets', 'create_access_key', 'create_enum', 'create_namespace', 'create_sequence',
        'create_table', 'create_view', 'default_workspace', 'drop_enum', 'drop_namespace', 'drop_partition',
        'drop_sequence', 'drop_sequence_object', 'drop_table', 'drop_table_by_id', 'drop_table_sequences',
        'drop_view', 'enum_add_value', 'enum_check_former', 'enum_check_label', 'enum_dependents',
        'enum_rename_value', 'enum_type_oid', 'epoch_ms', 'free_table_dir', 'history', 'import_target',
        'live_files', 'live_files_cached', 'live_files_matching', 'lock_rows', 'ms_timestamptz', 'partition_changes',
        'partition_desc_terms', 'partition_versions',
        'partition_lock', 'record_table_dir', 'relation_name_taken', 'rename_column', 'rename_namespace', 'rename_table',
        'rename_view', 'replay', 'resolve_table', 'revoke_access_key', 'rollback', 'rollback_partition',
        'seq_id', 'seq_namespace', 'seq_nextval', 'seq_setval', 'sequence_object', 'set_view_definition',
        'snapshot_files', 'table_domain', 'table_label', 'truncate', 'write_intent_consume',
        'write_intent_verify', 'xact_lock',
        -- 170_namespace_rights.sql: the triggers' predicates (as the writer)
        -- and GRANT … ON SCHEMA, which checks its caller.
        'face_namespace', 'grant_namespace', 'internal_column_key', 'internal_property', 'may_create',
        'server_session'];
    r record;
BEGIN
    FOR r IN
        SELECT p.oid::regprocedure AS f, n.nspname, p.proname
          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname IN ('lakesoul', 'lakesoul_pg', 'lakesoul_seq', 'public')
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                            WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC, base_super_admin_role, base_admin_role, base_user_role', r.f);
        IF r.nspname = 'lakesoul_pg' OR (r.nspname = 'lakesoul' AND r.proname = ANY (v_public)) THEN
            EXECUTE format('GRANT EXECUTE ON ROUTINE %s TO PUBLIC', r.f);
        ELSIF r.nspname = 'lakesoul' AND r.proname = ANY (v_workspace) THEN
            EXECUTE format('GRANT EXECUTE ON ROUTINE %s TO base_super_admin_role, base_admin_role, base_user_role', r.f);
        END IF;
    END LOOP;
END
$$;
