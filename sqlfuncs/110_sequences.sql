-- Sequences of lake namespaces (migration 14). The registry row is written as
-- the calling role, so row-level security decides who may create, see and
-- drop a namespace's sequences; only the sequence object itself is made and
-- removed by SECURITY DEFINER helpers, which act on registry rows alone.

-- seq_namespace is the namespace a sequence name's schema means: "public"
-- is another name of LakeSoul's "default" unless a namespace public exists
-- (as for tables, engine/resolve.go).
CREATE OR REPLACE FUNCTION lakesoul.seq_namespace(p_namespace text)
RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT CASE WHEN p_namespace = 'public' AND NOT EXISTS (SELECT 1 FROM public.namespace WHERE namespace = 'public')
        THEN 'default' ELSE p_namespace END
$$;

-- sequence_object creates the object of registry row p_id and grants its use
-- to the row's domain. It refuses a row that is missing or has its object.
CREATE OR REPLACE FUNCTION lakesoul.sequence_object(p_id bigint, p_start bigint, p_increment bigint,
    p_min bigint, p_max bigint, p_cycle boolean)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_domain text;
    v_obj text := 's' || p_id;
BEGIN
    SELECT domain INTO v_domain FROM lakesoul.sequence WHERE id = p_id;
    IF NOT FOUND OR to_regclass(format('lakesoul_seq.%I', v_obj)) IS NOT NULL THEN
        RAISE EXCEPTION 'sequence % cannot be created', p_id USING ERRCODE = '42501';
    END IF;
    EXECUTE format('CREATE SEQUENCE lakesoul_seq.%I AS bigint INCREMENT %s %s %s %s %s', v_obj,
        coalesce(p_increment, 1),
        CASE WHEN p_min IS NULL THEN 'NO MINVALUE' ELSE 'MINVALUE ' || p_min END,
        CASE WHEN p_max IS NULL THEN 'NO MAXVALUE' ELSE 'MAXVALUE ' || p_max END,
        CASE WHEN p_start IS NULL THEN '' ELSE 'START ' || p_start END,
        CASE WHEN p_cycle THEN 'CYCLE' ELSE 'NO CYCLE' END);
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON SEQUENCE lakesoul_seq.%I TO %s', v_obj,
        CASE WHEN v_domain IN ('public', 'lake-public') THEN 'PUBLIC' ELSE quote_ident(v_domain) END);
END
$$;

-- create_sequence registers sequence p_name of namespace p_namespace (as the
-- caller: 3F000 for a namespace it does not see, 42P07 when the name is
-- taken) and creates its object.
CREATE OR REPLACE FUNCTION lakesoul.create_sequence(p_namespace text, p_name text, p_start bigint, p_increment bigint,
    p_min bigint, p_max bigint, p_cycle boolean, p_owner_table text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id bigint;
    v_domain text;
BEGIN
    p_namespace := lakesoul.seq_namespace(p_namespace);
    SELECT domain INTO v_domain FROM public.namespace WHERE namespace = p_namespace;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schema "%" does not exist', p_namespace USING ERRCODE = '3F000';
    END IF;
    BEGIN
        INSERT INTO lakesoul.sequence (namespace, name, domain, owner_table)
        VALUES (p_namespace, p_name, v_domain, p_owner_table) RETURNING id INTO v_id;
    EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'relation "%" already exists', p_name USING ERRCODE = '42P07';
    END;
    PERFORM lakesoul.sequence_object(v_id, p_start, p_increment, p_min, p_max, p_cycle);
END
$$;

-- drop_sequence_object removes the object of a registry row that is gone.
CREATE OR REPLACE FUNCTION lakesoul.drop_sequence_object(p_id bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM lakesoul.sequence WHERE id = p_id) THEN
        RAISE EXCEPTION 'sequence % is still registered', p_id USING ERRCODE = '42501';
    END IF;
    EXECUTE format('DROP SEQUENCE IF EXISTS lakesoul_seq.%I', 's' || p_id);
END
$$;

-- drop_sequence drops a sequence the caller sees; false when there is none.
CREATE OR REPLACE FUNCTION lakesoul.drop_sequence(p_namespace text, p_name text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id bigint;
BEGIN
    p_namespace := lakesoul.seq_namespace(p_namespace);
    DELETE FROM lakesoul.sequence WHERE namespace = p_namespace AND name = p_name RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM lakesoul.drop_sequence_object(v_id);
    RETURN true;
END
$$;

-- drop_table_sequences drops the sequences owned by a table's columns.
CREATE OR REPLACE FUNCTION lakesoul.drop_table_sequences(p_table_id text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id bigint;
BEGIN
    FOR v_id IN DELETE FROM lakesoul.sequence WHERE owner_table = p_table_id RETURNING id LOOP
        PERFORM lakesoul.drop_sequence_object(v_id);
    END LOOP;
END
$$;

-- seq_id is the registry id of a sequence the caller sees (42P01 otherwise).
CREATE OR REPLACE FUNCTION lakesoul.seq_id(p_namespace text, p_name text)
RETURNS bigint LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT id INTO v_id FROM lakesoul.sequence WHERE namespace = lakesoul.seq_namespace(p_namespace) AND name = p_name;
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'relation "%.%" does not exist', p_namespace, p_name USING ERRCODE = '42P01';
    END IF;
    RETURN v_id;
END
$$;

-- seq_nextval advances a sequence as the caller (PostgreSQL checks its grant).
CREATE OR REPLACE FUNCTION lakesoul.seq_nextval(p_namespace text, p_name text)
RETURNS bigint LANGUAGE sql
SET search_path = pg_catalog AS $$
    SELECT nextval(format('lakesoul_seq.%I', 's' || lakesoul.seq_id(p_namespace, p_name))::regclass)
$$;

-- seq_setval sets a sequence as the caller.
CREATE OR REPLACE FUNCTION lakesoul.seq_setval(p_namespace text, p_name text, p_value bigint, p_is_called boolean)
RETURNS bigint LANGUAGE sql
SET search_path = pg_catalog AS $$
    SELECT setval(format('lakesoul_seq.%I', 's' || lakesoul.seq_id(p_namespace, p_name))::regclass, p_value, p_is_called)
$$;
