-- CDC subscriptions (migration 000012, package cdc): creation, the worker
-- lease, and lakesoul.cdc_commit, which lands a batch of source changes and
-- the source position they reach in ONE catalog transaction.
--
-- Invariants:
--   * a worker acts on a subscription only while it holds its claim_token;
--     cdc_claim hands a subscription whose lease ran out (or that nobody
--     held) to one worker, FOR UPDATE SKIP LOCKED, with a fresh token, so
--     the previous holder's token is worthless from then on;
--   * cdc_commit locks the subscription row, and commits only if the token
--     is current and the stored position is the one the batch started from
--     (compare and set): each source change lands exactly once. A batch
--     whose position is already stored is a commit re-sent after a lost
--     connection; it is answered 'already' and changes nothing;
--   * the data goes through lakesoul.commit_many (the commit protocol,
--     unchanged: locks, versions, the write intent), schema changes through
--     lakesoul.alter_table, both in the same transaction as the position.
--
-- Only the catalog owner runs these (they are not granted to anyone).

-- cdc_create registers a subscription and its source tables' targets.
-- 42710 if the name is taken or a target table belongs to another
-- subscription.
CREATE OR REPLACE FUNCTION lakesoul.cdc_create(p_name text, p_kind text, p_connection text, p_source text,
    p_publications text[], p_target_schema text, p_hash_bucket_num int, p_copy_data boolean, p_enabled boolean,
    p_commit_interval_ms bigint, p_slot_name text, p_source_tables text[], p_table_names text[])
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_other text;
BEGIN
    IF EXISTS (SELECT 1 FROM lakesoul.subscription s WHERE s.name = p_name) THEN
        RAISE EXCEPTION 'subscription "%" already exists', p_name USING ERRCODE = '42710';
    END IF;
    SELECT t.subscription || ' (' || t.namespace || '.' || t.table_name || ')' INTO v_other
      FROM lakesoul.subscription_table t
     WHERE t.namespace = p_target_schema AND t.table_name = ANY (p_table_names)
     ORDER BY 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'a target table is already replicated by subscription %', v_other USING ERRCODE = '42710';
    END IF;
    INSERT INTO lakesoul.subscription (name, kind, connection, source, publications, target_schema, hash_bucket_num,
                                       copy_data, enabled, commit_interval_ms, slot_name)
    VALUES (p_name, p_kind, p_connection, p_source, p_publications, p_target_schema, p_hash_bucket_num,
            p_copy_data, p_enabled, p_commit_interval_ms, p_slot_name);
    INSERT INTO lakesoul.subscription_table (subscription, source_table, namespace, table_name)
    SELECT p_name, s, p_target_schema, n FROM unnest(p_source_tables, p_table_names) AS u(s, n);
END
$$;

-- cdc_add_table registers a source table that appeared after the
-- subscription was created (REFRESH PUBLICATION, a new table in the
-- stream); true if added, false if it was known. 42710 if another
-- subscription replicates into the same lake table.
CREATE OR REPLACE FUNCTION lakesoul.cdc_add_table(p_name text, p_source_table text, p_namespace text, p_table_name text,
    p_synced_at text DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_other text;
    v_source text;
BEGIN
    -- Insert first and let the constraints decide: REFRESH PUBLICATION and
    -- the worker meeting the table in its stream may add it at the same
    -- time (the second waits for the first and finds it known), and a
    -- check before the insert would race them.
    INSERT INTO lakesoul.subscription_table (subscription, source_table, namespace, table_name, synced_at)
    VALUES (p_name, p_source_table, p_namespace, p_table_name, p_synced_at)
    ON CONFLICT (subscription, source_table) DO NOTHING;
    RETURN FOUND;
EXCEPTION WHEN unique_violation THEN
    -- (namespace, table_name) is taken. When a concurrent call added this
    -- very row, the lake table's index may report it before the primary
    -- key does: then the table is known. Otherwise it is another's.
    SELECT t.subscription, t.source_table INTO v_other, v_source FROM lakesoul.subscription_table t
     WHERE t.namespace = p_namespace AND t.table_name = p_table_name;
    IF v_other = p_name AND v_source = p_source_table THEN
        RETURN false;
    END IF;
    RAISE EXCEPTION 'table %.% is already replicated by subscription %', p_namespace, p_table_name, v_other
        USING ERRCODE = '42710';
END
$$;

-- cdc_claim gives worker p_worker one enabled subscription nobody holds (or
-- whose holder's lease ran out), with a fresh token.
CREATE OR REPLACE FUNCTION lakesoul.cdc_claim(p_worker text, p_lease_ms bigint)
RETURNS TABLE (name text, token uuid) LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_name text;
BEGIN
    SELECT s.name INTO v_name FROM lakesoul.subscription s
     WHERE s.enabled AND (s.lease_until IS NULL OR s.lease_until < clock_timestamp())
     ORDER BY s.lease_until NULLS FIRST, s.name
     LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    name := v_name;
    token := gen_random_uuid();
    UPDATE lakesoul.subscription s
       SET claimed_by = p_worker, claim_token = token,
           lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
     WHERE s.name = v_name;
    RETURN NEXT;
END
$$;

-- cdc_renew extends the holder's lease and returns the subscription's
-- generation, or NULL when the holder lost it (taken over, disabled,
-- dropped): it must stop at once.
CREATE OR REPLACE FUNCTION lakesoul.cdc_renew(p_name text, p_token uuid, p_lease_ms bigint)
RETURNS int LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_gen int;
BEGIN
    UPDATE lakesoul.subscription s
       SET lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
     WHERE s.name = p_name AND s.claim_token = p_token AND s.enabled
    RETURNING s.generation INTO v_gen;
    RETURN v_gen;
END
$$;

-- cdc_release gives a subscription up (the worker stops).
CREATE OR REPLACE FUNCTION lakesoul.cdc_release(p_name text, p_token uuid)
RETURNS void LANGUAGE sql
SET search_path = pg_catalog, lakesoul AS $$
    UPDATE lakesoul.subscription s SET claimed_by = NULL, claim_token = NULL, lease_until = NULL
     WHERE s.name = p_name AND s.claim_token = p_token
$$;

-- cdc_set_state records the holder's state (copying, streaming, error),
-- its error and the newest source position it saw; false if it lost the
-- subscription.
CREATE OR REPLACE FUNCTION lakesoul.cdc_set_state(p_name text, p_token uuid, p_state text, p_error text,
    p_source_position text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
BEGIN
    UPDATE lakesoul.subscription s
       SET state = p_state, last_error = p_error, source_position = coalesce(p_source_position, s.source_position)
     WHERE s.name = p_name AND s.claim_token = p_token;
    RETURN FOUND;
END
$$;

-- cdc_set_table_error stops one table of a subscription (a rename, an
-- incompatible type change); the others go on.
CREATE OR REPLACE FUNCTION lakesoul.cdc_set_table_error(p_name text, p_token uuid, p_source_table text, p_error text)
RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM lakesoul.subscription s WHERE s.name = p_name AND s.claim_token = p_token) THEN
        RETURN false;
    END IF;
    UPDATE lakesoul.subscription_table t SET state = 'error', last_error = p_error
     WHERE t.subscription = p_name AND t.source_table = p_source_table;
    RETURN true;
END
$$;

-- cdc_commit lands one batch. p_commits is lakesoul.commit_many's argument
-- (may be empty: a batch that only moves the position); p_alters is an
-- array of {"table_id", "table_schema", "properties"} applied first with
-- lakesoul.alter_table; p_tables an array of {"source_table", "table_id",
-- "columns", "synced_at"} recorded for the subscription's tables. Result:
-- 'already' when p_position was stored before; otherwise the versions the
-- batch committed, a JSON array of {"t": table_id, "p": partition_desc,
-- "v": version} (lakesoul.notify_commits's argument), for the committer to
-- announce after the commit.
CREATE OR REPLACE FUNCTION lakesoul.cdc_commit(p_name text, p_token uuid, p_prev_position text, p_position text,
    p_commits jsonb, p_alters jsonb, p_tables jsonb, p_intent text, p_intent_token uuid,
    p_source_position text, p_source_commit_at timestamptz)
RETURNS text LANGUAGE plpgsql
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_sub lakesoul.subscription%ROWTYPE;
    v_alter jsonb;
    v_table jsonb;
    v_versions jsonb := '[]';
BEGIN
    SELECT * INTO v_sub FROM lakesoul.subscription s WHERE s.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'subscription "%" does not exist', p_name USING ERRCODE = '42704';
    END IF;
    IF v_sub.position IS NOT DISTINCT FROM p_position AND p_prev_position IS DISTINCT FROM p_position THEN
        RETURN 'already';
    END IF;
    IF v_sub.claim_token IS DISTINCT FROM p_token THEN
        RAISE EXCEPTION 'subscription "%" is applied by another worker now', p_name USING ERRCODE = '55000';
    END IF;
    IF v_sub.position IS DISTINCT FROM p_prev_position THEN
        RAISE EXCEPTION 'subscription "%" is at position %, not %', p_name, v_sub.position, p_prev_position
            USING ERRCODE = '40001';
    END IF;
    FOR v_alter IN SELECT a FROM jsonb_array_elements(coalesce(p_alters, '[]')) WITH ORDINALITY AS e(a, n) ORDER BY n LOOP
        PERFORM lakesoul.alter_table(v_alter->>'table_id', v_alter->>'table_schema', v_alter->'properties');
    END LOOP;
    IF jsonb_array_length(coalesce(p_commits, '[]')) > 0 THEN
        SELECT coalesce(jsonb_agg(jsonb_build_object('t', c.o_table_id, 'p', c.o_partition_desc, 'v', c.o_version)), '[]')
          INTO v_versions
          FROM lakesoul.commit_many(p_commits, p_intent, p_intent_token) c;
    END IF;
    FOR v_table IN SELECT t FROM jsonb_array_elements(coalesce(p_tables, '[]')) t LOOP
        UPDATE lakesoul.subscription_table t
           SET table_id = coalesce(v_table->>'table_id', t.table_id),
               columns = coalesce(v_table->'columns', t.columns),
               synced_at = CASE WHEN v_table ? 'synced_at' THEN v_table->>'synced_at' ELSE t.synced_at END
         WHERE t.subscription = p_name AND t.source_table = v_table->>'source_table';
    END LOOP;
    UPDATE lakesoul.subscription s
       SET position = p_position,
           source_position = coalesce(p_source_position, s.source_position),
           source_commit_at = coalesce(p_source_commit_at, s.source_commit_at),
           last_commit_at = CASE WHEN jsonb_array_length(coalesce(p_commits, '[]')) > 0 OR p_prev_position IS NULL
                                 THEN clock_timestamp() ELSE s.last_commit_at END,
           state = 'streaming', last_error = NULL
     WHERE s.name = p_name;
    RETURN v_versions::text;
END
$$;
