-- History, time travel and incremental reads (LakeSoul §2.3, §2.7, §5.2, §5.3),
-- and partition pruning (§5.6, through lakesoul.partition_registry). Read-only;
-- each function answers from one statement snapshot of the catalog.
--
-- Conventions:
--   * "tbl" names a table as 'ns.name', 'name' (searched in the session's lake
--     search path, setting lakesoul.search_path, default "default"; "public"
--     also finds LakeSoul's "default") or by its table_id;
--   * timestamps are timestamptz, compared in epoch milliseconds with
--     partition_info.timestamp; a snapshot at T sees, per partition, the
--     highest version whose timestamp is strictly before T (LakeSoul's Rust
--     DAO, §2.7);
--   * file lists come back in read order: per partition, commit order of the
--     version's snapshot, then file-op order (what the reader's merge relies on);
--   * errors: unknown table 42P01, unknown partition 42704, unknown version,
--     a moment before the table existed or a reversed interval 22023.

-- resolve_table returns the table_id "tbl" names, or raises 42P01.
CREATE OR REPLACE FUNCTION lakesoul.resolve_table(tbl text)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id    text;
    v_parts text[];
    v_ns    text;
    v_name  text;
    v_try   text;
BEGIN
    IF tbl IS NULL OR tbl = '' THEN
        RAISE EXCEPTION 'table name must not be empty' USING ERRCODE = '22023';
    END IF;
    SELECT t.table_id INTO v_id FROM public.table_info t WHERE t.table_id = tbl;
    IF FOUND THEN
        RETURN v_id;
    END IF;
    BEGIN
        v_parts := parse_ident(tbl);
    EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'invalid table name "%"', tbl USING ERRCODE = '42602';
    END;
    v_name := v_parts[cardinality(v_parts)];
    IF cardinality(v_parts) > 1 THEN
        v_ns := array_to_string(v_parts[1:cardinality(v_parts) - 1], '.');
        FOREACH v_try IN ARRAY ARRAY[v_ns, CASE WHEN v_ns = 'public' THEN 'default' END] LOOP
            SELECT n.table_id INTO v_id FROM public.table_name_id n
             WHERE n.table_namespace = v_try AND n.table_name = v_name;
            IF FOUND THEN
                RETURN v_id;
            END IF;
        END LOOP;
    ELSE
        FOREACH v_ns IN ARRAY lakesoul_pg.lake_search_path() LOOP
            FOREACH v_try IN ARRAY ARRAY[v_ns, CASE WHEN v_ns = 'public' THEN 'default' END] LOOP
                SELECT n.table_id INTO v_id FROM public.table_name_id n
                 WHERE n.table_namespace = v_try AND n.table_name = v_name;
                IF FOUND THEN
                    RETURN v_id;
                END IF;
            END LOOP;
        END LOOP;
    END IF;
    RAISE EXCEPTION 'relation "%" does not exist', tbl USING ERRCODE = '42P01';
END
$$;

-- table_label names a table in messages: "namespace.name", or its id.
CREATE OR REPLACE FUNCTION lakesoul.table_label(p_table_id text)
RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT coalesce((SELECT t.table_namespace || '.' || t.table_name FROM public.table_info t
                      WHERE t.table_id = p_table_id AND t.table_name IS NOT NULL), p_table_id)
$$;

-- epoch_ms is a timestamptz in partition_info.timestamp units (ms, floored).
CREATE OR REPLACE FUNCTION lakesoul.epoch_ms(ts timestamptz)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog AS $$
    SELECT floor(round((extract(epoch FROM ts) * 1000)::numeric, 3))::bigint
$$;

-- ms_timestamptz is the inverse of epoch_ms, exact to the millisecond.
CREATE OR REPLACE FUNCTION lakesoul.ms_timestamptz(ms bigint)
RETURNS timestamptz LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog AS $$
    SELECT timestamptz 'epoch' + ms * interval '1 millisecond'
$$;

-- check_existed raises 22023 unless the table existed before p_ms.
CREATE OR REPLACE FUNCTION lakesoul.check_existed(p_table_id text, p_ms bigint, p_what text)
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_created bigint;
BEGIN
    SELECT c.created_ms INTO v_created FROM lakesoul.table_created c WHERE c.table_id = p_table_id;
    IF p_ms IS NULL THEN
        RAISE EXCEPTION 'timestamp must not be null' USING ERRCODE = '22023';
    END IF;
    IF v_created IS NOT NULL AND p_ms <= v_created THEN
        RAISE EXCEPTION 'table % did not exist before %', p_what, lakesoul.ms_timestamptz(p_ms)
            USING ERRCODE = '22023',
                  DETAIL = format('It was created at %s.', lakesoul.ms_timestamptz(v_created));
    END IF;
END
$$;

-- check_partition raises 42704 unless the partition has at least one version.
CREATE OR REPLACE FUNCTION lakesoul.check_partition(p_table_id text, p_desc text, p_what text)
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM 1 FROM public.partition_info p WHERE p.table_id = p_table_id AND p.partition_desc = p_desc LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'partition "%" of table % does not exist', p_desc, p_what USING ERRCODE = '42704';
    END IF;
END
$$;

-- replay resolves an ordered list of commit ids of one partition into live
-- files (§2.3): all file ops in order; an add is live unless a later op of
-- the list deletes the same path (found by a hash join on each path's last
-- delete, linear in the ops). Ids without a data_commit_info row contribute
-- nothing.
CREATE OR REPLACE FUNCTION lakesoul.replay(p_table_id text, p_desc text, p_commits uuid[])
RETURNS TABLE (path text, size bigint, file_exist_cols text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    WITH ops AS (
        SELECT (s.n << 32) | o.n AS pos, o.path, o.file_op, o.size, o.file_exist_cols
          FROM unnest(p_commits) WITH ORDINALITY AS s(commit_id, n)
          JOIN public.data_commit_info d
            ON d.table_id = p_table_id AND d.partition_desc = p_desc AND d.commit_id = s.commit_id
         CROSS JOIN LATERAL unnest(d.file_ops) WITH ORDINALITY AS o(path, file_op, size, file_exist_cols, n)
    ), last_del AS (
        SELECT x.path, max(x.pos) AS pos FROM ops x WHERE x.file_op = 'del' GROUP BY x.path
    )
    SELECT a.path, a.size, a.file_exist_cols
      FROM ops a
      LEFT JOIN last_del k ON k.path = a.path
     WHERE a.file_op = 'add' AND (k.pos IS NULL OR k.pos < a.pos)
     ORDER BY a.pos
$$;

-- history lists every version of every partition, oldest first, with the
-- commit ids it added to the partition's snapshot (those not in the
-- version before it): a client told that a commit's outcome is unknown
-- (08007, naming table and commit ids) looks its ids up here. The result
-- gained commit_ids, so an older definition is dropped first.
DO $$
BEGIN
    IF to_regprocedure('lakesoul.history(text)') IS NOT NULL
       AND pg_get_function_result(to_regprocedure('lakesoul.history(text)')) NOT LIKE '%commit_ids%' THEN
        DROP FUNCTION lakesoul.history(text);
    END IF;
END
$$;
CREATE OR REPLACE FUNCTION lakesoul.history(tbl text)
RETURNS TABLE ("partition" text, version int, commit_op text, committed_at timestamptz, commit_ids uuid[])
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT h.partition_desc, h.version, h.commit_op, lakesoul.ms_timestamptz(h.timestamp),
           ARRAY(SELECT c FROM unnest(h.snapshot) WITH ORDINALITY AS s(c, n)
                  WHERE h.prev IS NULL OR c <> ALL (h.prev) ORDER BY n)
      FROM (SELECT p.partition_desc, p.version, p.commit_op, p.timestamp, p.snapshot,
                   lag(p.snapshot) OVER (PARTITION BY p.partition_desc ORDER BY p.version) AS prev
              FROM public.partition_info p
             WHERE p.table_id = (SELECT lakesoul.resolve_table(tbl))) h
     ORDER BY h.timestamp, h.partition_desc, h.version
$$;

-- snapshot_files(tbl, ts [, partition]): the files of each partition (or of
-- the one named) as of ts: per partition the highest version with timestamp
-- < ts. Partitions without such a version contribute nothing (§5.2).
CREATE OR REPLACE FUNCTION lakesoul.snapshot_files(tbl text, ts timestamptz, "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, partition_version int, path text, size bigint, file_exist_cols text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id   text := lakesoul.resolve_table($1);
    v_ms   bigint := lakesoul.epoch_ms($2);
    v_part text := $3;
BEGIN
    PERFORM lakesoul.check_existed(v_id, v_ms, lakesoul.table_label(v_id));
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    RETURN QUERY
        WITH v AS (
            SELECT DISTINCT ON (p.partition_desc) p.partition_desc AS d, p.version AS ver, p.snapshot AS snap
              FROM public.partition_info p
             WHERE p.table_id = v_id AND p.timestamp < v_ms
               AND (v_part IS NULL OR p.partition_desc = v_part)
             ORDER BY p.partition_desc, p.version DESC
        )
        SELECT v.d, v.ver, f.path, f.size, f.file_exist_cols
          FROM v CROSS JOIN LATERAL lakesoul.replay(v_id, v.d, v.snap) WITH ORDINALITY AS f(path, size, file_exist_cols, n)
         ORDER BY v.d, f.n;
END
$$;

-- snapshot_files(tbl, version => N [, partition]): version N of the named
-- partition, or of every partition that has a version N.
CREATE OR REPLACE FUNCTION lakesoul.snapshot_files(tbl text, version int, "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, partition_version int, path text, size bigint, file_exist_cols text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id   text := lakesoul.resolve_table($1);
    v_ver  int := $2;
    v_part text := $3;
BEGIN
    IF v_ver IS NULL THEN
        RAISE EXCEPTION 'version must not be null' USING ERRCODE = '22023';
    END IF;
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    PERFORM 1 FROM public.partition_info p
     WHERE p.table_id = v_id AND p.version = v_ver AND (v_part IS NULL OR p.partition_desc = v_part) LIMIT 1;
    IF NOT FOUND THEN
        IF v_part IS NULL THEN
            RAISE EXCEPTION 'version % of table % does not exist', v_ver, lakesoul.table_label(v_id) USING ERRCODE = '22023';
        END IF;
        RAISE EXCEPTION 'version % of partition "%" of table % does not exist', v_ver, v_part, lakesoul.table_label(v_id) USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT p.partition_desc, p.version, f.path, f.size, f.file_exist_cols
          FROM public.partition_info p
         CROSS JOIN LATERAL lakesoul.replay(v_id, p.partition_desc, p.snapshot) WITH ORDINALITY AS f(path, size, file_exist_cols, n)
         WHERE p.table_id = v_id AND p.version = v_ver AND (v_part IS NULL OR p.partition_desc = v_part)
         ORDER BY p.partition_desc, f.n;
END
$$;

-- change_commits is the incremental-read rule of §5.3 for one partition: the
-- commit ids added in [since, until), in the order they appeared.
--   * no version before since → every commit of the snapshot at until;
--   * else base = latest version before since; an UpdateCommit or
--     DeleteCommit after base (copy-on-write rewrites: the increment is not
--     defined) → empty;
--   * else the commits of the versions after base (for a CompactionCommit only
--     those after its own, the first element, i.e. the writes it absorbed),
--     minus base's commits and minus compactions' own commits.
-- LakeSoul only checks UpdateCommit; a DeleteCommit (truncate) is treated the
-- same way here, since rows written before it would otherwise reappear.
CREATE OR REPLACE FUNCTION lakesoul.change_commits(p_table_id text, p_desc text, p_since bigint, p_until bigint)
RETURNS TABLE (partition_version int, commits uuid[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_base_ver  int;
    v_base_snap uuid[];
    v_end_ver   int;
    v_end_snap  uuid[];
BEGIN
    SELECT p.version, p.snapshot INTO v_end_ver, v_end_snap FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND (p_until IS NULL OR p.timestamp < p_until)
     ORDER BY p.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT p.version, p.snapshot INTO v_base_ver, v_base_snap FROM public.partition_info p
     WHERE p.table_id = p_table_id AND p.partition_desc = p_desc AND p.timestamp < p_since
     ORDER BY p.version DESC LIMIT 1;
    IF NOT FOUND THEN
        partition_version := v_end_ver; commits := v_end_snap;
        RETURN NEXT;
        RETURN;
    END IF;
    IF v_end_ver <= v_base_ver THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM public.partition_info p
                WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
                  AND p.version > v_base_ver AND p.version <= v_end_ver
                  AND p.commit_op IN ('UpdateCommit', 'DeleteCommit')) THEN
        RETURN;
    END IF;
    partition_version := v_end_ver;
    commits := ARRAY(
        WITH elems AS (
            SELECT p.version AS ver, u.n, u.c, p.commit_op AS op
              FROM public.partition_info p
             CROSS JOIN LATERAL unnest(p.snapshot) WITH ORDINALITY AS u(c, n)
             WHERE p.table_id = p_table_id AND p.partition_desc = p_desc
               AND p.version > v_base_ver AND p.version <= v_end_ver
        ), firsts AS (
            SELECT DISTINCT ON (e.c) e.c, e.ver, e.n
              FROM elems e
             WHERE NOT (e.op = 'CompactionCommit' AND e.n = 1)
               AND e.c <> ALL (v_base_snap)
               AND e.c NOT IN (SELECT o.c FROM elems o WHERE o.op = 'CompactionCommit' AND o.n = 1)
             ORDER BY e.c, e.ver, e.n
        )
        SELECT f.c FROM firsts f ORDER BY f.ver, f.n);
    RETURN NEXT;
END
$$;

-- change_files(tbl, since [, until] [, partition]): the files of the commits
-- each partition received in [since, until) (until NULL = now and later), by
-- the rules of change_commits. For a primary-key table the reader still
-- merges rows within the returned files.
CREATE OR REPLACE FUNCTION lakesoul.change_files(tbl text, since timestamptz, until timestamptz DEFAULT NULL,
                                                 "partition" text DEFAULT NULL)
RETURNS TABLE (partition_desc text, partition_version int, path text, size bigint, file_exist_cols text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    v_id    text := lakesoul.resolve_table($1);
    v_since bigint := lakesoul.epoch_ms($2);
    v_until bigint := lakesoul.epoch_ms($3);
    v_part  text := $4;
BEGIN
    IF v_since IS NULL THEN
        RAISE EXCEPTION 'the start of the interval must not be null' USING ERRCODE = '22023';
    END IF;
    IF v_until IS NOT NULL THEN
        IF v_until < v_since THEN
            RAISE EXCEPTION 'interval [%, %) ends before it starts', $2, $3 USING ERRCODE = '22023';
        END IF;
        PERFORM lakesoul.check_existed(v_id, v_until, lakesoul.table_label(v_id));
    END IF;
    IF v_part IS NOT NULL THEN
        PERFORM lakesoul.check_partition(v_id, v_part, lakesoul.table_label(v_id));
    END IF;
    RETURN QUERY
        WITH parts AS (
            SELECT DISTINCT p.partition_desc AS d FROM public.partition_info p
             WHERE p.table_id = v_id AND (v_part IS NULL OR p.partition_desc = v_part)
        ), ch AS (
            SELECT parts.d, c.partition_version AS ver, c.commits
              FROM parts CROSS JOIN LATERAL lakesoul.change_commits(v_id, parts.d, v_since, v_until) c
        )
        SELECT ch.d, ch.ver, f.path, f.size, f.file_exist_cols
          FROM ch CROSS JOIN LATERAL lakesoul.replay(v_id, ch.d, ch.commits) WITH ORDINALITY AS f(path, size, file_exist_cols, n)
         ORDER BY ch.d, f.n;
END
$$;

-- live_files_matching is live_files for the partitions whose desc contains
-- every "k=v" term of p_terms (an equality on a subset of the range columns,
-- §5.6): candidates come from lakesoul.partition_registry through its GIN
-- index; live_files then resolves them set-wise.
CREATE OR REPLACE FUNCTION lakesoul.live_files_matching(p_table_id text, p_terms text[])
RETURNS TABLE (partition_desc text, partition_version int, path text, size bigint, file_exist_cols text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, public AS $$
    SELECT f.partition_desc, f.version, f.path, f.size, f.file_exist_cols
      FROM lakesoul.live_files(p_table_id, ARRAY(
               SELECT r.partition_desc FROM lakesoul.partition_registry r
                WHERE lakesoul.partition_desc_terms(r.table_id, r.partition_desc)
                      @> ARRAY(SELECT p_table_id || chr(31) || t FROM unnest(p_terms) t)
                  AND r.table_id = p_table_id)) f
$$;

-- lakesoul.tables: one row per lake table the role can see.
CREATE OR REPLACE VIEW lakesoul.tables WITH (security_invoker = true) AS
SELECT t.table_namespace AS table_schema, t.table_name, t.table_id, t.table_path, t.partitions, t.properties
  FROM public.table_info t;
