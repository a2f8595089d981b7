-- Row locks: what makes a read-modify-write statement, SELECT … FOR UPDATE and
-- the commits that follow them wait for each other, as PostgreSQL's row locks
-- make its UPDATEs wait.
--
-- A row of a primary-key table is named by (table, partition, key hash); the
-- engine hashes the key's values (64 bits) and lock_rows turns the three into
-- an advisory lock in PostgreSQL's two-int4 key space, which is disjoint from
-- the bigint space of the commit protocol's partition locks (005_locks.sql), so
-- a row lock can never be mistaken for a partition lock. Two keys whose
-- hashes collide share a lock: a needless wait, never a missed one.
--
-- Every row lock of a partition is taken under the partition's rows lock in
-- shared mode; a request for more than lock_rows_max keys takes the rows lock
-- exclusively instead of one lock per key (escalation), so a large UPDATE
-- holds one lock, not millions, and still excludes every key locker of the
-- partition. Locks are transaction locks: they end with the catalog
-- transaction that took them (a transaction block's held transaction, or a
-- commit's own).
--
-- Invariants:
--   * only the server takes row locks (the same login check as xact_lock), so
--     a user's own catalog login cannot block another workspace's writers;
--   * a commit takes its row locks before any partition lock (lakesoul.commit,
--     lakesoul.commit_many), in (table, partition) order, so a commit waiting
--     for a row never holds a lock another commit needs to finish;
--   * locks are correctness-neutral: every read-modify-write commit is still
--     checked against the versions committed since its snapshot
--     (expect_version); the locks only make writers wait instead of failing.

CREATE OR REPLACE FUNCTION lakesoul.row_lock_id(p_table_id text, p_desc text, p_key bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog AS $$
    SELECT hashtextextended(p_table_id || chr(31) || p_desc, p_key)
$$;

-- lock_rows locks the rows p_keys (key hashes) of a partition, exclusively or
-- shared; p_keys NULL locks every row of it (the partition's rows lock, as an
-- escalated request does: tables without a key are locked so). p_wait is 'wait' (block until granted), 'nowait' (55P03 when any
-- lock is held by another transaction, as FOR UPDATE NOWAIT) or 'skip' (take
-- what is free, as SKIP LOCKED). It returns the keys now locked (all of them
-- unless skipping).
CREATE OR REPLACE FUNCTION lakesoul.lock_rows(p_table_id text, p_desc text, p_keys bigint[],
                                              p_exclusive boolean, p_wait text DEFAULT 'wait')
RETURNS bigint[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c_max   constant int := 1000; -- lock_rows_max: beyond it, the partition's rows lock alone
    v_rows  bigint := hashtextextended(p_table_id || chr(31) || p_desc || chr(31) || 'rows', 0);
    v_id    bigint;
    v_key   bigint;
    v_ok    boolean;
    v_out   bigint[] := '{}';
    v_escal boolean := p_keys IS NULL OR cardinality(p_keys) > c_max;
BEGIN
    IF session_user <> current_user AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) THEN
        RAISE EXCEPTION 'permission denied: only the LakeSoul server takes row locks' USING ERRCODE = '42501';
    END IF;
    IF p_wait NOT IN ('wait', 'nowait', 'skip') THEN
        RAISE EXCEPTION 'lock_rows: unknown wait mode %', p_wait USING ERRCODE = '22023';
    END IF;
    IF p_keys IS NOT NULL AND cardinality(p_keys) = 0 THEN
        RETURN v_out;
    END IF;
    -- The partition's rows lock: shared for key lockers (and for escalated
    -- shared lockers), exclusive for an escalated exclusive locker.
    v_ok := lakesoul.advisory_pair(v_rows, v_escal AND p_exclusive, p_wait <> 'wait');
    IF NOT v_ok THEN
        IF p_wait = 'skip' THEN
            RETURN v_out;
        END IF;
        PERFORM lakesoul.row_lock_unavailable(p_table_id);
    END IF;
    IF v_escal THEN
        RETURN coalesce(p_keys, '{}');
    END IF;
    FOR v_key IN SELECT DISTINCT k FROM unnest(p_keys) k ORDER BY 1 LOOP
        v_id := lakesoul.row_lock_id(p_table_id, p_desc, v_key);
        v_ok := lakesoul.advisory_pair(v_id, p_exclusive, p_wait <> 'wait');
        IF v_ok THEN
            v_out := v_out || v_key;
        ELSIF p_wait = 'nowait' THEN
            PERFORM lakesoul.row_lock_unavailable(p_table_id);
        END IF;
    END LOOP;
    RETURN v_out;
END
$$;

-- advisory_pair takes the transaction advisory lock (hi, lo) of the 64-bit
-- id p_id in the two-int4 space; with p_try it does not wait and says whether
-- it got the lock. Internal to lock_rows (owner only).
CREATE OR REPLACE FUNCTION lakesoul.advisory_pair(p_id bigint, p_exclusive boolean, p_try boolean)
RETURNS boolean LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
DECLARE
    v_hi int := (p_id >> 32)::int;
    v_lo int := ((p_id & 4294967295) - 2147483648)::int;
BEGIN
    IF p_try THEN
        IF p_exclusive THEN
            RETURN pg_try_advisory_xact_lock(v_hi, v_lo);
        END IF;
        RETURN pg_try_advisory_xact_lock_shared(v_hi, v_lo);
    END IF;
    IF p_exclusive THEN
        PERFORM pg_advisory_xact_lock(v_hi, v_lo);
    ELSE
        PERFORM pg_advisory_xact_lock_shared(v_hi, v_lo);
    END IF;
    RETURN true;
END
$$;

-- row_lock_unavailable raises PostgreSQL's NOWAIT error for the table.
CREATE OR REPLACE FUNCTION lakesoul.row_lock_unavailable(p_table_id text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
BEGIN
    RAISE EXCEPTION 'could not obtain lock on row in relation "%"',
        coalesce((SELECT t.table_name FROM public.table_info t WHERE t.table_id = p_table_id), p_table_id)
        USING ERRCODE = '55P03';
END
$$;

-- commit_lock_rows takes the row locks a commit's partitions ask for
-- (exclusive, waiting), in partition order: "lock_keys" those rows,
-- "lock_rows": true every row of the partition. lakesoul.commit and
-- lakesoul.commit_many call it before any partition lock.
CREATE OR REPLACE FUNCTION lakesoul.commit_lock_rows(p_table_id text, p_partitions jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
DECLARE
    v_part jsonb;
BEGIN
    FOR v_part IN SELECT e FROM jsonb_array_elements(p_partitions) e
                   WHERE jsonb_typeof(e->'lock_keys') = 'array' OR (e->>'lock_rows')::boolean
                   ORDER BY e->>'partition_desc' LOOP
        PERFORM lakesoul.lock_rows(p_table_id, v_part->>'partition_desc',
                                   CASE WHEN (v_part->>'lock_rows')::boolean THEN NULL
                                        ELSE ARRAY(SELECT jsonb_array_elements_text(v_part->'lock_keys')::bigint) END,
                                   true, 'wait');
    END LOOP;
END
$$;
