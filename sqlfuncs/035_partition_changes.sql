-- partition_changes: what the versions of a partition after p_from, up to and
-- including p_to, did — the input of the engine's check that a
-- read-modify-write statement's rows are unchanged since it read them
-- (engine/rmw.go). One row per version and data file that version's own
-- commit added (the commit id its snapshot has and the previous version's
-- does not); a version that added no file (a DeleteCommit, a rollback) gives
-- one row with path NULL. A CompactionCommit's files hold rows that were
-- already there, so callers skip them; an UpdateCommit or DeleteCommit
-- replaced rows, so callers treat it as a change of every row.
--
-- Runs as the caller's role: row-level security decides what it may read.

CREATE OR REPLACE FUNCTION lakesoul.partition_changes(p_table_id text, p_desc text, p_from int, p_to int)
RETURNS TABLE (version int, commit_op text, path text, size bigint, file_exist_cols text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT v.version, v.commit_op, f.path, f.size, f.file_exist_cols
      FROM public.partition_info v
      LEFT JOIN public.partition_info prev
        ON prev.table_id = v.table_id AND prev.partition_desc = v.partition_desc AND prev.version = v.version - 1
      LEFT JOIN LATERAL (
            SELECT o.path, o.size, o.file_exist_cols, s.n AS sn, o.n AS onum
              FROM unnest(v.snapshot) WITH ORDINALITY AS s(commit_id, n)
              JOIN public.data_commit_info dc
                ON dc.table_id = v.table_id AND dc.partition_desc = v.partition_desc AND dc.commit_id = s.commit_id
             CROSS JOIN LATERAL unnest(dc.file_ops) WITH ORDINALITY AS o(path, file_op, size, file_exist_cols, n)
             WHERE s.commit_id <> ALL (coalesce(prev.snapshot, '{}')) AND o.file_op = 'add'
      ) f ON true
     WHERE v.table_id = p_table_id AND v.partition_desc = p_desc
       AND v.version > p_from AND v.version <= p_to
     ORDER BY v.version, f.sn, f.onum
$$;

-- partition_versions: the latest version of each of the partitions p_descs
-- (-1 for one that does not exist), as the caller's role.
CREATE OR REPLACE FUNCTION lakesoul.partition_versions(p_table_id text, p_descs text[])
RETURNS TABLE (partition_desc text, version int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT d.d, coalesce((SELECT max(p.version) FROM public.partition_info p
                           WHERE p.table_id = p_table_id AND p.partition_desc = d.d), -1)
      FROM unnest(p_descs) AS d(d)
$$;
