-- Maintenance: rollback (§5.5), cleanup of old versions (§5.7), drop
-- partition, truncate. Table names, timestamps and errors follow the
-- conventions of 040_timetravel.sql.
--
-- Invariants:
--   * every function that adds or removes versions of a partition holds the
--     partition's advisory transaction lock (the key lakesoul.commit uses), and
--     takes several partitions' locks in partition_desc order, so it neither
--     races nor deadlocks with commits;
--   * nothing here deletes a file: functions that make files unreferenced
--     return their paths, and the caller deletes them after the transaction
--     committed (a crash in between leaves orphans, never a dangling reference).

-- partition_lock takes the advisory lock lakesoul.commit takes for a partition.
CREATE OR REPLACE FUNCTION lakesoul.partition_lock(p_table_id text, p_desc text)
RETURNS void LANGUAGE sql VOLATILE
SET search_path = pg_catalog AS $$
    SELECT lakesoul.xact_lock(hashtextextended(p_table_id || chr(31) || p_desc, 0))
$$;

-- table_domain returns the table's domain, holding its row FOR KEY SHARE so a
-- concurrent DROP TABLE waits; 42P01 if the table is gone.
CREATE OR REPLACE FUNCTION lakesoul.table_domain(p_table_id text)
RETURNS text LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_domain text;
BEGIN
    SELECT t.domain INTO v_domain FROM public.table_info t WHERE t.table_id = p_table_id FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    RETURN v_domain;
END
$$;

-- rollback_partition makes version p_version of a partition its newest
-- version again: it inserts latest+1 with version p_version's snapshot
-- (nothing is deleted; §5.5). The new version is recorded as an UpdateCommit:
-- it replaces the partition's contents wholesale, so conflict handling treats
-- it like one (a compaction or update prepared against an older version must
-- not overwrite it; LakeSoul copies the old row's commit_op instead, which lets
-- a concurrent compaction undo a rollback). Returns the new version.
CREATE OR REPLACE FUNCTION lakesoul.rollback_partition(p_table_id text, p_desc text, p_version int, p_domain text)
RETURNS int LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_snap   uuid[];
    v_latest int;
    v_ts     bigint;
BEGIN
    PERFORM lakesoul.partition_lock(p_table_id, p_desc);
    SELECT p.snapshot INTO v_snap FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version = p_version;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'version % of partition "%" does not exist', p_version, p_desc USING ERRCODE = '22023';
    END IF;
    SELECT p.version, p.timestamp INTO v_latest, v_ts FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
     ORDER BY p.version DESC LIMIT 1;
    INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, timestamp, snapshot, expression, domain)
    VALUES (p_table_id, p_desc, v_latest + 1, 'UpdateCommit',
            greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint, v_ts), v_snap, '', p_domain);
    RETURN v_latest + 1;
END
$$;

-- rollback(tbl, version => N [, partition]): roll the named partition, or
-- every partition that has a version N, back to version N.
CREATE OR REPLACE FUNCTION lakesoul.rollback(tbl text, version int, "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, new_version int) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id     text := lakesoul.resolve_table($1);
    v_ver    int := $2;
    v_part   text := $3;
    v_domain text := lakesoul.table_domain(v_id);
    v_desc   text;
BEGIN
    IF v_ver IS NULL THEN
        RAISE EXCEPTION 'version must not be null' USING ERRCODE = '22023';
    END IF;
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    FOR v_desc IN SELECT p.partition_desc FROM public.partition_info p
                   WHERE p.table_id = v_id AND p.version = v_ver AND (v_part IS NULL OR p.partition_desc = v_part)
                   ORDER BY p.partition_desc LOOP
        partition_desc := v_desc;
        new_version := lakesoul.rollback_partition(v_id, v_desc, v_ver, v_domain);
        RETURN NEXT;
    END LOOP;
    IF NOT FOUND THEN
        IF v_part IS NULL THEN
            RAISE EXCEPTION 'version % of table % does not exist', v_ver, lakesoul.table_label(v_id) USING ERRCODE = '22023';
        END IF;
        RAISE EXCEPTION 'version % of partition "%" of table % does not exist', v_ver, v_part, lakesoul.table_label(v_id) USING ERRCODE = '22023';
    END IF;
END
$$;

-- rollback(tbl, ts [, partition]): roll each partition (or the one named)
-- back to the version a snapshot at ts reads (highest version with timestamp
-- < ts). A partition without such a version is left alone (§5.5).
CREATE OR REPLACE FUNCTION lakesoul.rollback(tbl text, ts timestamptz, "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, new_version int) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id     text := lakesoul.resolve_table($1);
    v_ms     bigint := lakesoul.epoch_ms($2);
    v_part   text := $3;
    v_domain text := lakesoul.table_domain(v_id);
    r        record;
BEGIN
    PERFORM lakesoul.check_existed(v_id, v_ms, lakesoul.table_label(v_id));
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    FOR r IN SELECT DISTINCT ON (p.partition_desc) p.partition_desc AS d, p.version AS ver
               FROM public.partition_info p
              WHERE p.table_id = v_id AND p.timestamp < v_ms AND (v_part IS NULL OR p.partition_desc = v_part)
              ORDER BY p.partition_desc, p.version DESC LOOP
        partition_desc := r.d;
        new_version := lakesoul.rollback_partition(v_id, r.d, r.ver, v_domain);
        RETURN NEXT;
    END LOOP;
END
$$;

-- cleanup_partition removes the history of one partition up to p_ms (§5.7):
-- the versions with timestamp <= p_ms other than the newest version, when the
-- first version kept is self-contained (Compaction, Update — which includes
-- rollbacks — or Delete); otherwise it refuses (55000, "later versions depend
-- on previous snapshots") when p_strict, or does nothing. Deleted are those
-- versions, the data_commit_info rows only they referenced, and phase-1 rows
-- never committed (abandoned compactions) with a client timestamp <= p_ms.
-- Returned are the paths added by deleted commits that no remaining commit of
-- the partition adds.
--
-- Differences from LakeSoul, both to keep every remaining version readable:
-- the newest version is never removed (LakeSoul wipes a partition whose every
-- version is older than T), and a commit still listed by a kept version (a
-- compaction that absorbed it, a rollback to it) keeps its row and files.
CREATE OR REPLACE FUNCTION lakesoul.cleanup_partition(p_table_id text, p_desc text, p_ms bigint, p_strict boolean)
RETURNS SETOF text LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_latest   int;
    v_last_old int;
    v_next_op  text;
    v_dead     uuid[];
BEGIN
    PERFORM lakesoul.partition_lock(p_table_id, p_desc);
    SELECT max(p.version) INTO v_latest FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc;
    IF v_latest IS NULL THEN
        RETURN;
    END IF;
    SELECT max(p.version) INTO v_last_old FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.timestamp <= p_ms AND p.version < v_latest;
    IF v_last_old IS NOT NULL THEN
        SELECT p.commit_op INTO v_next_op FROM public.partition_info p
         WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version > v_last_old
         ORDER BY p.version LIMIT 1;
        IF v_next_op NOT IN ('CompactionCommit', 'UpdateCommit', 'DeleteCommit') THEN
            IF p_strict THEN
                RAISE EXCEPTION 'cannot clean up partition "%" up to %: later versions depend on previous version snapshots',
                    p_desc, lakesoul.ms_timestamptz(p_ms)
                    USING ERRCODE = '55000',
                          DETAIL = format('Version %s, the first one kept, is a %s; only a compaction, update, rollback or delete stands alone.',
                                          v_last_old + 1, v_next_op);
            END IF;
            v_last_old := NULL;
        END IF;
    END IF;

    -- Commits to delete: those of the removed versions that no kept version
    -- lists, plus never-committed phase-1 rows up to p_ms.
    v_dead := ARRAY(
        SELECT DISTINCT c FROM public.partition_info p CROSS JOIN LATERAL unnest(p.snapshot) c
         WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version <= v_last_old
        EXCEPT
        SELECT c FROM public.partition_info p CROSS JOIN LATERAL unnest(p.snapshot) c
         WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version > coalesce(v_last_old, -1)
        UNION
        SELECT d.commit_id FROM public.data_commit_info d
         WHERE d.table_id = p_table_id AND d.partition_desc = p_desc AND NOT d.committed AND d.timestamp <= p_ms
           AND NOT EXISTS (SELECT 1 FROM public.partition_info p
                            WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND d.commit_id = ANY (p.snapshot)));

    RETURN QUERY
        SELECT DISTINCT o.path
          FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
         WHERE d.table_id = p_table_id AND d.partition_desc = p_desc AND d.commit_id = ANY (v_dead)
           AND o.file_op = 'add'
        EXCEPT
        SELECT o.path
          FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
         WHERE d.table_id = p_table_id AND d.partition_desc = p_desc AND d.commit_id <> ALL (v_dead)
           AND o.file_op = 'add';

    IF v_last_old IS NOT NULL THEN
        DELETE FROM public.partition_info p
         WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.version <= v_last_old;
    END IF;
    DELETE FROM public.data_commit_info d
     WHERE d.table_id = p_table_id AND d.partition_desc = p_desc AND d.commit_id = ANY (v_dead);
END
$$;

-- cleanup(tbl, older_than [, partition]): cleanup_partition for the named
-- partition (refusing with 55000 when it must) or for every partition (those
-- that must refuse are skipped). Returns one row per file the caller must
-- delete once this transaction has committed.
CREATE OR REPLACE FUNCTION lakesoul.cleanup(tbl text, older_than timestamptz, "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, path text) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id   text := lakesoul.resolve_table($1);
    v_ms   bigint := lakesoul.epoch_ms($2);
    v_part text := $3;
    v_desc text;
BEGIN
    PERFORM lakesoul.table_domain(v_id);
    IF v_ms IS NULL THEN
        RAISE EXCEPTION 'timestamp must not be null' USING ERRCODE = '22023';
    END IF;
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    FOR v_desc IN SELECT DISTINCT p.partition_desc FROM public.partition_info p
                   WHERE p.table_id = v_id AND (v_part IS NULL OR p.partition_desc = v_part)
                   ORDER BY 1 LOOP
        RETURN QUERY SELECT v_desc, f FROM lakesoul.cleanup_partition(v_id, v_desc, v_ms, v_part IS NOT NULL) f;
    END LOOP;
END
$$;

-- cleanup_files is cleanup with the id of the table cleaned on every row,
-- so that the server, which deletes the files, can check each is inside
-- that table's directory (rows of one's own tables can name any path). The
-- table argument is evaluated once.
CREATE OR REPLACE FUNCTION lakesoul.cleanup_files(tbl text, older_than timestamptz, "partition" text DEFAULT NULL)
RETURNS TABLE (table_id text, partition_desc text, path text) LANGUAGE sql VOLATILE
SET search_path = pg_catalog, public AS $$
    WITH t AS MATERIALIZED (SELECT lakesoul.resolve_table(tbl) AS id)
    SELECT t.id, c.partition_desc, c.path FROM t CROSS JOIN LATERAL lakesoul.cleanup(t.id, older_than, "partition") c
$$;

-- drop_partition removes a partition: every version and commit row of it, as
-- LakeSoul's dropPartition does; its files stay on storage (LakeSoul §5.7,
-- scenario 40). A later write starts the partition again at version 0.
-- Returns the number of versions removed.
CREATE OR REPLACE FUNCTION lakesoul.drop_partition(tbl text, "partition" text)
RETURNS int LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id   text := lakesoul.resolve_table($1);
    v_part text := $2;
    v_n    int;
BEGIN
    PERFORM lakesoul.table_domain(v_id);
    IF v_part IS NULL THEN
        RAISE EXCEPTION 'partition must not be null' USING ERRCODE = '22023';
    END IF;
    PERFORM lakesoul.partition_lock(v_id, v_part);
    PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    DELETE FROM public.partition_info p WHERE p.table_id = v_id AND p.partition_desc = v_part;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    DELETE FROM public.data_commit_info d WHERE d.table_id = v_id AND d.partition_desc = v_part;
    DELETE FROM lakesoul.partition_registry r WHERE r.table_id = v_id AND r.partition_desc = v_part;
    RETURN v_n;
END
$$;

-- truncate empties a table: one DeleteCommit (empty snapshot) for every
-- partition whose newest version is not already empty, all in one commit.
-- History stays (time travel still reads the old versions; cleanup removes
-- them and their files).
CREATE OR REPLACE FUNCTION lakesoul.truncate(tbl text)
RETURNS TABLE (partition_desc text, new_version int) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id    text := lakesoul.resolve_table($1);
    v_parts jsonb;
BEGIN
    SELECT coalesce(jsonb_agg(jsonb_build_object('partition_desc', l.d, 'commit_id', gen_random_uuid(),
                                                 'read_version', l.ver, 'file_ops', '[]'::jsonb)), '[]'::jsonb)
      INTO v_parts
      FROM (SELECT DISTINCT ON (p.partition_desc) p.partition_desc AS d, p.version AS ver, p.snapshot AS snap
              FROM public.partition_info p WHERE p.table_id = v_id
             ORDER BY p.partition_desc, p.version DESC) l
     WHERE cardinality(l.snap) > 0;
    RETURN QUERY SELECT c.partition_desc, c.version FROM lakesoul.commit(v_id, 'DeleteCommit', v_parts) c;
END
$$;
