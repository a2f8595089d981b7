DROP VIEW IF EXISTS lakesoul_pg.pg_rewrite;
DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_viewdef(oid);
DROP FUNCTION IF EXISTS lakesoul_pg.pg_get_viewdef(oid, anyelement);
