-- Snapshot resolution (LakeSoul §2.3): the live files of the latest version of
-- each partition, in read order (commit order in the snapshot, then file-op
-- order). A file is live when it was added and no later op of the same version
-- deleted it.
--
-- Cost: linear in the file ops of the versions resolved. The "deleted later"
-- test is a hash join against each (partition, path)'s last delete position,
-- not a correlated search (which is quadratic in a partition's ops). With
-- p_partitions, each partition's latest version is one backward probe of
-- partition_info's primary key; the full listing (p_partitions NULL) reads
-- the table's versions once in key order.

CREATE OR REPLACE FUNCTION lakesoul.live_files(p_table_id text, p_partitions text[] DEFAULT NULL)
RETURNS TABLE (partition_desc text, version int, path text, size bigint, file_exist_cols text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    WITH latest AS (
        (SELECT DISTINCT ON (p.partition_desc) p.partition_desc AS d, p.version AS ver, p.snapshot AS snap
           FROM public.partition_info p
          WHERE p_partitions IS NULL AND p.table_id = p_table_id
          ORDER BY p.partition_desc, p.version DESC)
        UNION ALL
        SELECT w.d, l.ver, l.snap
          FROM (SELECT DISTINCT unnest(p_partitions) AS d) w
         CROSS JOIN LATERAL (SELECT p.version AS ver, p.snapshot AS snap FROM public.partition_info p
                              WHERE p.table_id = p_table_id AND p.partition_desc = w.d
                              ORDER BY p.version DESC LIMIT 1) l
    ), ops AS (
        SELECT l.d, l.ver, (s.n << 32) | o.n AS pos, o.path, o.file_op, o.size, o.file_exist_cols
          FROM latest l
         CROSS JOIN LATERAL unnest(l.snap) WITH ORDINALITY AS s(commit_id, n)
          JOIN public.data_commit_info dc
            ON dc.table_id = p_table_id AND dc.partition_desc = l.d AND dc.commit_id = s.commit_id
         CROSS JOIN LATERAL unnest(dc.file_ops) WITH ORDINALITY AS o(path, file_op, size, file_exist_cols, n)
    ), last_del AS (
        SELECT x.d, x.path, max(x.pos) AS pos FROM ops x WHERE x.file_op = 'del' GROUP BY x.d, x.path
    )
    SELECT a.d, a.ver, a.path, a.size, a.file_exist_cols
      FROM ops a
      LEFT JOIN last_del k ON k.d = a.d AND k.path = a.path
     WHERE a.file_op = 'add' AND (k.pos IS NULL OR k.pos < a.pos)
     ORDER BY a.d, a.pos
$$;
