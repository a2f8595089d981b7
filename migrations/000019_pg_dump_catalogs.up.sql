-- What pg_dump reads of the catalogs beyond migration 3's views.
--
-- pg_rewrite: pg_dump reads every rule and fails when a rule's relation is not
-- one it knows; like the other emulation views it keeps the real rows of
-- namespaces pg_catalog and information_schema only (lake views have no rule:
-- their definition is lakesoul.view's text, which pg_get_viewdef answers).
CREATE OR REPLACE VIEW lakesoul_pg.pg_rewrite WITH (security_invoker = true) AS
SELECT r.* FROM pg_catalog.pg_rewrite r
 WHERE r.ev_class IN (SELECT c.oid FROM pg_catalog.pg_class c
                       WHERE c.relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace
                                                 WHERE nspname IN ('pg_catalog', 'information_schema')));
GRANT SELECT ON lakesoul_pg.pg_rewrite TO PUBLIC;
