-- Schema "lakesoul" holds LakeSoul-Go's additions: its SQL functions (sqlfuncs/)
-- and catalog views. LakeSoul's own tables stay untouched in "public".
CREATE SCHEMA IF NOT EXISTS lakesoul;

-- Stable PostgreSQL-style OIDs for lake namespaces and tables, so pgwire clients
-- (psql \d, pgjdbc) can refer to them. Allocated from a sequence far above the
-- range real catalog objects use, never reused.
CREATE SEQUENCE IF NOT EXISTS lakesoul.object_oid_seq START WITH 1000000000 MAXVALUE 2147483647;

CREATE TABLE IF NOT EXISTS lakesoul.namespace_oid (
    namespace text PRIMARY KEY,
    oid       bigint NOT NULL UNIQUE DEFAULT nextval('lakesoul.object_oid_seq')
);

CREATE TABLE IF NOT EXISTS lakesoul.table_oid (
    table_id text PRIMARY KEY,
    oid      bigint NOT NULL UNIQUE DEFAULT nextval('lakesoul.object_oid_seq')
);
