-- Access keys of the S3 proxy (table lakesoul.access_key, migration 9).
--
-- Both functions are SECURITY DEFINER (the table is readable and writable by
-- the catalog owner only), so current_user inside them is the owner. The
-- role a key is for is the caller's: the role set for the transaction (SET
-- ROLE, or set_config('role', …) as LakeSoul-Go's engine does for a session's
-- catalog work), else the login role. Neither can be a role the session is not
-- allowed to act as, so a user gets keys for itself only.

CREATE OR REPLACE FUNCTION lakesoul.create_access_key()
RETURNS TABLE (access_key_id text, secret_access_key text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_role text := CASE WHEN current_setting('role') = 'none' THEN session_user::text
                        ELSE current_setting('role') END;
    v_id text;
    v_secret text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role) THEN
        RAISE EXCEPTION 'role "%" does not exist', v_role USING ERRCODE = '42704';
    END IF;
    -- A key that sees everything only for a session logged in as that role
    -- itself, never through a role switched to: defence in depth should a
    -- client manage to switch roles.
    IF v_role <> session_user::text
       AND (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = v_role) THEN
        RAISE EXCEPTION 'access keys of role "%" can only be created by a session logged in as it', v_role
            USING ERRCODE = '42501';
    END IF;
    -- 64 random bits for the id, 256 (of which 244 random) for the secret;
    -- gen_random_uuid draws from the server's strong random source.
    LOOP
        v_id := 'LSAK' || upper(substr(encode(sha256(uuid_send(gen_random_uuid())), 'hex'), 1, 16));
        v_secret := translate(rtrim(encode(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())),
                                           'base64'), '='), '+/', 'AZ');
        BEGIN
            INSERT INTO lakesoul.access_key (access_key_id, secret_access_key, role_name)
            VALUES (v_id, v_secret, v_role);
            EXIT;
        EXCEPTION WHEN unique_violation THEN
            NULL; -- an id drawn twice: draw again
        END;
    END LOOP;
    RETURN QUERY SELECT v_id, v_secret;
END
$$;

-- revoke_access_key revokes one of the caller's keys (administrators: any
-- key). True when it revoked the key, false when the key was revoked already;
-- 42704 for a key that does not exist or is not the caller's.
CREATE OR REPLACE FUNCTION lakesoul.revoke_access_key(p_access_key_id text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_role text := CASE WHEN current_setting('role') = 'none' THEN session_user::text
                        ELSE current_setting('role') END;
    v_admin boolean := coalesce((SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = v_role), false);
    v_revoked timestamptz;
BEGIN
    SELECT k.revoked_at INTO v_revoked
      FROM lakesoul.access_key k
     WHERE k.access_key_id = p_access_key_id AND (k.role_name = v_role OR v_admin)
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'access key "%" does not exist', p_access_key_id USING ERRCODE = '42704';
    END IF;
    IF v_revoked IS NOT NULL THEN
        RETURN false;
    END IF;
    UPDATE lakesoul.access_key SET revoked_at = now() WHERE access_key_id = p_access_key_id;
    RETURN true;
END
$$;

