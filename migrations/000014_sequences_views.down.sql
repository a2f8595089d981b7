-- Migration 3's catalog views, without lake views.
CREATE OR REPLACE VIEW lakesoul_pg.pg_views WITH (security_invoker = true) AS
SELECT v.* FROM pg_catalog.pg_views v
 WHERE v.schemaname IN ('pg_catalog', 'information_schema');

CREATE OR REPLACE VIEW lakesoul_pg.info_views WITH (security_invoker = true) AS
SELECT v.* FROM information_schema.views v
 WHERE v.table_schema IN ('pg_catalog', 'information_schema');

CREATE OR REPLACE VIEW lakesoul_pg.info_tables WITH (security_invoker = true) AS
SELECT t.* FROM information_schema.tables t
 WHERE t.table_schema IN ('pg_catalog', 'information_schema')
UNION ALL
SELECT pg_catalog.current_database()::information_schema.sql_identifier,
       l.nspname::information_schema.sql_identifier,
       l.relname::information_schema.sql_identifier,
       'BASE TABLE'::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.character_data,
       NULL::information_schema.sql_identifier, NULL::information_schema.sql_identifier,
       NULL::information_schema.sql_identifier,
       'YES'::information_schema.yes_or_no, 'NO'::information_schema.yes_or_no,
       NULL::information_schema.character_data
  FROM lakesoul_pg.lake_table l;

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
       r.relnatts, 0::int2 AS relchecks, false AS relhasrules, false AS relhastriggers,
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
          FROM lakesoul_pg.lake_index i) r;

DROP VIEW IF EXISTS lakesoul_pg.lake_view;
DROP FUNCTION IF EXISTS lakesoul.create_sequence(text, text, bigint, bigint, bigint, bigint, boolean, text);
DROP FUNCTION IF EXISTS lakesoul.sequence_object(bigint, bigint, bigint, bigint, bigint, boolean);
DROP FUNCTION IF EXISTS lakesoul.drop_sequence(text, text);
DROP FUNCTION IF EXISTS lakesoul.drop_table_sequences(text);
DROP FUNCTION IF EXISTS lakesoul.drop_sequence_object(bigint);
DROP FUNCTION IF EXISTS lakesoul.seq_id(text, text);
DROP FUNCTION IF EXISTS lakesoul.seq_nextval(text, text);
DROP FUNCTION IF EXISTS lakesoul.seq_setval(text, text, bigint, boolean);
DROP FUNCTION IF EXISTS lakesoul.seq_namespace(text);
DROP TABLE IF EXISTS lakesoul.sequence;
DROP SCHEMA IF EXISTS lakesoul_seq CASCADE;
DROP FUNCTION IF EXISTS lakesoul.create_view(text, text, text, text[], oid[], int[], boolean);
DROP FUNCTION IF EXISTS lakesoul.drop_view(text, text);
DROP TABLE IF EXISTS lakesoul.view;
