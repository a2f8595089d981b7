-- Subscriptions: whole-database CDC sync from a PostgreSQL publication or
-- MySQL/MariaDB databases into lake tables (package cdc,
-- sqlfuncs/100_cdc.sql).
--
-- Invariants:
--   * a subscription is applied by at most one worker at a time: a worker
--     claims it by setting claim_token and lease_until (lakesoul.cdc_claim,
--     FOR UPDATE SKIP LOCKED) and renews the lease; lakesoul.cdc_commit
--     refuses a token that is not the subscription's current one, so a
--     worker that lost its lease can never commit after another took over;
--   * position is the source position (a PostgreSQL LSN, a MySQL GTID set or
--     binlog file:offset) up to which the lake holds every change, stored by
--     lakesoul.cdc_commit in the same transaction as the data of those
--     changes: after any crash the sync resumes exactly there. NULL until the
--     initial copy committed;
--   * a lake table is the target of at most one subscription (unique
--     (namespace, table_name) of subscription_table).
--
-- The connection string holds the source's password: the table is readable
-- by the catalog owner only (no grants, row-level security on without
-- policies), as lakesoul.access_key; users read lakesoul.subscriptions,
-- which shows the source without secrets.

CREATE TABLE IF NOT EXISTS lakesoul.subscription (
    name               text PRIMARY KEY,
    kind               text NOT NULL CHECK (kind IN ('postgres', 'mysql')),
    connection         text NOT NULL,
    -- the connection without its password, for display
    source             text NOT NULL,
    publications       text[] NOT NULL,
    target_schema      text NOT NULL,
    hash_bucket_num    int NOT NULL,
    copy_data          boolean NOT NULL,
    enabled            boolean NOT NULL,
    commit_interval_ms bigint NOT NULL,
    -- the PostgreSQL replication slot (NULL for MySQL)
    slot_name          text,
    state              text NOT NULL DEFAULT 'copying' CHECK (state IN ('copying', 'streaming', 'error')),
    position           text,
    -- the newest source position the worker saw (for lag_bytes)
    source_position    text,
    -- commit time at the source of the newest change in the lake
    source_commit_at   timestamptz,
    last_commit_at     timestamptz,
    last_error         text,
    -- bumped by ALTER SUBSCRIPTION … REFRESH PUBLICATION / ENABLE: the
    -- worker restarts its run when it changes
    generation         int NOT NULL DEFAULT 0,
    created_by         text NOT NULL DEFAULT current_user,
    created_at         timestamptz NOT NULL DEFAULT now(),
    claimed_by         text,
    claim_token        uuid UNIQUE,
    lease_until        timestamptz
);

-- One row per source table of a subscription and its lake table.
CREATE TABLE IF NOT EXISTS lakesoul.subscription_table (
    subscription  text NOT NULL REFERENCES lakesoul.subscription (name) ON DELETE CASCADE,
    -- the source table: schema.table (PostgreSQL) or database.table (MySQL)
    source_table  text NOT NULL,
    namespace     text NOT NULL,
    table_name    text NOT NULL,
    -- the lake table, once created
    table_id      text,
    -- ready: applied; error: stopped (last_error), the others go on
    state         text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'error')),
    -- the source columns as the worker last applied them (JSON array)
    columns       jsonb,
    -- a table synced while the subscription streamed: changes at or before
    -- this position are in its copy (PostgreSQL tablesync rule)
    synced_at     text,
    last_error    text,
    PRIMARY KEY (subscription, source_table),
    UNIQUE (namespace, table_name)
);

REVOKE ALL ON lakesoul.subscription FROM PUBLIC;
REVOKE ALL ON lakesoul.subscription FROM base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.subscription ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON lakesoul.subscription_table FROM PUBLIC;
REVOKE ALL ON lakesoul.subscription_table FROM base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.subscription_table ENABLE ROW LEVEL SECURITY;

-- What users see: every subscription into a namespace they can see
-- (superusers: all), without the connection string. state is 'disabled'
-- for a disabled subscription; lag_bytes is the distance in WAL bytes from
-- the lake's position to the newest source position the worker saw
-- (PostgreSQL sources); lag_seconds is how old the newest source commit in
-- the lake is, 0 when the lake is at the source's position.
CREATE OR REPLACE VIEW lakesoul.subscriptions WITH (security_barrier) AS
    SELECT s.name,
           s.source,
           CASE WHEN NOT s.enabled THEN 'disabled' ELSE s.state END AS state,
           s.position,
           CASE WHEN s.kind = 'postgres' AND s.position IS NOT NULL AND s.source_position IS NOT NULL
                THEN greatest(s.source_position::pg_lsn - s.position::pg_lsn, 0)::bigint END AS lag_bytes,
           CASE WHEN s.position IS NULL THEN NULL
                WHEN s.position IS NOT DISTINCT FROM s.source_position OR s.source_commit_at IS NULL THEN 0::float8
                ELSE greatest(extract(epoch FROM now() - s.source_commit_at), 0)::float8 END AS lag_seconds,
           s.last_commit_at,
           ARRAY(SELECT t.namespace || '.' || t.table_name FROM lakesoul.subscription_table t
                  WHERE t.subscription = s.name ORDER BY 1) AS tables,
           coalesce(s.last_error,
                    (SELECT string_agg(t.namespace || '.' || t.table_name || ': ' || t.last_error, '; ' ORDER BY t.table_name)
                       FROM lakesoul.subscription_table t
                      WHERE t.subscription = s.name AND t.state = 'error')) AS last_error
      FROM lakesoul.subscription s
     WHERE (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
        OR EXISTS (SELECT 1 FROM public.namespace n
                    WHERE n.namespace = s.target_schema AND lakesoul.domain_visible(n.domain));
GRANT SELECT ON lakesoul.subscriptions TO PUBLIC;
