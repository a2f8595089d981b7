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

-- pg_get_viewdef of a lake view is its stored definition (PostgreSQL query
-- text, engine/view.go), ending in a semicolon as the built-in's does;
-- pg_dump prints it as CREATE VIEW … AS <definition>. Other OIDs go to the
-- built-in.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_viewdef(p_oid oid, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    v_def text;
BEGIN
    IF p_oid::int8 >= 1000000000 THEN
        SELECT l.definition INTO v_def FROM lakesoul_pg.lake_view l WHERE l.oid = p_oid;
        IF FOUND THEN
            RETURN ' ' || rtrim(v_def, '; ') || ';';
        END IF;
    END IF;
    RETURN pg_catalog.pg_get_viewdef(p_oid, p_pretty);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_viewdef(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.pg_get_viewdef(p_oid, false)
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_viewdef(p_oid oid, p_wrap int4)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
    IF p_oid::int8 >= 1000000000 AND EXISTS (SELECT 1 FROM lakesoul_pg.lake_view l WHERE l.oid = p_oid) THEN
        RETURN lakesoul_pg.pg_get_viewdef(p_oid, true);
    END IF;
    RETURN pg_catalog.pg_get_viewdef(p_oid, p_wrap);
END
$$;
