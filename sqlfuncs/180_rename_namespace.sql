-- ALTER SCHEMA … RENAME TO (engine/renameschema.go). As the calling role:
-- the namespace policies decide who may (a namespace row is written only by
-- its domain's administrators, as for CREATE and DROP SCHEMA), and the
-- namespace_objects triggers check every moved object against may_create
-- for both names.
--
-- A rename changes names only. The namespace keeps its OID (namespace_oid),
-- its domain, properties, comment and grants; every object in it —
-- sequences, views, enum types — moves to the new name in this one
-- transaction, and the engine rewrites the stored definitions naming it
-- (view queries, column defaults, CHECK conditions) in the same one.
--
-- A namespace holding tables is not renamed (0A000): a table's files live
-- in its namespace's directory (<warehouse>/<namespace>/<table>), which the
-- server, compaction and the S3 proxy derive from the namespace's name and
-- check every path against; a renamed namespace would need a recorded
-- directory of its own, kept from a later namespace of the old name.
-- TestAlterSchemaRename enumerates every catalog column naming a namespace.
CREATE OR REPLACE FUNCTION lakesoul.rename_namespace(p_old text, p_new text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_ns record;
BEGIN
    -- Exclusive against create_table's shared lock of either name, and
    -- against drop_namespace; in name order, so two renames cannot deadlock.
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || least(p_old, p_new), 0));
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || greatest(p_old, p_new), 0));
    SELECT * INTO v_ns FROM public.namespace WHERE namespace = p_old FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_old USING ERRCODE = '3F000';
    END IF;
    IF NOT lakesoul.may_create(p_old) THEN
        RAISE EXCEPTION 'must be owner of schema %', p_old USING ERRCODE = '42501';
    END IF;
    IF EXISTS (SELECT 1 FROM public.table_info WHERE table_namespace = p_old)
       OR EXISTS (SELECT 1 FROM public.table_name_id WHERE table_namespace = p_old)
       OR EXISTS (SELECT 1 FROM public.table_path_id WHERE table_namespace = p_old) THEN
        RAISE EXCEPTION 'renaming schema % is not supported: it holds tables, whose files live in its directory', p_old
            USING ERRCODE = '0A000',
                  HINT = format('Rename a schema of views, sequences and types only; for tables: CREATE SCHEMA %I, then CREATE TABLE %I.t AS SELECT * FROM %I.t for each.', p_new, p_new, p_old);
    END IF;
    IF p_old = p_new OR EXISTS (SELECT 1 FROM public.namespace WHERE namespace = p_new) THEN
        RAISE EXCEPTION 'schema "%" already exists', p_new USING ERRCODE = '42P06';
    END IF;
    -- The new row first (the enum types' and grants' foreign keys need it),
    -- the old one last; the new row takes the old one's OID.
    INSERT INTO public.namespace (namespace, properties, comment, domain)
    VALUES (p_new, v_ns.properties, v_ns.comment, v_ns.domain);
    DELETE FROM lakesoul.namespace_oid WHERE namespace = p_new;
    UPDATE lakesoul.namespace_oid SET namespace = p_new WHERE namespace = p_old;
    UPDATE lakesoul.sequence SET namespace = p_new WHERE namespace = p_old;
    UPDATE lakesoul.view SET namespace = p_new WHERE namespace = p_old;
    UPDATE lakesoul.enum_type SET namespace = p_new WHERE namespace = p_old;
    -- Grants exist on namespaces of domain public alone, which only
    -- superusers and the catalog's owner write (grant_namespace).
    IF EXISTS (SELECT 1 FROM lakesoul.namespace_grant WHERE namespace = p_old) THEN
        UPDATE lakesoul.namespace_grant SET namespace = p_new WHERE namespace = p_old;
    END IF;
    DELETE FROM public.namespace WHERE namespace = p_old;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'schema "%" already exists', p_new USING ERRCODE = '42P06';
END
$$;
