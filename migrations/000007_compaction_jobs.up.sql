-- Compaction service bookkeeping (LakeSoul §1.10, §6, §8.1). LakeSoul's
-- tables keep their columns; this adds tables and views in schema "lakesoul"
-- and two triggers on LakeSoul's tables, so that writes of any client (also
-- LakeSoul's JVM/Rust ones) feed the queue.
--
-- Invariants:
--   * a partition has at most one job row (primary key); a job is claimed by
--     setting claim_token and lease_until (sqlfuncs/060_compaction.sql), in a
--     short transaction that locks the row FOR UPDATE SKIP LOCKED, so two
--     workers never hold a claim on the same partition at once;
--   * a claim whose lease ran out may be taken over; the old token is then
--     worthless: lakesoul.compaction_commit refuses it, so a stalled or dead
--     worker can never commit after another one took its job;
--   * outputs lists the object prefixes attempts wrote into; the next claimer
--     deletes them (the attempt that wrote them can no longer commit).

CREATE TABLE IF NOT EXISTS lakesoul.compaction_job (
    table_id       text        NOT NULL,
    partition_desc text        NOT NULL,
    -- why it was queued: 'trigger' (versions since the last compaction) or
    -- 'manual' (CALL lakesoul.compact)
    reason         text        NOT NULL DEFAULT 'trigger',
    enqueued_at    timestamptz NOT NULL DEFAULT now(),
    -- a failed job waits (exponential backoff) until not_before
    not_before     timestamptz NOT NULL DEFAULT now(),
    attempts       int         NOT NULL DEFAULT 0,
    claimed_by     text,
    claim_token    uuid UNIQUE,
    lease_until    timestamptz,
    outputs        text[]      NOT NULL DEFAULT '{}',
    last_error     text,
    PRIMARY KEY (table_id, partition_desc)
);
CREATE INDEX IF NOT EXISTS compaction_job_ready_index ON lakesoul.compaction_job (not_before, enqueued_at);

-- Periodic service tasks (TTL expiry, discarded-file and orphan collection):
-- one row per task, claimed with a lease like jobs, so one worker of all
-- those sharing the catalog runs each task per interval.
CREATE TABLE IF NOT EXISTS lakesoul.compaction_task (
    task        text PRIMARY KEY,
    last_run    timestamptz,
    claimed_by  text,
    lease_until timestamptz
);

-- compaction_enqueue queues a compaction job with LakeSoul's trigger
-- condition (§1.10): at least 10 versions since the partition's last
-- CompactionCommit (or since version 0 when it never had one). An existing
-- job row is left alone (queued or running). SECURITY DEFINER: every role
-- that may commit feeds the queue without rights on schema lakesoul.
CREATE OR REPLACE FUNCTION lakesoul.compaction_enqueue() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    v_last int;
BEGIN
    SELECT p.version INTO v_last FROM public.partition_info p
     WHERE p.table_id = NEW.table_id AND p.partition_desc = NEW.partition_desc
       AND p.commit_op = 'CompactionCommit' AND p.version <> NEW.version
     ORDER BY p.version DESC LIMIT 1;
    IF (v_last IS NOT NULL AND NEW.version - v_last >= 10) OR (v_last IS NULL AND NEW.version >= 10) THEN
        INSERT INTO lakesoul.compaction_job (table_id, partition_desc)
        VALUES (NEW.table_id, NEW.partition_desc)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS compaction_job_enqueue ON public.partition_info;
CREATE TRIGGER compaction_job_enqueue
    AFTER INSERT ON public.partition_info
    FOR EACH ROW WHEN (NEW.commit_op <> 'CompactionCommit' AND NEW.version >= 10)
    EXECUTE FUNCTION lakesoul.compaction_enqueue();

-- A dropped table takes its jobs and its discarded-file rows along (LakeSoul
-- §6.5: drop table deletes the discard rows of the table path); its files are
-- removed by whoever dropped it.
CREATE OR REPLACE FUNCTION lakesoul.compaction_table_dropped() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM lakesoul.compaction_job j WHERE j.table_id = OLD.table_id;
    DELETE FROM public.discard_compressed_file_info d WHERE d.table_path = OLD.table_path;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS compaction_table_dropped ON public.table_info;
CREATE TRIGGER compaction_table_dropped
    AFTER DELETE ON public.table_info
    FOR EACH ROW EXECUTE FUNCTION lakesoul.compaction_table_dropped();

-- Backfill: partitions already due when this migration runs.
INSERT INTO lakesoul.compaction_job (table_id, partition_desc)
SELECT l.table_id, l.partition_desc
  FROM (SELECT p.table_id, p.partition_desc, max(p.version) AS latest,
               max(p.version) FILTER (WHERE p.commit_op = 'CompactionCommit') AS last_compaction
          FROM public.partition_info p GROUP BY p.table_id, p.partition_desc) l
 WHERE l.latest - coalesce(l.last_compaction, 0) >= 10
ON CONFLICT DO NOTHING;

-- Data asset statistics (LakeSoul §8.1), computed from the catalog on read
-- instead of by a change-data job. Per partition, over the live files of its
-- latest version: file counts and bytes, and "base" files (written by a
-- CompactionCommit) versus delta files (everything else).
CREATE OR REPLACE VIEW lakesoul.partition_level_assets AS
WITH latest AS (
    SELECT DISTINCT ON (p.table_id, p.partition_desc)
           p.table_id, p.partition_desc, p.version, p.timestamp, p.snapshot
      FROM public.partition_info p
     ORDER BY p.table_id, p.partition_desc, p.version DESC
), ops AS (
    SELECT l.table_id, l.partition_desc, s.n AS commit_n, o.n AS op_n,
           o.path, o.file_op, o.size, d.commit_op
      FROM latest l
     CROSS JOIN LATERAL unnest(l.snapshot) WITH ORDINALITY AS s(commit_id, n)
      JOIN public.data_commit_info d
        ON d.table_id = l.table_id AND d.partition_desc = l.partition_desc AND d.commit_id = s.commit_id
     CROSS JOIN LATERAL unnest(d.file_ops) WITH ORDINALITY AS o(path, file_op, size, file_exist_cols, n)
), live AS (
    SELECT a.table_id, a.partition_desc, a.size, a.commit_op
      FROM ops a
     WHERE a.file_op = 'add'
       AND NOT EXISTS (SELECT 1 FROM ops b
                        WHERE b.table_id = a.table_id AND b.partition_desc = a.partition_desc
                          AND b.path = a.path AND b.file_op = 'del'
                          AND (b.commit_n, b.op_n) > (a.commit_n, a.op_n))
)
SELECT l.table_id,
       l.partition_desc,
       l.version,
       timestamptz 'epoch' + l.timestamp * interval '1 millisecond'               AS last_commit_at,
       cardinality(l.snapshot)                                                    AS commit_counts,
       count(f.size)                                                              AS file_counts,
       coalesce(sum(f.size), 0)::bigint                                           AS file_total_size,
       count(f.size) FILTER (WHERE f.commit_op = 'CompactionCommit')              AS file_base_count,
       coalesce(sum(f.size) FILTER (WHERE f.commit_op = 'CompactionCommit'), 0)::bigint AS file_base_size,
       count(f.size) FILTER (WHERE f.commit_op <> 'CompactionCommit')             AS file_delta_count,
       coalesce(sum(f.size) FILTER (WHERE f.commit_op <> 'CompactionCommit'), 0)::bigint AS file_delta_size
  FROM latest l
  LEFT JOIN live f ON f.table_id = l.table_id AND f.partition_desc = l.partition_desc
 GROUP BY l.table_id, l.partition_desc, l.version, l.timestamp, l.snapshot;

-- Per table (LakeSoul's table_level_assets columns, plus delta counts).
-- creator exists only where LakeSoul's RBAC script added the column.
CREATE OR REPLACE VIEW lakesoul.table_level_assets AS
SELECT t.table_id,
       t.table_name,
       t.domain,
       to_jsonb(t) ->> 'creator'                                  AS creator,
       t.table_namespace                                          AS namespace,
       count(a.partition_desc)                                    AS partition_counts,
       coalesce(sum(a.file_counts), 0)::bigint                    AS file_counts,
       coalesce(sum(a.file_total_size), 0)::bigint                AS file_total_size,
       coalesce(sum(a.file_base_count), 0)::bigint                AS file_base_count,
       coalesce(sum(a.file_base_size), 0)::bigint                 AS file_base_size,
       coalesce(sum(a.file_delta_count), 0)::bigint               AS file_delta_count,
       coalesce(sum(a.file_delta_size), 0)::bigint                AS file_delta_size
  FROM public.table_info t
  LEFT JOIN lakesoul.partition_level_assets a ON a.table_id = t.table_id
 GROUP BY t.table_id, t.table_name, t.domain, t.table_namespace, to_jsonb(t) ->> 'creator';

-- Per namespace (with the namespace's domain) and per domain (workspace).
CREATE OR REPLACE VIEW lakesoul.namespace_level_assets AS
SELECT n.namespace,
       n.domain,
       count(a.table_id)                                          AS table_counts,
       coalesce(sum(a.partition_counts), 0)::bigint               AS partition_counts,
       coalesce(sum(a.file_counts), 0)::bigint                    AS file_counts,
       coalesce(sum(a.file_total_size), 0)::bigint                AS file_total_size,
       coalesce(sum(a.file_base_count), 0)::bigint                AS file_base_count,
       coalesce(sum(a.file_base_size), 0)::bigint                 AS file_base_size,
       coalesce(sum(a.file_delta_count), 0)::bigint               AS file_delta_count,
       coalesce(sum(a.file_delta_size), 0)::bigint                AS file_delta_size
  FROM public.namespace n
  LEFT JOIN lakesoul.table_level_assets a ON a.namespace = n.namespace
 GROUP BY n.namespace, n.domain;

CREATE OR REPLACE VIEW lakesoul.domain_level_assets AS
SELECT coalesce(a.domain, 'public')                               AS domain,
       count(a.table_id)                                          AS table_counts,
       coalesce(sum(a.partition_counts), 0)::bigint               AS partition_counts,
       coalesce(sum(a.file_counts), 0)::bigint                    AS file_counts,
       coalesce(sum(a.file_total_size), 0)::bigint                AS file_total_size,
       coalesce(sum(a.file_base_count), 0)::bigint                AS file_base_count,
       coalesce(sum(a.file_base_size), 0)::bigint                 AS file_base_size,
       coalesce(sum(a.file_delta_count), 0)::bigint               AS file_delta_count,
       coalesce(sum(a.file_delta_size), 0)::bigint                AS file_delta_size
  FROM lakesoul.table_level_assets a
 GROUP BY coalesce(a.domain, 'public');

-- The views read the catalog with the querying role's rights (and row-level
-- security), where PostgreSQL supports it (15+).
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        EXECUTE 'ALTER VIEW lakesoul.partition_level_assets SET (security_invoker = true)';
        EXECUTE 'ALTER VIEW lakesoul.table_level_assets SET (security_invoker = true)';
        EXECUTE 'ALTER VIEW lakesoul.namespace_level_assets SET (security_invoker = true)';
        EXECUTE 'ALTER VIEW lakesoul.domain_level_assets SET (security_invoker = true)';
    END IF;
END
$$;
