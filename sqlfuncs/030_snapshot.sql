-- Snapshot resolution (LakeSoul §2.3): the live files of the latest version of
-- each partition, in read order (commit order in the snapshot, then file-op
-- order). A file is live when it was added and no later op of the same version
-- deleted it.

CREATE OR REPLACE FUNCTION lakesoul.live_files(p_table_id text, p_partitions text[] DEFAULT NULL)
RETURNS TABLE (partition_desc text, version int, path text, size bigint, file_exist_cols text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    WITH latest AS (
        SELECT DISTINCT ON (p.partition_desc) p.partition_desc, p.version, p.snapshot
          FROM public.partition_info p
         WHERE p.table_id = p_table_id
           AND (p_partitions IS NULL OR p.partition_desc = ANY (p_partitions))
         ORDER BY p.partition_desc, p.version DESC
    ), ops AS (
        SELECT l.partition_desc, l.version, s.n AS commit_n, o.n AS op_n,
               o.path, o.file_op, o.size, o.file_exist_cols
          FROM latest l
         CROSS JOIN LATERAL unnest(l.snapshot) WITH ORDINALITY AS s(commit_id, n)
          JOIN public.data_commit_info d
            ON d.table_id = p_table_id AND d.partition_desc = l.partition_desc AND d.commit_id = s.commit_id
         CROSS JOIN LATERAL unnest(d.file_ops) WITH ORDINALITY AS o(path, file_op, size, file_exist_cols, n)
    )
    SELECT a.partition_desc, a.version, a.path, a.size, a.file_exist_cols
      FROM ops a
     WHERE a.file_op = 'add'
       AND NOT EXISTS (SELECT 1 FROM ops b
                        WHERE b.partition_desc = a.partition_desc AND b.path = a.path AND b.file_op = 'del'
                          AND (b.commit_n, b.op_n) > (a.commit_n, a.op_n))
     ORDER BY a.partition_desc, a.commit_n, a.op_n
$$;
