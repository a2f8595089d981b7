-- Enum types of lake namespaces (migration 19, engine/enum.go). As the
-- calling role: row-level security decides which namespaces' types it may
-- create, see, change and drop. Errors are PostgreSQL's own (SQLSTATE and
-- message) for CREATE TYPE … AS ENUM, ALTER TYPE and DROP TYPE.

-- enum_check_label refuses a label PostgreSQL refuses (empty is allowed
-- there, but not over 63 bytes).
CREATE OR REPLACE FUNCTION lakesoul.enum_check_label(p_label text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_label IS NULL OR octet_length(p_label) > 63 OR p_label = '' THEN
        RAISE EXCEPTION 'invalid enum label "%"', p_label USING ERRCODE = '42602',
            DETAIL = 'Labels must be 63 bytes or less.';
    END IF;
END
$$;

-- enum_check_former refuses a new label that a label of the type had
-- before a RENAME VALUE: data files hold the former name for that label.
CREATE OR REPLACE FUNCTION lakesoul.enum_check_former(p_oid bigint, p_label text)
RETURNS void LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_label text;
BEGIN
    SELECT label INTO v_label FROM lakesoul.enum_label WHERE type_oid = p_oid AND p_label = ANY (former);
    IF FOUND THEN
        RAISE EXCEPTION 'enum label "%" was renamed to "%": data files still hold the old name', p_label, v_label
            USING ERRCODE = '0A000', HINT = 'choose a label this type never had';
    END IF;
END
$$;

-- enum_type_oid finds a visible type; 42704 when there is none.
CREATE OR REPLACE FUNCTION lakesoul.enum_type_oid(p_namespace text, p_name text, p_missing_ok boolean DEFAULT false)
RETURNS bigint LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_oid bigint;
BEGIN
    SELECT oid INTO v_oid FROM lakesoul.enum_type
     WHERE namespace = lakesoul.seq_namespace(p_namespace) AND name = p_name;
    IF NOT FOUND AND NOT p_missing_ok THEN
        RAISE EXCEPTION 'type "%.%" does not exist', p_namespace, p_name USING ERRCODE = '42704';
    END IF;
    RETURN v_oid;
END
$$;

-- create_enum creates an enum type with its labels in order and returns its
-- OID (42710 when a type, table or view of that name exists or a label
-- repeats; 3F000 for
-- a namespace the role does not see).
CREATE OR REPLACE FUNCTION lakesoul.create_enum(p_namespace text, p_name text, p_labels text[])
RETURNS bigint LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_domain text;
    v_oid    bigint;
    v_label  text;
    i        int := 0;
BEGIN
    p_namespace := lakesoul.seq_namespace(p_namespace);
    SELECT domain INTO v_domain FROM public.namespace WHERE namespace = p_namespace;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    -- A table or view has a row type of its name in PostgreSQL, so the name
    -- is taken by it as well.
    IF EXISTS (SELECT 1 FROM lakesoul.enum_type WHERE namespace = p_namespace AND name = p_name)
       OR EXISTS (SELECT 1 FROM public.table_info WHERE table_namespace = p_namespace AND table_name = p_name)
       OR EXISTS (SELECT 1 FROM lakesoul.view WHERE namespace = p_namespace AND name = p_name) THEN
        RAISE EXCEPTION 'type "%" already exists', p_name USING ERRCODE = '42710';
    END IF;
    INSERT INTO lakesoul.enum_type (namespace, name, domain) VALUES (p_namespace, p_name, v_domain)
    RETURNING oid INTO v_oid;
    FOREACH v_label IN ARRAY coalesce(p_labels, '{}') LOOP
        PERFORM lakesoul.enum_check_label(v_label);
        i := i + 1;
        BEGIN
            INSERT INTO lakesoul.enum_label (type_oid, label, sort_order) VALUES (v_oid, v_label, i);
        EXCEPTION WHEN unique_violation THEN
            RAISE EXCEPTION 'enum label "%" used more than once', v_label USING ERRCODE = '42710';
        END;
    END LOOP;
    RETURN v_oid;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'type "%" already exists', p_name USING ERRCODE = '42710';
END
$$;

-- enum_add_value adds a label at the end, or BEFORE/AFTER p_neighbor (the
-- midpoint of the neighbours' sort orders; the labels are renumbered when
-- real has no value between them). With p_if_not_exists an existing label
-- is a notice; otherwise 42710. A neighbour that is no label is 22023.
CREATE OR REPLACE FUNCTION lakesoul.enum_add_value(p_namespace text, p_name text, p_label text,
    p_if_not_exists boolean, p_neighbor text, p_before boolean)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_oid   bigint := lakesoul.enum_type_oid(p_namespace, p_name);
    v_at    real;
    v_other real;
    v_new   real;
BEGIN
    PERFORM lakesoul.enum_check_label(p_label);
    -- one change of a type's labels at a time
    PERFORM 1 FROM lakesoul.enum_type WHERE oid = v_oid FOR UPDATE;
    IF EXISTS (SELECT 1 FROM lakesoul.enum_label WHERE type_oid = v_oid AND label = p_label) THEN
        IF p_if_not_exists THEN
            RAISE NOTICE 'enum label "%" already exists, skipping', p_label;
            RETURN;
        END IF;
        RAISE EXCEPTION 'enum label "%" already exists', p_label USING ERRCODE = '42710';
    END IF;
    PERFORM lakesoul.enum_check_former(v_oid, p_label);
    IF p_neighbor IS NULL THEN
        SELECT coalesce(max(sort_order), 0) + 1 INTO v_new FROM lakesoul.enum_label WHERE type_oid = v_oid;
    ELSE
        FOR attempt IN 1..2 LOOP
            SELECT sort_order INTO v_at FROM lakesoul.enum_label WHERE type_oid = v_oid AND label = p_neighbor;
            IF NOT FOUND THEN
                RAISE EXCEPTION '"%" is not an existing enum label', p_neighbor USING ERRCODE = '22023';
            END IF;
            IF p_before THEN
                SELECT max(sort_order) INTO v_other FROM lakesoul.enum_label WHERE type_oid = v_oid AND sort_order < v_at;
                v_other := coalesce(v_other, v_at - 2);
            ELSE
                SELECT min(sort_order) INTO v_other FROM lakesoul.enum_label WHERE type_oid = v_oid AND sort_order > v_at;
                v_other := coalesce(v_other, v_at + 2);
            END IF;
            v_new := ((v_at::float8 + v_other::float8) / 2)::real;
            EXIT WHEN v_new <> v_at AND v_new <> v_other;
            -- no real between the neighbours: renumber 1..n in order (via
            -- negative values, sort orders are unique)
            UPDATE lakesoul.enum_label l SET sort_order = -r.n
              FROM (SELECT oid, row_number() OVER (ORDER BY sort_order) AS n
                      FROM lakesoul.enum_label WHERE type_oid = v_oid) r
             WHERE l.oid = r.oid;
            UPDATE lakesoul.enum_label SET sort_order = -sort_order WHERE type_oid = v_oid;
        END LOOP;
    END IF;
    INSERT INTO lakesoul.enum_label (type_oid, label, sort_order) VALUES (v_oid, p_label, v_new);
END
$$;

-- enum_rename_value renames a label (22023 when it is none, 42710 when the
-- new one exists).
CREATE OR REPLACE FUNCTION lakesoul.enum_rename_value(p_namespace text, p_name text, p_old text, p_new text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_oid bigint := lakesoul.enum_type_oid(p_namespace, p_name);
    v_dep record;
BEGIN
    PERFORM lakesoul.enum_check_label(p_new);
    PERFORM 1 FROM lakesoul.enum_type WHERE oid = v_oid FOR UPDATE;
    IF NOT EXISTS (SELECT 1 FROM lakesoul.enum_label WHERE type_oid = v_oid AND label = p_old) THEN
        RAISE EXCEPTION '"%" is not an existing enum label', p_old USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM lakesoul.enum_label WHERE type_oid = v_oid AND label = p_new) THEN
        RAISE EXCEPTION 'enum label "%" already exists', p_new USING ERRCODE = '42710';
    END IF;
    PERFORM lakesoul.enum_check_former(v_oid, p_new);
    -- Files keep the old text: key and partition columns hash and name
    -- files by it, so a renamed key value would be another key.
    SELECT d.* INTO v_dep FROM lakesoul.enum_dependents(v_oid) d WHERE d.is_key LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot rename a value of type %.%: it is the type of key or partition column % of table %.%',
            p_namespace, p_name, v_dep.column_name, v_dep.table_namespace, v_dep.table_name
            USING ERRCODE = '0A000', HINT = 'ADD VALUE a new label and UPDATE the rows to it';
    END IF;
    UPDATE lakesoul.enum_label SET label = p_new, former = array_append(former, p_old)
     WHERE type_oid = v_oid AND label = p_old;
END
$$;

-- enum_dependents lists the columns of every lake table (visible to the
-- role or not: a type in use is in use) declared with enum type p_oid;
-- is_key for a primary-key or range-partition column.
CREATE OR REPLACE FUNCTION lakesoul.enum_dependents(p_oid bigint)
RETURNS TABLE (table_id text, table_namespace text, table_name text, column_name text, is_key boolean)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT t.table_id, t.table_namespace, t.table_name, f.field->>'name',
           f.field->>'name' = ANY (string_to_array(replace(coalesce(t.partitions, ''), ';', ','), ','))
      FROM public.table_info t,
           LATERAL jsonb_array_elements(lakesoul_pg.schema_fields(t.table_schema)) AS f(field)
     WHERE f.field->'metadata'->>'pg_type' = 'enum:' || p_oid
     ORDER BY 2, 3, 4
$$;

-- drop_enum drops a visible type no column uses (2BP01 otherwise: the
-- caller drops the columns first for CASCADE); false when there is none.
CREATE OR REPLACE FUNCTION lakesoul.drop_enum(p_namespace text, p_name text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_oid bigint := lakesoul.enum_type_oid(p_namespace, p_name, true);
    d     record;
BEGIN
    IF v_oid IS NULL THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM lakesoul.enum_type WHERE oid = v_oid FOR UPDATE;
    SELECT * INTO d FROM lakesoul.enum_dependents(v_oid) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot drop type %.% because other objects depend on it', p_namespace, p_name
            USING ERRCODE = '2BP01',
                  DETAIL = format('column %s of table %s.%s depends on type %s.%s',
                                  d.column_name, d.table_namespace, d.table_name, p_namespace, p_name),
                  HINT = 'Use DROP ... CASCADE to drop the dependent objects too.';
    END IF;
    DELETE FROM lakesoul.enum_type WHERE oid = v_oid;
    RETURN true;
END
$$;
