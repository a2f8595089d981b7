-- Namespace and table DDL. Each function is one transaction, so a failed DDL
-- leaves no orphan rows (LakeSoul's JVM path uses compensating deletes instead).

CREATE OR REPLACE FUNCTION lakesoul.create_namespace(p_namespace text, p_domain text DEFAULT 'public')
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO public.namespace (namespace, properties, comment, domain)
    VALUES (p_namespace, '{}', '', coalesce(p_domain, 'public'));
    INSERT INTO lakesoul.namespace_oid (namespace) VALUES (p_namespace) ON CONFLICT DO NOTHING;
EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'schema "%" already exists', p_namespace USING ERRCODE = '42P06';
END
$$;

-- drop_namespace removes a namespace. Without p_cascade it refuses while any
-- object lives in it (2BP01); with it, it drops every one — tables (and the
-- sequences their columns own), sequences, views, enum types — and returns the
-- tables' paths so the caller can delete their files after this transaction
-- commits. Every catalog table naming a namespace is one of those kinds
-- (TestDropSchemaCascadeDropsEveryObject enumerates them), so nothing of the
-- namespace outlives it.
CREATE OR REPLACE FUNCTION lakesoul.drop_namespace(p_namespace text, p_cascade boolean)
RETURNS SETOF text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    t record;
    v_seq bigint;
BEGIN
    -- Exclusive against create_table's shared lock on the same key.
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || p_namespace, 0));
    PERFORM 1 FROM public.namespace WHERE namespace = p_namespace;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    -- Enum types (migration 19) depend on their namespace too; CASCADE
    -- drops them with it (their foreign key).
    IF NOT p_cascade AND (EXISTS (SELECT 1 FROM public.table_info WHERE table_namespace = p_namespace)
                          OR EXISTS (SELECT 1 FROM lakesoul.enum_type WHERE namespace = p_namespace)
                          OR EXISTS (SELECT 1 FROM lakesoul.sequence WHERE namespace = p_namespace)
                          OR EXISTS (SELECT 1 FROM lakesoul.view WHERE namespace = p_namespace)) THEN
        RAISE EXCEPTION 'cannot drop schema % because other objects depend on it', p_namespace
            USING ERRCODE = '2BP01', HINT = 'Use DROP ... CASCADE to drop the dependent objects too.';
    END IF;
    FOR t IN SELECT table_id FROM public.table_info WHERE table_namespace = p_namespace ORDER BY table_id LOOP
        RETURN QUERY SELECT lakesoul.drop_table_by_id(t.table_id);
        PERFORM lakesoul.drop_table_sequences(t.table_id);
    END LOOP;
    -- Sequences of the namespace, owned by a table of another one too: the
    -- registry row names the namespace the sequence lives in.
    FOR v_seq IN DELETE FROM lakesoul.sequence WHERE namespace = p_namespace RETURNING id LOOP
        PERFORM lakesoul.drop_sequence_object(v_seq);
    END LOOP;
    DELETE FROM lakesoul.view WHERE namespace = p_namespace;
    DELETE FROM lakesoul.namespace_oid WHERE namespace = p_namespace; -- visible only while the namespace is
    DELETE FROM public.namespace WHERE namespace = p_namespace;
END
$$;

-- create_table registers a table: name row, path row, info row, in one
-- transaction. The table takes its namespace's domain.
CREATE OR REPLACE FUNCTION lakesoul.create_table(
    p_table_id text, p_namespace text, p_table_name text, p_table_path text,
    p_table_schema text, p_properties json, p_partitions text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_domain text;
BEGIN
    -- A shared advisory lock, not FOR SHARE: workspace users may not lock
    -- namespace rows (no UPDATE right on them), yet must not create a table
    -- in a namespace being dropped.
    PERFORM lakesoul.xact_lock(hashtextextended('lakesoul.namespace:' || p_namespace, 0), true);
    SELECT domain INTO v_domain FROM public.namespace WHERE namespace = p_namespace;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    BEGIN
        INSERT INTO public.table_name_id (table_name, table_id, table_namespace, domain)
        VALUES (p_table_name, p_table_id, p_namespace, v_domain);
    EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'relation "%.%" already exists', p_namespace, p_table_name USING ERRCODE = '42P07';
    END;
    BEGIN
        INSERT INTO public.table_path_id (table_path, table_id, table_namespace, domain)
        VALUES (p_table_path, p_table_id, p_namespace, v_domain);
    EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'table path "%" is already used by another table', p_table_path USING ERRCODE = '42P07';
    END;
    INSERT INTO public.table_info (table_id, table_namespace, table_name, table_path, table_schema,
                                   properties, partitions, domain)
    VALUES (p_table_id, p_namespace, p_table_name, p_table_path, p_table_schema,
            p_properties, p_partitions, v_domain);
    -- (its lakesoul.table_oid row comes from the trigger table_oid_register,
    -- as for tables LakeSoul's own clients create)
    INSERT INTO lakesoul.table_created (table_id, created_ms)
    VALUES (p_table_id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
END
$$;

-- drop_table_by_id removes every metadata row of a table and returns its path;
-- the caller deletes the files once the transaction has committed.
CREATE OR REPLACE FUNCTION lakesoul.drop_table_by_id(p_table_id text)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_path text;
BEGIN
    -- Serialise with in-flight commits of this table (they hold the row FOR SHARE).
    SELECT table_path INTO v_path FROM public.table_info WHERE table_id = p_table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    -- lakesoul.* rows first: row-level security shows them only while the
    -- table_info row is still there.
    DELETE FROM lakesoul.table_oid WHERE table_id = p_table_id;
    DELETE FROM lakesoul.table_created WHERE table_id = p_table_id;
    DELETE FROM lakesoul.partition_registry WHERE table_id = p_table_id;
    DELETE FROM public.table_name_id WHERE table_id = p_table_id;
    DELETE FROM public.table_path_id WHERE table_id = p_table_id;
    DELETE FROM public.partition_info WHERE table_id = p_table_id;
    DELETE FROM public.data_commit_info WHERE table_id = p_table_id;
    DELETE FROM public.table_info WHERE table_id = p_table_id;
    RETURN v_path;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul.drop_table(p_namespace text, p_table_name text)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id text;
BEGIN
    SELECT table_id INTO v_id FROM public.table_name_id
     WHERE table_namespace = p_namespace AND table_name = p_table_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table "%.%" does not exist', p_namespace, p_table_name USING ERRCODE = '42P01';
    END IF;
    RETURN lakesoul.drop_table_by_id(v_id);
END
$$;
