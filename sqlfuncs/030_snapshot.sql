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
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
BEGIN
    -- plpgsql, not sql: a SQL function with SET is planned at every call,
    -- which cost more than resolving a small table's snapshot.
    RETURN QUERY
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
         ORDER BY a.d, a.pos;
END
$$;

-- live_files_cached serves readers that cache file lists (engine/snapcache.go).
-- A partition's live files are a function of its head: its latest version
-- and that version's snapshot (the commit ids, unique per commit), digested
-- as md5(snapshot::text). The function returns one row per head of the
-- candidate partitions (path NULL): the given p_partitions, else those whose
-- desc holds every "k=v" of p_terms (as live_files_matching), else all; and
-- the live files of the heads not in p_known ("desc␟version␟digest"), all in
-- one statement, so heads and files are one consistent snapshot. A reader
-- that knows a head knows its files; one query per statement tells it which
-- heads are current, and no commit made before the query can be missed.
CREATE OR REPLACE FUNCTION lakesoul.live_files_cached(p_table_id text, p_partitions text[], p_terms text[], p_known text[])
RETURNS TABLE (partition_desc text, version int, digest text, path text, size bigint, file_exist_cols text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_descs    text[];
    v_versions int[];
    v_digests  text[];
    v_changed  text[];
BEGIN
    -- plpgsql keeps its statements' plans for the session; a STABLE
    -- function's statements all see the calling statement's snapshot.
    SELECT array_agg(c.d), array_agg(l.ver), array_agg(md5(l.snap::text))
      INTO v_descs, v_versions, v_digests
      FROM (SELECT DISTINCT d FROM unnest(p_partitions) d WHERE p_partitions IS NOT NULL
            UNION ALL
            SELECT r.partition_desc FROM lakesoul.partition_registry r
             WHERE p_partitions IS NULL AND r.table_id = p_table_id
               AND (p_terms IS NULL OR lakesoul.partition_desc_terms(r.table_id, r.partition_desc)
                                       @> ARRAY(SELECT p_table_id || chr(31) || t FROM unnest(p_terms) t))) c
     CROSS JOIN LATERAL (SELECT p.version AS ver, p.snapshot AS snap FROM public.partition_info p
                          WHERE p.table_id = p_table_id AND p.partition_desc = c.d
                          ORDER BY p.version DESC LIMIT 1) l;
    IF v_descs IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT h.d, h.v, h.g, NULL::text, NULL::bigint, NULL::text
                   FROM unnest(v_descs, v_versions, v_digests) AS h(d, v, g);
    SELECT array_agg(h.d) INTO v_changed
      FROM unnest(v_descs, v_versions, v_digests) AS h(d, v, g)
     WHERE (h.d || chr(31) || h.v || chr(31) || h.g) NOT IN (SELECT k FROM unnest(p_known) k);
    IF v_changed IS NOT NULL THEN
        RETURN QUERY SELECT f.partition_desc, f.version, NULL::text, f.path, f.size, f.file_exist_cols
                       FROM lakesoul.live_files(p_table_id, v_changed) f;
    END IF;
END
$$;
