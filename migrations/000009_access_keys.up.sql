-- Access keys of the S3 proxy (`lakesoul s3proxy`, `serve --s3proxy-listen`):
-- an S3 client signs its requests (AWS SigV4) with a key created by
-- lakesoul.create_access_key(); the proxy acts as the key's role.
--
-- The secret is stored as issued, not hashed: SigV4 is an HMAC keyed with
-- the secret itself, so the verifier needs it (a hash would not do, and an
-- encryption key kept in this database would protect nothing). Instead only
-- the catalog owner can read the table: no privilege for PUBLIC or the base
-- roles, and row-level security on with no policy, so a later broad GRANT
-- still shows no rows to anyone but the owner and superusers. Users create
-- and revoke their own keys through SECURITY DEFINER functions
-- (sqlfuncs/080_access_keys.sql) and list them, without secrets, in the view
-- lakesoul.access_keys.

CREATE TABLE IF NOT EXISTS lakesoul.access_key (
    access_key_id     text PRIMARY KEY,
    secret_access_key text NOT NULL,
    role_name         text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    revoked_at        timestamptz
);
CREATE INDEX IF NOT EXISTS access_key_role_index ON lakesoul.access_key (role_name);

REVOKE ALL ON lakesoul.access_key FROM PUBLIC;
REVOKE ALL ON lakesoul.access_key FROM base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.access_key ENABLE ROW LEVEL SECURITY;

-- The caller's own keys (all keys for superusers), without the secrets.
CREATE OR REPLACE VIEW lakesoul.access_keys WITH (security_barrier) AS
    SELECT access_key_id, role_name, created_at, revoked_at
      FROM lakesoul.access_key
     WHERE role_name = current_user
        OR (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
GRANT SELECT ON lakesoul.access_keys TO PUBLIC;
