-- LakeSoul's metadata model, column for column (LakeSoul script/meta_init.sql semantics).
-- A LakeSoul client pointed at this database sees the same tables. Never change these
-- columns; LakeSoul-Go's own additions live in schema "lakesoul" (later migrations).

CREATE TABLE IF NOT EXISTS public.namespace (
    namespace  text PRIMARY KEY,
    properties json,
    comment    text,
    domain     text DEFAULT 'public'
);

INSERT INTO public.namespace (namespace, properties, comment)
VALUES ('default', '{}', '')
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS public.table_info (
    table_id                         text PRIMARY KEY,
    table_namespace                  text DEFAULT 'default',
    table_name                       text,
    table_path                       text,
    table_schema                     text,
    table_schema_arrow_ipc           bytea,
    table_schema_arrow_ipc_json_hash text,
    properties                       json,
    partitions                       text,
    domain                           text DEFAULT 'public'
);
CREATE INDEX IF NOT EXISTS table_info_name_index ON public.table_info (table_namespace, table_name);
CREATE INDEX IF NOT EXISTS table_info_path_index ON public.table_info (table_path);

CREATE TABLE IF NOT EXISTS public.table_name_id (
    table_name      text,
    table_id        text,
    table_namespace text DEFAULT 'default',
    domain          text DEFAULT 'public',
    PRIMARY KEY (table_name, table_namespace)
);
CREATE INDEX IF NOT EXISTS table_name_id_id_index ON public.table_name_id (table_id);

CREATE TABLE IF NOT EXISTS public.table_path_id (
    table_path      text PRIMARY KEY,
    table_id        text,
    table_namespace text DEFAULT 'default',
    domain          text DEFAULT 'public'
);
CREATE INDEX IF NOT EXISTS table_path_id_id_index ON public.table_path_id (table_id);

DO $$
BEGIN
    CREATE TYPE public.data_file_op AS (
        path            text,
        file_op         text,
        size            bigint,
        file_exist_cols text
    );
EXCEPTION WHEN duplicate_object THEN NULL;
END
$$;

-- Phase-1 record of a commit: a set of file operations on one partition.
CREATE TABLE IF NOT EXISTS public.data_commit_info (
    table_id       text,
    partition_desc text,
    commit_id      uuid,
    file_ops       public.data_file_op[],
    commit_op      text,
    committed      boolean DEFAULT false,
    timestamp      bigint,
    domain         text DEFAULT 'public',
    PRIMARY KEY (table_id, partition_desc, commit_id)
);
CREATE INDEX IF NOT EXISTS data_commit_info_commit_id ON public.data_commit_info (commit_id);
ALTER TABLE public.data_commit_info REPLICA IDENTITY FULL;

-- Phase-2 record: one version of one range partition. Its primary key is the
-- concurrency control LakeSoul's own clients rely on.
CREATE TABLE IF NOT EXISTS public.partition_info (
    table_id       text,
    partition_desc text,
    version        int,
    commit_op      text,
    timestamp      bigint DEFAULT (date_part('epoch', now()) * 1000)::bigint,
    snapshot       uuid[],
    expression     text,
    domain         text DEFAULT 'public',
    PRIMARY KEY (table_id, partition_desc, version)
);
CREATE INDEX IF NOT EXISTS partition_info_timestamp ON public.partition_info (timestamp);
CREATE INDEX IF NOT EXISTS partition_info_desc_gin_tsvector_index
    ON public.partition_info USING GIN (to_tsvector('english', partition_desc));

CREATE TABLE IF NOT EXISTS public.global_config (
    key   text PRIMARY KEY,
    value text
);

CREATE TABLE IF NOT EXISTS public.discard_compressed_file_info (
    file_path      text PRIMARY KEY,
    table_path     text,
    partition_desc text,
    timestamp      bigint DEFAULT (date_part('epoch', now()) * 1000)::bigint,
    t_date         date
);

-- Compaction trigger: after 10 versions without a compaction, every further
-- non-compaction commit notifies lakesoul_compaction_notify (LakeSoul §1.10).
CREATE OR REPLACE FUNCTION public.partition_insert() RETURNS trigger AS $$
DECLARE
    rs_version   integer;
    rs_table_path text;
    rs_table_namespace text;
BEGIN
    IF NEW.commit_op <> 'CompactionCommit' THEN
        SELECT version INTO rs_version
          FROM public.partition_info
         WHERE table_id = NEW.table_id
           AND partition_desc = NEW.partition_desc
           AND version <> NEW.version
           AND commit_op = 'CompactionCommit'
         ORDER BY version DESC
         LIMIT 1;
        IF (rs_version IS NOT NULL AND NEW.version - rs_version >= 10)
           OR (rs_version IS NULL AND NEW.version >= 10) THEN
            SELECT table_path, table_namespace INTO rs_table_path, rs_table_namespace
              FROM public.table_info WHERE table_id = NEW.table_id;
            PERFORM pg_notify('lakesoul_compaction_notify',
                format('{"table_path":"%s","table_partition_desc":"%s","table_namespace":"%s"}',
                       rs_table_path, NEW.partition_desc, rs_table_namespace));
        END IF;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql SET search_path = pg_catalog, public;

DROP TRIGGER IF EXISTS partition_table_change ON public.partition_info;
CREATE TRIGGER partition_table_change
    AFTER INSERT ON public.partition_info
    FOR EACH ROW EXECUTE PROCEDURE public.partition_insert();
