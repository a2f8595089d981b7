-- The commit protocol's advisory locks (partition locks, namespace locks).
--
-- Only the catalog owner may call pg_advisory_* (migration 10): SQL a user
-- wrote runs on the user's own catalog login and so can take no lock that
-- would block other workspaces' commits. The server's statements run as the
-- session's role on the owner's login; they lock through these wrappers,
-- which run as their owner (SECURITY DEFINER) and refuse any session whose
-- login is not the owner's (or a superuser's).

CREATE OR REPLACE FUNCTION lakesoul.xact_lock(p_key bigint)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog AS $$
BEGIN
    IF session_user <> current_user AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) THEN
        RAISE EXCEPTION 'permission denied: only the LakeSoul server takes commit locks' USING ERRCODE = '42501';
    END IF;
    PERFORM pg_advisory_xact_lock(p_key);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul.xact_lock_shared(p_key bigint)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog AS $$
BEGIN
    IF session_user <> current_user AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) THEN
        RAISE EXCEPTION 'permission denied: only the LakeSoul server takes commit locks' USING ERRCODE = '42501';
    END IF;
    PERFORM pg_advisory_xact_lock_shared(p_key);
END
$$;
