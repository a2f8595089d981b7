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
-- The two-argument form stands for both built-ins, (oid, boolean pretty) and
-- (oid, integer wrap column): the second argument is polymorphic.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_viewdef(p_oid oid, p_option anyelement)
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
    IF pg_catalog.pg_typeof(p_option) IN ('integer'::regtype, 'smallint'::regtype, 'bigint'::regtype) THEN
        RETURN pg_catalog.pg_get_viewdef(p_oid, p_option::text::int4);
    END IF;
    RETURN pg_catalog.pg_get_viewdef(p_oid, p_option::text::boolean);
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_viewdef(p_oid oid)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT lakesoul_pg.pg_get_viewdef(p_oid, false::boolean)
$$;
