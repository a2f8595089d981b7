-- The key that signs Flight SQL tickets of parallel scans (package flightsql):
-- a ticket one server issues names a unit of work (table, partition, bucket,
-- files) and the user it is for, and any server of the same catalog serves
-- it after checking the signature with this key. Created once, random (two
-- version-4 UUIDs: 244 random bits), readable by the catalog owner only, as
-- lakesoul.access_key is: no privilege for PUBLIC or the base roles, and
-- row-level security on without a policy.

CREATE TABLE IF NOT EXISTS lakesoul.flight_ticket_key (
    id  int PRIMARY KEY CHECK (id = 1),
    key bytea NOT NULL
);
INSERT INTO lakesoul.flight_ticket_key (id, key)
    VALUES (1, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()))
    ON CONFLICT (id) DO NOTHING;

REVOKE ALL ON lakesoul.flight_ticket_key FROM PUBLIC;
REVOKE ALL ON lakesoul.flight_ticket_key FROM base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.flight_ticket_key ENABLE ROW LEVEL SECURITY;
