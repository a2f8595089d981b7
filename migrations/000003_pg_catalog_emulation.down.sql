-- OIDs backfilled into lakesoul.namespace_oid / lakesoul.table_oid stay: they
-- are valid allocations and never reused.
DROP SCHEMA IF EXISTS lakesoul_pg CASCADE;
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I RESET jit', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    NULL;
END
$$;
