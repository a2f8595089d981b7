-- The commit protocol, in one place. Go (and any other client that can call SQL)
-- calls lakesoul.commit; nothing re-implements it client-side.
--
-- Both of LakeSoul's phases happen in this one call (one transaction):
--   phase 1: a data_commit_info row per touched partition;
--   phase 2: a new partition_info version per partition.
-- The phase-1 row is written with committed = true (false only for a
-- compaction whose partition was abandoned), since both phases commit
-- together. A multi-partition commit is therefore atomic for readers.
--
-- Invariants:
--   * versions of a partition are allocated only while holding the partition's
--     advisory transaction lock, so two LakeSoul-Go commits never race on max+1;
--     partitions are locked in partition_desc order, so commits never deadlock;
--   * a version collision on partition_info can still come from a client that
--     does not take the lock (LakeSoul's JVM/Rust clients); the insert uses ON
--     CONFLICT DO NOTHING (no subtransaction) and a collision is retried (at
--     most 5 attempts, as LakeSoul does) by re-reading the latest version;
--   * the table_info row is held FOR SHARE for the whole commit, so a concurrent
--     DROP TABLE waits, and a commit to a dropped table fails with 42P01;
--   * re-committing a commit id that already committed is a no-op returning the
--     version it created; reusing a commit id with different files is an error.
--     So a client whose connection broke during the call may simply call again
--     with the same commit ids: it gets the first call's result or commits now;
--   * partition_info.timestamp is taken (clock_timestamp(), ms) while holding
--     the partition's lock and never goes below the previous version's, so
--     within a partition timestamps never decrease as versions increase and
--     time travel by timestamp (max version with timestamp < T) is monotone.
--
-- Conflict rules (LakeSoul §2.4/§2.5, "middle" = ops of the versions landed
-- after the writer's read version):
--   Append/Merge  with a read version: a middle Delete, or a middle op of the
--                 other kind (Merge for Append, Append for Merge) → 40001;
--                 otherwise rebase onto the latest version (accumulate).
--   Compaction    read = latest → replace; a middle Update/Compaction/Delete →
--                 the partition is dropped from the commit (version NULL);
--                 otherwise own commit ++ commits added after the read.
--   Update        read = latest → replace; middle Update or Delete, or a mix
--                 containing Compaction → 40001; middle = {Compaction} →
--                 replace, unless a compaction had absorbed concurrent writes
--                 (40001); middle of Append/Merge only → own commit ++ commits
--                 added after the read (nothing that landed is lost).
--                 LakeSoul exempts read version 0 from the Update rule because
--                 its clients cannot tell "read version 0" from "no read
--                 version"; an explicit read_version here always counts.
--                 Without a read version an Update replaces the snapshot.
--
-- p_partitions is a JSON array of objects:
--   {"partition_desc": text, "commit_id": uuid,
--    "file_ops": [{"path": text, "file_op": "add"|"del", "size": bigint, "file_exist_cols": text}],
--    "read_version": int or null,   -- version the writer based its work on
--    "expect_version": int,         -- optional: fail with LK001 unless the latest
--                                   --   version is this one (-1: no version yet)
--    "lock_keys": [bigint],         -- optional: row locks to hold (007_row_locks.sql)
--    "timestamp": bigint or null}   -- client clock (ms) for data_commit_info
-- Result: one row per partition with the version it got; version is NULL for a
-- compaction whose partition was dropped from the commit (LakeSoul §2.4).

CREATE OR REPLACE FUNCTION lakesoul.commit_one_partition(
    p_table_id text, p_domain text, p_commit_op text, p_part jsonb)
RETURNS int LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_desc      text := p_part->>'partition_desc';
    v_commit_id uuid := (p_part->>'commit_id')::uuid;
    v_read      int  := (p_part->>'read_version')::int;
    v_ops       public.data_file_op[];
    v_existing  public.data_commit_info%ROWTYPE;
    v_cur_ver   int;
    v_cur_snap  uuid[];
    v_cur_op    text;
    v_cur_ts    bigint;
    v_ts        bigint;
    v_read_snap uuid[];
    v_middle    text[];
    v_new_snap  uuid[];
    v_attempt   int := 0;
    v_seen      boolean;
BEGIN
    IF v_desc IS NULL OR v_commit_id IS NULL THEN
        RAISE EXCEPTION 'commit: partition_desc and commit_id are required' USING ERRCODE = '22023';
    END IF;
    SELECT coalesce(array_agg(ROW(o->>'path', o->>'file_op', (o->>'size')::bigint, o->>'file_exist_cols')::public.data_file_op
                              ORDER BY n), '{}')
      INTO v_ops
      FROM jsonb_array_elements(coalesce(p_part->'file_ops', '[]')) WITH ORDINALITY AS e(o, n);
    IF EXISTS (SELECT 1 FROM unnest(v_ops) op WHERE op.file_op NOT IN ('add', 'del') OR op.path IS NULL) THEN
        RAISE EXCEPTION 'commit %: file_op must be add or del and path set', v_commit_id USING ERRCODE = '22023';
    END IF;
    -- A writer that hashed its rows with a bucket count the table no longer
    -- has (it was re-bucketed meanwhile) must not commit: its files would mix
    -- two layouts. Writers that say which count they used are checked; the
    -- caller holds the table_info row, so the count cannot change under us.
    -- Compactions are exempt: re-bucketing itself commits the new layout, and
    -- an ordinary compaction racing it is dropped by the CompactionCommit rules.
    IF p_commit_op <> 'CompactionCommit' AND p_part ? 'bucket_num' AND EXISTS (
           SELECT 1 FROM public.table_info t
            WHERE t.table_id = p_table_id
              AND coalesce(t.properties::jsonb->>'hashBucketNum', '-1') <> p_part->>'bucket_num') THEN
        RAISE EXCEPTION 'commit %: the table was re-bucketed while the write ran; retry it', v_commit_id
            USING ERRCODE = '40001';
    END IF;

    PERFORM lakesoul.xact_lock(hashtextextended(p_table_id || chr(31) || v_desc, 0));

    -- Idempotence: a commit id seen before.
    SELECT * INTO v_existing FROM public.data_commit_info
     WHERE table_id = p_table_id AND partition_desc = v_desc AND commit_id = v_commit_id;
    v_seen := FOUND;
    IF v_seen THEN
        IF v_existing.file_ops IS DISTINCT FROM v_ops OR v_existing.commit_op IS DISTINCT FROM p_commit_op THEN
            RAISE EXCEPTION 'commit id % was already used with different files', v_commit_id USING ERRCODE = '23505';
        END IF;
        IF v_existing.committed THEN
            RETURN (SELECT min(version) FROM public.partition_info
                     WHERE table_id = p_table_id AND partition_desc = v_desc AND v_commit_id = ANY (snapshot));
        END IF;
    END IF;

    -- Phase 2 (the new version) is decided first; the phase-1 row is then
    -- written once with its final "committed" flag. Both land in this one
    -- transaction, so readers never see one without the other, and no row is
    -- written twice (data_commit_info has REPLICA IDENTITY FULL: an UPDATE
    -- would log the whole old row).
    LOOP
        v_attempt := v_attempt + 1;
        SELECT version, snapshot, commit_op, timestamp INTO v_cur_ver, v_cur_snap, v_cur_op, v_cur_ts
          FROM public.partition_info
         WHERE table_id = p_table_id AND partition_desc = v_desc
         ORDER BY version DESC LIMIT 1;
        IF NOT FOUND THEN
            v_cur_ver := -1; v_cur_snap := '{}'; v_cur_op := NULL; v_cur_ts := NULL;
        END IF;
        -- A read-modify-write commit states the version it checked its rows
        -- against (engine/rmw.go); any other latest version means commits
        -- landed since, which the writer must check before committing.
        IF p_part ? 'expect_version' AND v_cur_ver <> (p_part->>'expect_version')::int THEN
            RAISE EXCEPTION 'commit %: partition % is at version %, not %', v_commit_id, v_desc, v_cur_ver,
                p_part->>'expect_version' USING ERRCODE = 'LK001', DETAIL = v_cur_ver::text;
        END IF;

        IF v_read IS NOT NULL AND v_read > v_cur_ver THEN
            RAISE EXCEPTION 'commit %: read version % of partition % does not exist', v_commit_id, v_read, v_desc
                USING ERRCODE = '22023';
        END IF;
        IF v_read IS NOT NULL AND v_read < v_cur_ver THEN
            SELECT coalesce(snapshot, '{}') INTO v_read_snap FROM public.partition_info
             WHERE table_id = p_table_id AND partition_desc = v_desc AND version = v_read;
            SELECT array_agg(DISTINCT commit_op) INTO v_middle FROM public.partition_info
             WHERE table_id = p_table_id AND partition_desc = v_desc AND version > v_read AND version <= v_cur_ver;
        ELSE
            v_read_snap := v_cur_snap; v_middle := '{}';
        END IF;

        CASE p_commit_op
        WHEN 'AppendCommit', 'MergeCommit' THEN
            -- Accumulate. With a read version, a concurrent commit of the other
            -- kind (or a delete) is a conflict, as in LakeSoul's retry rules.
            IF v_read IS NOT NULL AND v_read < v_cur_ver AND (
                   'DeleteCommit' = ANY (v_middle)
                OR (p_commit_op = 'AppendCommit' AND 'MergeCommit' = ANY (v_middle))
                OR (p_commit_op = 'MergeCommit' AND 'AppendCommit' = ANY (v_middle))) THEN
                RAISE EXCEPTION 'commit % conflicts with a concurrent % on partition %', v_commit_id,
                    array_to_string(v_middle, ','), v_desc USING ERRCODE = '40001';
            END IF;
            v_new_snap := v_cur_snap || v_commit_id;
        WHEN 'CompactionCommit' THEN
            IF v_read IS NULL THEN
                RAISE EXCEPTION 'commit %: CompactionCommit needs read_version', v_commit_id USING ERRCODE = '22023';
            END IF;
            IF v_read = v_cur_ver THEN
                v_new_snap := ARRAY[v_commit_id];
            ELSIF 'UpdateCommit' = ANY (v_middle) OR 'CompactionCommit' = ANY (v_middle) OR 'DeleteCommit' = ANY (v_middle) THEN
                -- Compaction result abandoned: its phase-1 row stays, uncommitted.
                IF NOT v_seen THEN
                    INSERT INTO public.data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op,
                                                         committed, timestamp, domain)
                    VALUES (p_table_id, v_desc, v_commit_id, v_ops, p_commit_op, false,
                            coalesce((p_part->>'timestamp')::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint),
                            p_domain);
                END IF;
                RETURN NULL;
            ELSE
                v_new_snap := ARRAY[v_commit_id] ||
                    ARRAY(SELECT c FROM unnest(v_cur_snap) WITH ORDINALITY u(c, n)
                           WHERE c <> ALL (v_read_snap) ORDER BY n);
            END IF;
        WHEN 'UpdateCommit' THEN
            v_new_snap := ARRAY[v_commit_id];
            IF v_read IS NOT NULL AND v_read < v_cur_ver THEN
                IF 'UpdateCommit' = ANY (v_middle) OR 'DeleteCommit' = ANY (v_middle)
                   OR (cardinality(v_middle) > 1 AND 'CompactionCommit' = ANY (v_middle)) THEN
                    RAISE EXCEPTION 'commit % conflicts with other data writing tasks on partition %', v_commit_id, v_desc
                        USING ERRCODE = '40001';
                END IF;
                IF v_middle = ARRAY['CompactionCommit'] THEN
                    IF EXISTS (SELECT 1 FROM public.partition_info
                                WHERE table_id = p_table_id AND partition_desc = v_desc
                                  AND version > v_read AND version <= v_cur_ver AND cardinality(snapshot) > 1) THEN
                        RAISE EXCEPTION 'commit % conflicts with a compaction that absorbed concurrent writes on partition %',
                            v_commit_id, v_desc USING ERRCODE = '40001';
                    END IF;
                ELSE
                    -- Only appends/upserts landed: keep them after the update.
                    v_new_snap := v_new_snap ||
                        ARRAY(SELECT c FROM unnest(v_cur_snap) WITH ORDINALITY u(c, n)
                               WHERE c <> ALL (v_read_snap) ORDER BY n);
                END IF;
            END IF;
        WHEN 'DeleteCommit' THEN
            IF v_cur_ver < 0 THEN
                RAISE EXCEPTION 'partition % of table % does not exist', v_desc, p_table_id USING ERRCODE = '42704';
            END IF;
            v_new_snap := '{}';
        ELSE
            RAISE EXCEPTION 'unknown commit op %', p_commit_op USING ERRCODE = '22023';
        END CASE;

        v_ts := greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint, v_cur_ts);
        -- ON CONFLICT instead of an exception block: no subtransaction per commit.
        INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, timestamp, snapshot, expression, domain)
        VALUES (p_table_id, v_desc, v_cur_ver + 1, p_commit_op, v_ts, v_new_snap, '', p_domain)
        ON CONFLICT (table_id, partition_desc, version) DO NOTHING;
        EXIT WHEN FOUND;
        IF v_attempt >= 5 THEN
            RAISE EXCEPTION 'commit % failed: reached the limit of 5 attempts on partition %', v_commit_id, v_desc
                USING ERRCODE = '40001';
        END IF;
    END LOOP;

    IF v_seen THEN
        UPDATE public.data_commit_info SET committed = true
         WHERE table_id = p_table_id AND partition_desc = v_desc AND commit_id = v_commit_id;
    ELSE
        INSERT INTO public.data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op,
                                             committed, timestamp, domain)
        VALUES (p_table_id, v_desc, v_commit_id, v_ops, p_commit_op, true,
                coalesce((p_part->>'timestamp')::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint),
                p_domain);
    END IF;
    RETURN v_cur_ver + 1;
END
$$;

-- lakesoul.commit(table, op, partitions [, defer_notify [, intent, intent_token]]).
-- With defer_notify the compaction notification a version triggers (see
-- migration 000005) is not sent inside this transaction but returned in
-- compaction_notify, for the caller to send after the commit
-- (lakesoul.notify_compaction): NOTIFY inside a commit serialises all
-- notifying commits of the database through their WAL flush. Without it, the
-- trigger notifies as LakeSoul's does.
--
-- intent is the write intent the added files were written under
-- (090_write_intents.sql): the commit consumes it first, so that a
-- concurrent orphan collection either sees the commit or leaves the files
-- alone, and fails (55000) if it expired. Writers of new files pass one;
-- without one, nothing protected the files from orphan collection.
DROP FUNCTION IF EXISTS lakesoul.commit(text, text, jsonb);
DROP FUNCTION IF EXISTS lakesoul.commit(text, text, jsonb, boolean);
CREATE OR REPLACE FUNCTION lakesoul.commit(p_table_id text, p_commit_op text, p_partitions jsonb,
                                           p_defer_notify boolean DEFAULT false,
                                           p_intent text DEFAULT NULL, p_intent_token uuid DEFAULT NULL)
RETURNS TABLE (partition_desc text, version int, compaction_notify text) LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_domain text;
    v_part   jsonb;
BEGIN
    IF p_commit_op NOT IN ('AppendCommit', 'MergeCommit', 'CompactionCommit', 'UpdateCommit', 'DeleteCommit') THEN
        RAISE EXCEPTION 'unknown commit op %', p_commit_op USING ERRCODE = '22023';
    END IF;
    IF p_intent IS NOT NULL THEN
        PERFORM lakesoul.write_intent_verify(p_table_id, p_partitions, p_intent,
                                             lakesoul.write_intent_consume(p_intent, p_intent_token));
    END IF;
    SELECT t.domain INTO v_domain FROM public.table_info t WHERE t.table_id = p_table_id FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    IF (SELECT count(DISTINCT e->>'partition_desc') <> count(*) FROM jsonb_array_elements(p_partitions) e) THEN
        RAISE EXCEPTION 'commit: a partition appears twice' USING ERRCODE = '22023';
    END IF;
    -- Row locks before any partition lock (007_row_locks.sql).
    PERFORM lakesoul.commit_lock_rows(p_table_id, p_partitions);
    IF p_defer_notify THEN
        PERFORM set_config('lakesoul.defer_compaction_notify', 'on', true);
    END IF;
    FOR v_part IN SELECT e FROM jsonb_array_elements(p_partitions) e ORDER BY e->>'partition_desc' LOOP
        partition_desc := v_part->>'partition_desc';
        IF p_defer_notify THEN
            PERFORM set_config('lakesoul.deferred_compaction_notify', '', true);
        END IF;
        version := lakesoul.commit_one_partition(p_table_id, v_domain, p_commit_op, v_part);
        compaction_notify := CASE WHEN p_defer_notify
                                  THEN nullif(current_setting('lakesoul.deferred_compaction_notify', true), '') END;
        RETURN NEXT;
    END LOOP;
    IF p_defer_notify THEN
        PERFORM set_config('lakesoul.defer_compaction_notify', '', true);
    END IF;
END
$$;

-- notify_compaction sends deferred compaction notifications. The transaction
-- it runs in has nothing durable to write, so it does not wait for a WAL
-- flush (synchronous_commit off) while it holds PostgreSQL's notify lock.
CREATE OR REPLACE FUNCTION lakesoul.notify_compaction(p_payloads text[])
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_notify('lakesoul_compaction_notify', p) FROM unnest(p_payloads) p WHERE p IS NOT NULL;
END
$$;
