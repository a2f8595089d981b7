-- Who may create objects in a namespace, and what only the server writes
-- (issue 31). The functions are in sqlfuncs/170_namespace_rights.sql; this
-- migration adds the grants table and puts the triggers on the tables.
--
--   * Objects of a namespace — tables (table_info, table_name_id,
--     table_path_id), views, sequences, enum types and their labels, column
--     and vector indexes — are created, altered and dropped only by roles
--     that may create in it (lakesoul.may_create): as PostgreSQL 15's public
--     schema, the default namespace (and any namespace of domain public) is
--     no longer writable by every role, only by superusers, the catalog's
--     owner and the roles granted CREATE on it (GRANT CREATE ON SCHEMA,
--     lakesoul.namespace_grant); a workspace's namespaces by its members.
--     A trigger on each table enforces it for every writer, the server's
--     statements and direct catalog logins alike
--     (lakesoul.guard_namespace_objects).
--   * Table properties and column metadata only the server writes (CHECK
--     conditions, column defaults: expression text it evaluates) cannot be
--     set or changed from any other login (lakesoul.guard_internal_keys),
--     nor can view definitions (lakesoul.guard_view_definition).
--   * No namespace is called public: PostgreSQL's face calls the default
--     namespace so, and stored definitions name it so.
--
-- Until the functions are applied (catalog.ApplyFunctions, right after the
-- migrations) the triggers' functions are stand-ins that refuse every write.

CREATE TABLE IF NOT EXISTS lakesoul.namespace_grant (
    namespace text NOT NULL REFERENCES public.namespace (namespace) ON DELETE CASCADE,
    -- the role granted CREATE (pg_roles.oid); 0 is PUBLIC
    grantee   oid  NOT NULL,
    PRIMARY KEY (namespace, grantee)
);
ALTER TABLE lakesoul.namespace_grant ENABLE ROW LEVEL SECURITY;
CREATE POLICY namespace_grant_visible ON lakesoul.namespace_grant FOR SELECT
    USING (EXISTS (SELECT 1 FROM public.namespace n WHERE n.namespace = namespace_grant.namespace));
-- Read by lakesoul.may_create as the invoking role; written by superusers
-- and the owner alone (lakesoul.grant_namespace).
REVOKE ALL ON lakesoul.namespace_grant FROM PUBLIC;
GRANT SELECT ON lakesoul.namespace_grant TO PUBLIC;

CREATE OR REPLACE FUNCTION lakesoul.guard_namespace_objects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'catalog functions not applied yet (lakesoul migrate up)' USING ERRCODE = '55000';
END
$$;
CREATE OR REPLACE FUNCTION lakesoul.guard_internal_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'catalog functions not applied yet (lakesoul migrate up)' USING ERRCODE = '55000';
END
$$;
CREATE OR REPLACE FUNCTION lakesoul.guard_view_definition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'catalog functions not applied yet (lakesoul migrate up)' USING ERRCODE = '55000';
END
$$;
CREATE OR REPLACE FUNCTION lakesoul.guard_namespace_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'catalog functions not applied yet (lakesoul migrate up)' USING ERRCODE = '55000';
END
$$;

CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON public.table_info
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('table_namespace', 'table', 'table_name');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON public.table_name_id
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('table_namespace', 'table', 'table_name');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON public.table_path_id
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('table_namespace', 'table', '');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.view
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('namespace', 'view', 'name');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.sequence
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('namespace', 'sequence', 'name');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.enum_type
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('namespace', 'type', 'name');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.enum_label
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('type_oid', 'type', '');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.column_index
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('table_id', 'table', '');
CREATE TRIGGER namespace_objects BEFORE INSERT OR UPDATE OR DELETE ON lakesoul.vector_index
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_objects('table_id', 'table', '');

CREATE TRIGGER internal_keys BEFORE INSERT OR UPDATE ON public.table_info
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_internal_keys();
CREATE TRIGGER view_definition BEFORE INSERT OR UPDATE ON lakesoul.view
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_view_definition();
CREATE TRIGGER namespace_name BEFORE INSERT OR UPDATE ON public.namespace
    FOR EACH ROW EXECUTE FUNCTION lakesoul.guard_namespace_name();
