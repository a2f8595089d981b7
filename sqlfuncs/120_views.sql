-- Views of lake namespaces (migration 14, engine/view.go). As the calling
-- role: row-level security decides which namespaces' views it may create,
-- replace, see and drop.

-- create_view stores a view (42P07 when a table or, without p_replace, a view
-- of that name exists; 3F000 for a namespace the role does not see).
CREATE OR REPLACE FUNCTION lakesoul.create_view(p_namespace text, p_name text, p_definition text,
    p_columns text[], p_types oid[], p_typmods int[], p_replace boolean)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_domain text;
BEGIN
    p_namespace := lakesoul.seq_namespace(p_namespace);
    SELECT domain INTO v_domain FROM public.namespace WHERE namespace = p_namespace;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    IF EXISTS (SELECT 1 FROM public.table_name_id WHERE table_namespace = p_namespace AND table_name = p_name) THEN
        RAISE EXCEPTION 'relation "%" already exists', p_name USING ERRCODE = '42P07';
    END IF;
    IF p_replace THEN
        UPDATE lakesoul.view SET definition = p_definition, columns = p_columns, types = p_types, typmods = p_typmods
         WHERE namespace = p_namespace AND name = p_name;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    INSERT INTO lakesoul.view (namespace, name, domain, definition, columns, types, typmods)
    VALUES (p_namespace, p_name, v_domain, p_definition, p_columns, p_types, p_typmods);
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'relation "%" already exists', p_name USING ERRCODE = '42P07';
END
$$;

-- drop_view drops a view the role sees; false when there is none.
CREATE OR REPLACE FUNCTION lakesoul.drop_view(p_namespace text, p_name text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM lakesoul.view WHERE namespace = lakesoul.seq_namespace(p_namespace) AND name = p_name;
    RETURN FOUND;
END
$$;
