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

-- Views of lake namespaces (CREATE [OR REPLACE] VIEW, engine/view.go): the
-- definition is PostgreSQL query text, expanded by the engine when a
-- statement names the view, with the querying role's rights on what it
-- reads. Row-level security as for sequences: a role sees, replaces and
-- drops the views of the domains it sees.
CREATE TABLE IF NOT EXISTS lakesoul.view (
    namespace  text NOT NULL,
    name       text NOT NULL,
    domain     text NOT NULL,
    definition text NOT NULL,
    -- the view's column names and PostgreSQL types (OID, typmod), for the
    -- pg_catalog emulation
    columns    text[] NOT NULL,
    types      oid[] NOT NULL,
    typmods    int[] NOT NULL,
    oid        bigint NOT NULL UNIQUE DEFAULT nextval('lakesoul.object_oid_seq'),
    PRIMARY KEY (namespace, name)
);
ALTER TABLE lakesoul.view ENABLE ROW LEVEL SECURITY;
CREATE POLICY view_domain ON lakesoul.view FOR ALL
    USING (lakesoul.domain_visible(domain)) WITH CHECK (lakesoul.domain_visible(domain));
CREATE POLICY view_namespace ON lakesoul.view AS RESTRICTIVE FOR ALL USING (true)
    WITH CHECK (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = view.namespace AND n.domain = view.domain));
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.view TO base_super_admin_role, base_admin_role, base_user_role;

-- The pg_catalog emulation shows views: pg_views, information_schema.views
-- and .tables (table_type VIEW), pg_class (relkind v, for psql's \dv) and
-- pg_attribute.
CREATE OR REPLACE VIEW lakesoul_pg.lake_view WITH (security_invoker = true) AS
SELECT v.oid::oid AS oid, v.name::name AS relname, no.oid::oid AS relnamespace, v.namespace::name AS nspname,
       v.definition, v.columns, v.types, v.typmods
  FROM lakesoul.view v
  JOIN lakesoul.namespace_oid no ON no.namespace = v.namespace;

CREATE OR REPLACE VIEW lakesoul_pg.pg_views WITH (security_invoker = true) AS
SELECT v.* FROM pg_catalog.pg_views v
 WHERE v.schemaname IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT l.nspname, l.relname, pg_catalog.pg_get_userbyid(lakesoul_pg.lake_owner()), l.definition
  FROM lakesoul_pg.lake_view l;

CREATE OR REPLACE VIEW lakesoul_pg.info_views WITH (security_invoker = true) AS
SELECT v.* FROM information_schema.views v
 WHERE v.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       l.nspname::information_schema.sql_identifier, l.relname::information_schema.sql_identifier,
       l.definition::information_schema.character_data, 'NONE'::information_schema.character_data,
       'NO'::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       'NO'::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       'NO'::information_schema.yes_or_no
  FROM lakesoul_pg.lake_view l;

CREATE OR REPLACE VIEW lakesoul_pg.info_tables WITH (security_invoker = true) AS
SELECT t.* FROM information_schema.tables t
 WHERE t.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       l.nspname::information_schema.sql_identifier,
       l.relname::information_schema.sql_identifier,
       l.kind::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.sql_identifier,
       NULL::information_schema.sql_identifier,
       l.insertable::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       NULL::information_schema.character_data
  FROM (SELECT nspname, relname, 'BASE TABLE' AS kind, 'YES' AS insertable FROM lakesoul_pg.lake_table
        UNION ALL
        SELECT nspname, relname, 'VIEW', 'NO' FROM lakesoul_pg.lake_view) l;

CREATE OR REPLACE VIEW lakesoul_pg.pg_class WITH (security_invoker = true) AS
SELECT c.* FROM pg_catalog.pg_class c
 WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                           WHERE nspname IN ('pg_catalog', 'information_schema'))
UNION ALL
SELECT r.oid, r.relname, r.relnamespace,
       0::oid AS reltype, 0::oid AS reloftype, lakesoul_pg.lake_owner() AS relowner,
       r.relam, 0::oid AS relfilenode, 0::oid AS reltablespace,
       0 AS relpages, -1::real AS reltuples, 0 AS relallvisible, 0::oid AS reltoastrelid,
       r.relhasindex, false AS relisshared, 'p'::"char" AS relpersistence, r.relkind,
       r.relnatts, 0::int2 AS relchecks, r.relkind = 'v' AS relhasrules, false AS relhastriggers,
       false AS relhassubclass, false AS relrowsecurity, false AS relforcerowsecurity,
       true AS relispopulated, r.relreplident, false AS relispartition, 0::oid AS relrewrite,
       '0'::xid AS relfrozenxid, '0'::xid AS relminmxid,
       NULL::aclitem[] AS relacl, NULL::text[] AS reloptions, NULL::pg_node_tree AS relpartbound
  FROM (SELECT t.oid, t.relname, t.relnamespace, 0::oid AS relam,
               cardinality(t.pkattnums) > 0 AS relhasindex, 'r'::"char" AS relkind,
               t.relnatts, 'd'::"char" AS relreplident
          FROM lakesoul_pg.lake_table t
        UNION ALL
        SELECT i.indexrelid, i.relname, i.relnamespace, 403::oid, false, 'i'::"char",
               cardinality(i.pkattnums)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_index i
        UNION ALL
        SELECT v.oid, v.relname, v.relnamespace, 0::oid, false, 'v'::"char",
               cardinality(v.columns)::int2, 'n'::"char"
          FROM lakesoul_pg.lake_view v) r;
-- As migration 3's catalog views: readable by every role, rows by RLS.
GRANT SELECT ON lakesoul_pg.lake_view TO PUBLIC;
GRANT SELECT ON lakesoul.view TO PUBLIC;
