-- Renames (ALTER TABLE … RENAME TO, ALTER TABLE … RENAME COLUMN, ALTER VIEW …
-- RENAME TO; engine/rename.go) and the table directories they need
-- (migration 18). As the calling role: row-level security decides which
-- tables and views it may rename, and the restrictive domain policies keep
-- every row in its namespace's workspace.
--
-- A rename changes metadata only. A table keeps its table_path (its files
-- stay where they are); its directory is recorded in lakesoul.table_dir so
-- the server checks the path against the record rather than against the
-- directory of the new name, and so a later table of the old name is given
-- another directory. A column keeps the values old files hold under its
-- former names (the engine lists them in the column's metadata,
-- pg_former_names, and the reader reads a file's column by its current or a
-- former name).

-- free_table_dir is p_dir when no table the role sees uses it (as its path
-- or its recorded directory), else a free sibling p_dir_<8 hex digits>.
CREATE OR REPLACE FUNCTION lakesoul.free_table_dir(p_dir text)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_dir text := p_dir;
BEGIN
    LOOP
        IF NOT EXISTS (SELECT 1 FROM public.table_path_id WHERE table_path = v_dir)
           AND NOT EXISTS (SELECT 1 FROM public.table_info WHERE table_path = v_dir)
           AND NOT EXISTS (SELECT 1 FROM lakesoul.table_dir WHERE dir = v_dir) THEN
            RETURN v_dir;
        END IF;
        v_dir := p_dir || '_' || substr(md5(random()::text || clock_timestamp()::text), 1, 8);
    END LOOP;
END
$$;

-- record_table_dir records the table's current table_path as its directory
-- unless a directory is recorded already (42P07 when another table has
-- that directory).
CREATE OR REPLACE FUNCTION lakesoul.record_table_dir(p_table_id text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO lakesoul.table_dir (table_id, dir)
    SELECT table_id, table_path FROM public.table_info WHERE table_id = p_table_id
    ON CONFLICT (table_id) DO NOTHING;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'table path of table % is already used by another table', p_table_id USING ERRCODE = '42P07';
END
$$;

-- relation_name_taken raises 42P07 when a table or a view of namespace
-- p_namespace is called p_name.
CREATE OR REPLACE FUNCTION lakesoul.relation_name_taken(p_namespace text, p_name text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM public.table_name_id WHERE table_namespace = p_namespace AND table_name = p_name)
       OR EXISTS (SELECT 1 FROM lakesoul.view WHERE namespace = p_namespace AND name = p_name) THEN
        RAISE EXCEPTION 'relation "%" already exists', p_name USING ERRCODE = '42P07';
    END IF;
END
$$;

-- rename_table renames a table within its namespace: its name row and its
-- info row change together; its directory is recorded first (tables
-- created before migration 18 have no record), so the path stays valid.
CREATE OR REPLACE FUNCTION lakesoul.rename_table(p_table_id text, p_new_name text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_ns text;
BEGIN
    -- Serialises with commits (FOR SHARE) and other DDL of the table.
    SELECT table_namespace INTO v_ns FROM public.table_info WHERE table_id = p_table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    -- As create_table: not while the namespace is being dropped.
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || v_ns, 0), true);
    PERFORM lakesoul.relation_name_taken(v_ns, p_new_name);
    PERFORM lakesoul.record_table_dir(p_table_id);
    UPDATE public.table_name_id SET table_name = p_new_name WHERE table_id = p_table_id;
    UPDATE public.table_info SET table_name = p_new_name WHERE table_id = p_table_id;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'relation "%" already exists', p_new_name USING ERRCODE = '42P07';
END
$$;

-- rename_column stores the table's definition after a column rename (schema
-- and properties as lakesoul.alter_table, the partitions string with the
-- key's new name) and renames the column in the table's column and vector
-- indexes.
CREATE OR REPLACE FUNCTION lakesoul.rename_column(p_table_id text, p_old text, p_new text,
    p_table_schema text, p_properties jsonb, p_partitions text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM lakesoul.alter_table(p_table_id, p_table_schema, p_properties);
    UPDATE public.table_info SET partitions = p_partitions
     WHERE table_id = p_table_id AND partitions IS DISTINCT FROM p_partitions;
    UPDATE lakesoul.column_index SET columns = array_replace(columns, p_old, p_new)
     WHERE table_id = p_table_id AND p_old = ANY (columns);
    UPDATE lakesoul.vector_index SET column_name = p_new
     WHERE table_id = p_table_id AND column_name = p_old;
END
$$;

-- rename_view renames a view the role sees (42P01 when there is none, 42P07
-- when the name is taken).
CREATE OR REPLACE FUNCTION lakesoul.rename_view(p_namespace text, p_old text, p_new text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    p_namespace := lakesoul.seq_namespace(p_namespace);
    PERFORM 1 FROM lakesoul.view WHERE namespace = p_namespace AND name = p_old FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation "%" does not exist', p_old USING ERRCODE = '42P01';
    END IF;
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || p_namespace, 0), true);
    PERFORM lakesoul.relation_name_taken(p_namespace, p_new);
    UPDATE lakesoul.view SET name = p_new WHERE namespace = p_namespace AND name = p_old;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'relation "%" already exists', p_new USING ERRCODE = '42P07';
END
$$;

-- set_view_definition replaces the query text of a view the role sees (a
-- view whose table was renamed names it by its new name); false when there
-- is no such view.
CREATE OR REPLACE FUNCTION lakesoul.set_view_definition(p_namespace text, p_name text, p_definition text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    UPDATE lakesoul.view SET definition = p_definition WHERE namespace = p_namespace AND name = p_name;
    RETURN FOUND;
END
$$;
