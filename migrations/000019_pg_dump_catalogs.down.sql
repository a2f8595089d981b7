DROP VIEW IF EXISTS lakesoul_pg.pg_rewrite;
