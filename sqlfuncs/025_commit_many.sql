-- lakesoul.commit_many: the commits of several tables (a client transaction
-- block: BEGIN; INSERT …; COPY …; COMMIT) in ONE catalog transaction, so they
-- become visible together or not at all. Each commit is exactly what
-- lakesoul.commit does for one table; the per-partition work is
-- lakesoul.commit_one_partition, unchanged.
--
-- Invariants (besides those of lakesoul.commit):
--   * every table row is held FOR SHARE, in table_id order, before any
--     partition lock; all partition advisory locks are then taken up front in
--     (table_id, partition_desc) order, the order lakesoul.commit uses within a
--     table, so concurrent commits never deadlock;
--   * commits apply in array order: a later commit to the same partition gets a
--     later version (later files win on read).
--
-- p_commits is a JSON array of {"table_id": text, "commit_op": text,
-- "partitions": [ <partition object as for lakesoul.commit> ]}; p_intent and
-- p_intent_token are the block's write intent, as for lakesoul.commit.
-- p_reads, optional, is a JSON array of {"table_id", "partition_desc",
-- "expect_version"}: partitions a SERIALIZABLE transaction read without
-- writing them. Their partition locks are taken in shared mode (in the same
-- order as the others), so no commit to them can land while this one runs,
-- and the commit fails with LK001 (as for an expect_version) unless each is
-- still at the version expected.
-- Result: one row per committed partition with the version it got.

DROP FUNCTION IF EXISTS lakesoul.commit_many(jsonb);
DROP FUNCTION IF EXISTS lakesoul.commit_many(jsonb, text, uuid);
CREATE OR REPLACE FUNCTION lakesoul.commit_many(p_commits jsonb, p_intent text DEFAULT NULL, p_intent_token uuid DEFAULT NULL,
                                                p_reads jsonb DEFAULT NULL)
RETURNS TABLE (o_table_id text, o_partition_desc text, o_version int) LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_commit   jsonb;
    v_part     jsonb;
    v_table    text;
    v_op       text;
    v_domain   text;
    v_key      text;
    v_shared   boolean;
    v_claimed  text[];
BEGIN
    IF jsonb_typeof(p_commits) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'commit_many: expected a JSON array' USING ERRCODE = '22023';
    END IF;
    -- The block's write intent, consumed once for all its tables (see
    -- lakesoul.commit).
    IF p_intent IS NOT NULL THEN
        v_claimed := lakesoul.write_intent_consume(p_intent, p_intent_token);
        FOR v_commit IN SELECT c FROM jsonb_array_elements(p_commits) c LOOP
            PERFORM lakesoul.write_intent_verify(v_commit->>'table_id', coalesce(v_commit->'partitions', '[]'),
                                                 p_intent, v_claimed);
        END LOOP;
    END IF;
    FOR v_table IN SELECT DISTINCT c->>'table_id' FROM jsonb_array_elements(p_commits) c ORDER BY 1 LOOP
        PERFORM 1 FROM public.table_info t WHERE t.table_id = v_table FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'table % does not exist', v_table USING ERRCODE = '42P01';
        END IF;
    END LOOP;
    -- Row locks before any partition lock (007_row_locks.sql).
    FOR v_table IN SELECT DISTINCT c->>'table_id' FROM jsonb_array_elements(p_commits) c ORDER BY 1 LOOP
        PERFORM lakesoul.commit_lock_rows(v_table, (
            SELECT coalesce(jsonb_agg(p), '[]') FROM jsonb_array_elements(p_commits) c,
                   jsonb_array_elements(coalesce(c->'partitions', '[]')) p WHERE c->>'table_id' = v_table));
    END LOOP;
    FOR v_key, v_shared IN
        SELECT k, bool_and(shared) FROM (
            SELECT (c->>'table_id') || chr(31) || (p->>'partition_desc') AS k, false AS shared
              FROM jsonb_array_elements(p_commits) c, jsonb_array_elements(coalesce(c->'partitions', '[]')) p
            UNION ALL
            SELECT (r->>'table_id') || chr(31) || (r->>'partition_desc'), true
              FROM jsonb_array_elements(coalesce(p_reads, '[]')) r) x
         GROUP BY k ORDER BY k
    LOOP
        PERFORM lakesoul.xact_lock(hashtextextended(v_key, 0), v_shared);
    END LOOP;
    -- The partitions read: still at the versions the reader checked.
    FOR v_part IN SELECT r FROM jsonb_array_elements(coalesce(p_reads, '[]')) r LOOP
        IF coalesce((SELECT max(pi.version) FROM public.partition_info pi
                      WHERE pi.table_id = v_part->>'table_id' AND pi.partition_desc = v_part->>'partition_desc'), -1)
           <> (v_part->>'expect_version')::int THEN
            RAISE EXCEPTION 'commit: partition % of table % changed since it was read', v_part->>'partition_desc',
                v_part->>'table_id' USING ERRCODE = 'LK001';
        END IF;
    END LOOP;

    FOR v_commit IN SELECT c FROM jsonb_array_elements(p_commits) WITH ORDINALITY AS e(c, n) ORDER BY n LOOP
        v_table := v_commit->>'table_id';
        v_op := v_commit->>'commit_op';
        IF v_op IS NULL OR v_op NOT IN ('AppendCommit', 'MergeCommit', 'CompactionCommit', 'UpdateCommit', 'DeleteCommit') THEN
            RAISE EXCEPTION 'unknown commit op %', v_op USING ERRCODE = '22023';
        END IF;
        IF (SELECT count(DISTINCT e->>'partition_desc') <> count(*)
              FROM jsonb_array_elements(coalesce(v_commit->'partitions', '[]')) e) THEN
            RAISE EXCEPTION 'commit: a partition appears twice in one commit' USING ERRCODE = '22023';
        END IF;
        SELECT t.domain INTO v_domain FROM public.table_info t WHERE t.table_id = v_table;
        FOR v_part IN SELECT e FROM jsonb_array_elements(coalesce(v_commit->'partitions', '[]')) e
                       ORDER BY e->>'partition_desc' LOOP
            o_table_id := v_table;
            o_partition_desc := v_part->>'partition_desc';
            o_version := lakesoul.commit_one_partition(v_table, v_domain, v_op, v_part);
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$$;
