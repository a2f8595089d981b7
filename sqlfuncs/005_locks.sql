-- The commit protocol's advisory locks (partition locks, namespace locks).
--
-- Only the catalog owner may call pg_advisory_* (migration 10): SQL a user
-- wrote runs on the user's own catalog login and so can take no lock that
-- would block other workspaces' commits. The server's statements run as the
-- session's role on the owner's login; they lock through this wrapper, which
-- runs as its owner (SECURITY DEFINER) and refuses any session whose login
-- is not the owner's (or a superuser's). p_shared takes the lock in shared
-- mode (create_table against drop_namespace).

DROP FUNCTION IF EXISTS lakesoul.xact_lock_shared(bigint);
DROP FUNCTION IF EXISTS lakesoul.xact_lock(bigint);

CREATE OR REPLACE FUNCTION lakesoul.xact_lock(p_key bigint, p_shared boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF session_user <> current_user AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) THEN
        RAISE EXCEPTION 'permission denied: only the LakeSoul server takes commit locks' USING ERRCODE = '42501';
    END IF;
    IF p_shared THEN
        PERFORM pg_advisory_xact_lock_shared(p_key);
    ELSE
        PERFORM pg_advisory_xact_lock(p_key);
    END IF;
END
$$;
