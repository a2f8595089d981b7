-- Back to 000001's trigger function.
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
