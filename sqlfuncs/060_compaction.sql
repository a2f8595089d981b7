-- Compaction service: the job queue (claims with leases), the compaction
-- commit, and the lifecycle functions (TTL expiry, discarded-file
-- collection). Tables live in migration 000007; the commit protocol itself is
-- lakesoul.commit (020_commit.sql), called from here, never re-implemented.
--
-- Invariants:
--   * a job is claimed only in lakesoul.compaction_claim* under FOR UPDATE of
--     its row (SKIP LOCKED for the queue), and only when unclaimed or its
--     lease ran out; each claim gets a fresh token;
--   * lakesoul.compaction_commit commits only while its token still holds the
--     job (row locked FOR UPDATE for the whole transaction), and in the same
--     transaction records the discarded inputs and finishes the job: a
--     compaction is either committed with its bookkeeping or not at all;
--   * nothing here deletes a file: functions return paths, the caller deletes
--     them after the transaction committed.

-- compaction_due: LakeSoul's trigger condition (§1.10) for the partition's
-- latest version — at least 10 versions since its last CompactionCommit (or
-- since version 0).
CREATE OR REPLACE FUNCTION lakesoul.compaction_due(p_table_id text, p_desc text)
RETURNS boolean LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT coalesce(max(p.version) - coalesce(max(p.version) FILTER (WHERE p.commit_op = 'CompactionCommit'), 0) >= 10
                    AND max(p.version) >= 10, false)
      FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
$$;

-- compaction_claim takes the oldest ready job nobody holds (or whose lease
-- ran out) and returns it with a fresh claim token; no row when the queue has
-- nothing ready. outputs are object prefixes of earlier attempts, which the
-- claimer deletes (and then forgets with compaction_record_output).
CREATE OR REPLACE FUNCTION lakesoul.compaction_claim(p_worker text, p_lease_ms bigint)
RETURNS TABLE (table_id text, partition_desc text, claim_token uuid, attempts int, reason text, outputs text[])
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
#variable_conflict use_column
DECLARE
    v_table text;
    v_desc  text;
BEGIN
    SELECT j.table_id, j.partition_desc INTO v_table, v_desc
      FROM lakesoul.compaction_job j
     WHERE j.not_before <= clock_timestamp()
       AND (j.lease_until IS NULL OR j.lease_until < clock_timestamp())
     ORDER BY j.not_before, j.enqueued_at
     LIMIT 1
       FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
        UPDATE lakesoul.compaction_job j
           SET claimed_by = p_worker, claim_token = gen_random_uuid(),
               lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond',
               attempts = j.attempts + 1
         WHERE j.table_id = v_table AND j.partition_desc = v_desc
        RETURNING j.table_id, j.partition_desc, j.claim_token, j.attempts, j.reason, j.outputs;
END
$$;

-- compaction_claim_partition claims one partition's job for an on-demand
-- compaction, queueing it first if needed (reason 'manual'). Returns no row
-- while another claim on it holds a valid lease.
CREATE OR REPLACE FUNCTION lakesoul.compaction_claim_partition(p_table_id text, p_desc text, p_worker text, p_lease_ms bigint)
RETURNS TABLE (claim_token uuid, outputs text[])
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
#variable_conflict use_column
BEGIN
    INSERT INTO lakesoul.compaction_job (table_id, partition_desc, reason)
    VALUES (p_table_id, p_desc, 'manual')
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM lakesoul.compaction_job j
      WHERE j.table_id = p_table_id AND j.partition_desc = p_desc
        AND (j.lease_until IS NULL OR j.lease_until < clock_timestamp())
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
        UPDATE lakesoul.compaction_job j
           SET claimed_by = p_worker, claim_token = gen_random_uuid(),
               lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond',
               attempts = j.attempts + 1
         WHERE j.table_id = p_table_id AND j.partition_desc = p_desc
           AND (j.lease_until IS NULL OR j.lease_until < clock_timestamp())
        RETURNING j.claim_token, j.outputs;
END
$$;

-- compaction_renew extends a claim's lease; false when the token no longer
-- holds the job (taken over after expiry, or the job is gone).
CREATE OR REPLACE FUNCTION lakesoul.compaction_renew(p_token uuid, p_lease_ms bigint)
RETURNS boolean LANGUAGE sql VOLATILE
SET search_path = pg_catalog AS $$
    WITH u AS (
        UPDATE lakesoul.compaction_job j
           SET lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
         WHERE j.claim_token = p_token
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM u)
$$;

-- compaction_record_output notes an object prefix the attempt is about to
-- write into (before it writes) and forgets prefixes the claimer deleted.
-- False when the token no longer holds the job.
CREATE OR REPLACE FUNCTION lakesoul.compaction_record_output(p_token uuid, p_add text, p_forget text[])
RETURNS boolean LANGUAGE sql VOLATILE
SET search_path = pg_catalog AS $$
    WITH u AS (
        UPDATE lakesoul.compaction_job j
           SET outputs = ARRAY(SELECT o FROM unnest(j.outputs) o
                                WHERE o <> ALL (coalesce(p_forget, '{}')) AND o IS DISTINCT FROM p_add)
                         || CASE WHEN p_add IS NULL THEN '{}'::text[] ELSE ARRAY[p_add] END
         WHERE j.claim_token = p_token
        RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM u)
$$;

-- compaction_finish_job ends a claimed job whose compaction committed (or
-- was dropped by the commit rules): the row goes, unless the partition is due
-- again (writes kept landing, or an update dropped the compaction), then it is
-- queued afresh. Internal; callers hold the row.
CREATE OR REPLACE FUNCTION lakesoul.compaction_finish_job(p_token uuid)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
DECLARE
    v_table text;
    v_desc  text;
BEGIN
    SELECT j.table_id, j.partition_desc INTO v_table, v_desc
      FROM lakesoul.compaction_job j WHERE j.claim_token = p_token;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF lakesoul.compaction_due(v_table, v_desc) THEN
        UPDATE lakesoul.compaction_job j
           SET claimed_by = NULL, claim_token = NULL, lease_until = NULL, outputs = '{}',
               attempts = 0, last_error = NULL, reason = 'trigger',
               enqueued_at = now(), not_before = now()
         WHERE j.claim_token = p_token;
    ELSE
        DELETE FROM lakesoul.compaction_job j WHERE j.claim_token = p_token;
    END IF;
END
$$;

-- compaction_release gives a claim back. With p_error NULL the job is done
-- and its row goes: there was nothing to compact (the next commit past the
-- threshold queues the partition again; re-queueing it here would spin on a
-- partition that is due by version count but has nothing to merge).
-- Otherwise it is retried after p_retry_ms (the worker's backoff), keeping
-- its outputs for the next claimer to delete; with p_drop (an on-demand
-- compaction, whose failure is reported to the caller) the row goes unless
-- outputs remain to be cleaned up.
CREATE OR REPLACE FUNCTION lakesoul.compaction_release(p_token uuid, p_error text, p_retry_ms bigint, p_drop boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
BEGIN
    PERFORM 1 FROM lakesoul.compaction_job j WHERE j.claim_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF p_error IS NULL OR (p_drop AND cardinality((SELECT j.outputs FROM lakesoul.compaction_job j
                                                   WHERE j.claim_token = p_token)) = 0) THEN
        DELETE FROM lakesoul.compaction_job j WHERE j.claim_token = p_token;
        RETURN;
    END IF;
    UPDATE lakesoul.compaction_job j
       SET claimed_by = NULL, claim_token = NULL, lease_until = NULL, last_error = p_error,
           reason = CASE WHEN p_drop THEN 'trigger' ELSE j.reason END,
           not_before = clock_timestamp() + greatest(p_retry_ms, 0) * interval '1 millisecond'
     WHERE j.claim_token = p_token;
END
$$;

-- compaction_commit commits a compaction (LakeSoul §2.4 CompactionCommit,
-- through lakesoul.commit) while the claim token still holds the job (NULL
-- token: a compaction run without the queue, e.g. from tests or tools). In
-- the same transaction it records each committed partition's discarded input
-- files in discard_compressed_file_info (§6.5), re-buckets the table when
-- p_bucket_num is set (every partition must commit, or nothing does), and
-- finishes the job. p_discards is a JSON array of
-- {"partition_desc": text, "path": text}; p_intent and p_intent_token are the
-- write intent the compacted files were written under (see lakesoul.commit).
-- Returns lakesoul.commit's rows: version NULL for a partition whose
-- compaction was dropped because an update or another compaction landed
-- after the read.
DROP FUNCTION IF EXISTS lakesoul.compaction_commit(uuid, text, jsonb, jsonb, int);
CREATE OR REPLACE FUNCTION lakesoul.compaction_commit(p_token uuid, p_table_id text, p_parts jsonb,
                                                      p_discards jsonb, p_bucket_num int DEFAULT NULL,
                                                      p_intent text DEFAULT NULL, p_intent_token uuid DEFAULT NULL)
RETURNS TABLE (partition_desc text, version int) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_path text;
    v_now  bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    r      record;
BEGIN
    IF p_token IS NOT NULL THEN
        PERFORM 1 FROM lakesoul.compaction_job j WHERE j.claim_token = p_token FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'compaction claim % was lost (its lease ran out and another worker took the job)', p_token
                USING ERRCODE = 'LSC01';
        END IF;
    END IF;
    IF p_bucket_num IS NOT NULL THEN
        -- Writers hold the row FOR SHARE while committing: take it first, so
        -- no commit interleaves with the re-bucketing (and none deadlocks).
        SELECT t.table_path INTO v_path FROM public.table_info t WHERE t.table_id = p_table_id FOR UPDATE;
        -- Every partition with data must be rewritten from its latest
        -- version: a commit kept after the rewrite would still be bucketed
        -- the old way.
        IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_parts) e
                    WHERE (SELECT max(p.version) FROM public.partition_info p
                            WHERE p.table_id = p_table_id AND p.partition_desc = e->>'partition_desc')
                          IS DISTINCT FROM (e->>'read_version')::int)
           OR EXISTS (SELECT 1 FROM (SELECT DISTINCT ON (p.partition_desc) p.partition_desc, p.snapshot
                                       FROM public.partition_info p WHERE p.table_id = p_table_id
                                      ORDER BY p.partition_desc, p.version DESC) l
                       WHERE cardinality(l.snapshot) > 0
                         AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_parts) e
                                          WHERE e->>'partition_desc' = l.partition_desc)) THEN
            RAISE EXCEPTION 're-bucketing %: the table changed while it was rewritten', p_table_id
                USING ERRCODE = '40001';
        END IF;
    ELSE
        SELECT t.table_path INTO v_path FROM public.table_info t WHERE t.table_id = p_table_id;
    END IF;
    FOR r IN SELECT c.partition_desc AS d, c.version AS v FROM lakesoul.commit(p_table_id, 'CompactionCommit', p_parts,
                                                                         p_intent => p_intent, p_intent_token => p_intent_token) c LOOP
        IF r.v IS NOT NULL THEN
            INSERT INTO public.discard_compressed_file_info (file_path, table_path, partition_desc, timestamp, t_date)
            SELECT e->>'path', v_path, r.d, v_now, current_date
              FROM jsonb_array_elements(coalesce(p_discards, '[]')) e
             WHERE e->>'partition_desc' = r.d
            ON CONFLICT (file_path) DO NOTHING;
        ELSIF p_bucket_num IS NOT NULL THEN
            RAISE EXCEPTION 're-bucketing %: partition % changed while it was rewritten', p_table_id, r.d
                USING ERRCODE = '40001';
        END IF;
        partition_desc := r.d;
        version := r.v;
        RETURN NEXT;
    END LOOP;
    IF p_bucket_num IS NOT NULL THEN
        UPDATE public.table_info t
           SET properties = (coalesce(t.properties::jsonb, '{}') || jsonb_build_object('hashBucketNum', p_bucket_num::text))::json
         WHERE t.table_id = p_table_id;
    END IF;
    IF p_token IS NOT NULL THEN
        PERFORM lakesoul.compaction_finish_job(p_token);
    END IF;
END
$$;

-- compaction_partition_state describes a partition's latest version: its
-- number, commit op and how many commits its snapshot lists (a partition
-- whose latest version is one CompactionCommit is fully compacted). No row
-- for an unknown partition.
CREATE OR REPLACE FUNCTION lakesoul.compaction_partition_state(p_table_id text, p_desc text)
RETURNS TABLE (version int, commit_op text, commits int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT p.version, p.commit_op, cardinality(p.snapshot)
      FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
     ORDER BY p.version DESC LIMIT 1
$$;

-- compact_targets resolves CALL lakesoul.compact's arguments as the calling
-- role: the table (name in the session's lake search path, or id) and the
-- partition (one, checked to exist, or every partition).
CREATE OR REPLACE FUNCTION lakesoul.compact_targets(tbl text, "partition" text DEFAULT NULL, new_bucket_num int DEFAULT NULL)
RETURNS TABLE (table_id text, partition_desc text, bucket_num int)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id   text := lakesoul.resolve_table($1);
    v_part text := $2;
BEGIN
    IF new_bucket_num IS NOT NULL AND new_bucket_num < 1 THEN
        RAISE EXCEPTION 'new_bucket_num must be positive' USING ERRCODE = '22023';
    END IF;
    IF new_bucket_num IS NOT NULL AND v_part IS NOT NULL THEN
        RAISE EXCEPTION 're-bucketing rewrites every partition; leave out partition' USING ERRCODE = '22023';
    END IF;
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, $1);
    END IF;
    RETURN QUERY
        SELECT DISTINCT v_id, p.partition_desc, new_bucket_num
          FROM public.partition_info p
         WHERE p.table_id = v_id AND (v_part IS NULL OR p.partition_desc = v_part)
         ORDER BY 2;
END
$$;

-- compaction_task_claim claims a periodic service task when its interval
-- has passed since the last run and no other worker holds it.
CREATE OR REPLACE FUNCTION lakesoul.compaction_task_claim(p_task text, p_worker text, p_interval_ms bigint, p_lease_ms bigint)
RETURNS boolean LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog AS $$
BEGIN
    INSERT INTO lakesoul.compaction_task (task) VALUES (p_task) ON CONFLICT DO NOTHING;
    UPDATE lakesoul.compaction_task t
       SET claimed_by = p_worker, lease_until = clock_timestamp() + p_lease_ms * interval '1 millisecond'
     WHERE t.task = p_task
       AND (t.lease_until IS NULL OR t.lease_until < clock_timestamp())
       AND (t.last_run IS NULL OR t.last_run + p_interval_ms * interval '1 millisecond' <= clock_timestamp());
    RETURN FOUND;
END
$$;

-- compaction_task_done records a task run and releases it.
CREATE OR REPLACE FUNCTION lakesoul.compaction_task_done(p_task text, p_worker text)
RETURNS void LANGUAGE sql VOLATILE
SET search_path = pg_catalog AS $$
    UPDATE lakesoul.compaction_task t
       SET last_run = clock_timestamp(), claimed_by = NULL, lease_until = NULL
     WHERE t.task = p_task AND t.claimed_by = p_worker
$$;

-- ttl_deadline_ms is LakeSoul's TTL deadline (§6.6): midnight (session time
-- zone) of today minus p_days days, in partition_info.timestamp units.
CREATE OR REPLACE FUNCTION lakesoul.ttl_deadline_ms(p_days numeric)
RETURNS bigint LANGUAGE sql STABLE
SET search_path = pg_catalog AS $$
    SELECT lakesoul.epoch_ms(date_trunc('day', now()) - p_days * interval '1 day')
$$;

-- expire_partition applies partition.ttl (§6.6) to one partition: when its
-- latest version was committed before p_deadline_ms, every version, commit
-- row, discarded-file row and job of the partition is removed and the paths
-- its commits added are returned for the caller to delete. Otherwise nothing.
CREATE OR REPLACE FUNCTION lakesoul.expire_partition(p_table_id text, p_desc text, p_deadline_ms bigint)
RETURNS SETOF text LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_ts   bigint;
    v_path text;
BEGIN
    PERFORM lakesoul.partition_lock(p_table_id, p_desc);
    SELECT p.timestamp INTO v_ts FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
     ORDER BY p.version DESC LIMIT 1;
    IF NOT FOUND OR v_ts >= p_deadline_ms THEN
        RETURN;
    END IF;
    SELECT t.table_path INTO v_path FROM public.table_info t WHERE t.table_id = p_table_id;
    RETURN QUERY
        SELECT DISTINCT o.path
          FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
         WHERE d.table_id = p_table_id AND d.partition_desc = p_desc AND o.file_op = 'add';
    DELETE FROM public.partition_info p WHERE p.table_id = p_table_id AND p.partition_desc = p_desc;
    DELETE FROM public.data_commit_info d WHERE d.table_id = p_table_id AND d.partition_desc = p_desc;
    DELETE FROM public.discard_compressed_file_info x WHERE x.table_path = v_path AND x.partition_desc = p_desc;
    DELETE FROM lakesoul.partition_registry r WHERE r.table_id = p_table_id AND r.partition_desc = p_desc;
    DELETE FROM lakesoul.compaction_job j WHERE j.table_id = p_table_id AND j.partition_desc = p_desc;
END
$$;

-- expire_redundant applies compaction.ttl (§6.6) to one partition: the
-- history before its newest compaction or update committed before
-- p_deadline_ms is removed through lakesoul.cleanup_partition (which keeps
-- every remaining version readable). Returns the files to delete.
CREATE OR REPLACE FUNCTION lakesoul.expire_redundant(p_table_id text, p_desc text, p_deadline_ms bigint)
RETURNS SETOF text LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_base  int;
    v_ms    bigint;
    v_paths text[];
BEGIN
    SELECT p.version INTO v_base FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
       AND p.commit_op IN ('CompactionCommit', 'UpdateCommit') AND p.timestamp < p_deadline_ms
     ORDER BY p.version DESC LIMIT 1;
    IF v_base IS NULL THEN
        RETURN;
    END IF;
    SELECT max(p.timestamp) INTO v_ms FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version < v_base;
    IF v_ms IS NULL THEN
        RETURN;
    END IF;
    v_paths := ARRAY(SELECT f FROM lakesoul.cleanup_partition(p_table_id, p_desc, v_ms, false) f);
    DELETE FROM public.discard_compressed_file_info x
     USING public.table_info t
     WHERE t.table_id = p_table_id AND x.table_path = t.table_path AND x.file_path = ANY (v_paths);
    RETURN QUERY SELECT unnest(v_paths);
END
$$;

-- collect_discarded removes the discard_compressed_file_info rows of the
-- tables p_table_ids (NULL: every table) recorded before p_cutoff_ms whose
-- file no commit of its partition mentions any more (the history that read
-- it was cleaned up) and returns each row's table and file, for the caller
-- to delete after this transaction committed. Rows whose file older
-- versions still read stay until that history is cleaned up (CALL
-- lakesoul.cleanup or compaction.ttl), so time travel never meets a missing
-- file. Rows of tables LakeSoul-Go does not know stay untouched. A row
-- proves nothing by itself (LakeSoul's clients write them too): the caller
-- deletes a file only if it is inside the directory of the row's table and
-- no commit of that table, in any partition and spelling, mentions it
-- (compaction/lifecycle.go).
DROP FUNCTION IF EXISTS lakesoul.discard_collect(bigint);
CREATE OR REPLACE FUNCTION lakesoul.collect_discarded(p_cutoff_ms bigint, p_table_ids text[] DEFAULT NULL)
RETURNS TABLE (table_id text, file_path text) LANGUAGE sql VOLATILE
SET search_path = pg_catalog, public AS $$
    WITH gone AS (
        DELETE FROM public.discard_compressed_file_info x
         USING public.table_info t
         WHERE t.table_path = x.table_path
           AND (p_table_ids IS NULL OR t.table_id = ANY (p_table_ids))
           AND x.timestamp < p_cutoff_ms
           AND NOT EXISTS (SELECT 1 FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
                            WHERE d.table_id = t.table_id AND d.partition_desc = x.partition_desc
                              AND o.path = x.file_path)
        RETURNING t.table_id, x.file_path)
    SELECT g.table_id, g.file_path FROM gone g
$$;

-- table_known_paths lists every path the catalog knows for a table: files
-- any commit row mentions (committed or not), discarded files awaiting
-- collection and outputs of compaction attempts still claimed. Orphan
-- collection deletes only old files outside this set.
CREATE OR REPLACE FUNCTION lakesoul.table_known_paths(p_table_id text)
RETURNS SETOF text LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT o.path FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
     WHERE d.table_id = p_table_id
    UNION
    SELECT x.file_path FROM public.discard_compressed_file_info x
      JOIN public.table_info t ON t.table_path = x.table_path
     WHERE t.table_id = p_table_id
$$;
