-- Sequences of lake namespaces (CREATE SEQUENCE, SERIAL, GENERATED AS
-- IDENTITY; sqlfuncs/110_sequences.sql). Each is a PostgreSQL sequence of the
-- catalog, lakesoul_seq."s<id>", registered in lakesoul.sequence under its
-- namespace's domain.
--
-- Invariants:
--   * a registry row and its sequence object exist together: both are made
--     (lakesoul.create_sequence) and removed (lakesoul.drop_sequence) in one
--     transaction;
--   * a role sees, uses and drops the sequences of the domains it sees (row-
--     level security as on table_info), and a row's namespace is one of its
--     domain (restrictive policy): nextval runs as the session's role, and
--     PostgreSQL checks the grant on the object (USAGE, SELECT, UPDATE to
--     the domain's role, to PUBLIC for domain public);
--   * owner_table, when set, is the table_id whose column owns the sequence
--     (SERIAL, IDENTITY): DROP TABLE drops it.

CREATE SCHEMA IF NOT EXISTS lakesoul_seq;
REVOKE ALL ON SCHEMA lakesoul_seq FROM PUBLIC;
GRANT USAGE ON SCHEMA lakesoul_seq TO PUBLIC;

CREATE TABLE IF NOT EXISTS lakesoul.sequence (
    id          bigserial PRIMARY KEY,
    namespace   text NOT NULL,
    name        text NOT NULL,
    domain      text NOT NULL,
    owner_table text,
    UNIQUE (namespace, name)
);
ALTER TABLE lakesoul.sequence ENABLE ROW LEVEL SECURITY;
CREATE POLICY sequence_domain ON lakesoul.sequence FOR ALL
    USING (lakesoul.domain_visible(domain)) WITH CHECK (lakesoul.domain_visible(domain));
CREATE POLICY sequence_namespace ON lakesoul.sequence AS RESTRICTIVE FOR ALL USING (true)
    WITH CHECK (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = sequence.namespace AND n.domain = sequence.domain));
GRANT SELECT, INSERT, DELETE ON lakesoul.sequence TO base_super_admin_role, base_admin_role, base_user_role;
GRANT USAGE ON SEQUENCE lakesoul.sequence_id_seq TO base_super_admin_role, base_admin_role, base_user_role;
