-- Time travel, maintenance and pruning support. LakeSoul's tables keep their
-- columns; this adds one table in schema "lakesoul" and two indexes on
-- public.partition_info.

-- When each table was created (epoch milliseconds, the unit of
-- partition_info.timestamp), so time travel to a moment before the table
-- existed is an error rather than an empty result. Tables created by other
-- LakeSoul clients have no row; they are treated as existing forever.
CREATE TABLE IF NOT EXISTS lakesoul.table_created (
    table_id   text PRIMARY KEY,
    created_ms bigint NOT NULL
);

-- Backfill: a table known before this migration existed at least since its
-- first partition version (or now, if it has none).
INSERT INTO lakesoul.table_created (table_id, created_ms)
SELECT t.table_id,
       coalesce((SELECT min(p.timestamp) FROM public.partition_info p WHERE p.table_id = t.table_id),
                (extract(epoch FROM now()) * 1000)::bigint)
  FROM public.table_info t
ON CONFLICT DO NOTHING;

-- partition_insert() (the compaction-notify trigger) looks up the latest
-- CompactionCommit of the partition on every insert; without this index that
-- walks every version since the last compaction.
CREATE INDEX IF NOT EXISTS partition_info_compaction_index
    ON public.partition_info (table_id, partition_desc, version)
    WHERE commit_op = 'CompactionCommit';

-- partition_desc_terms splits a partition desc ("k1=v1,k2=v2") into terms
-- "<table_id>\x1f<k>=<v>". An index on it answers "partitions of table T
-- whose column k equals v" exactly (no text-search stemming or stop words), for
-- any subset of the range columns (LakeSoul §5.6 uses a tsvector index for the
-- same question). IMMUTABLE and never redefined: the index depends on it.
CREATE OR REPLACE FUNCTION lakesoul.partition_desc_terms(p_table_id text, p_desc text)
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT pg_catalog.array_agg(p_table_id || pg_catalog.chr(31) || e)
      FROM pg_catalog.unnest(pg_catalog.string_to_array(p_desc, ',')) AS e
$$;

CREATE INDEX IF NOT EXISTS partition_info_desc_terms_index
    ON public.partition_info USING GIN (lakesoul.partition_desc_terms(table_id, partition_desc));
