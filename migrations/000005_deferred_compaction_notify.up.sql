-- LakeSoul's compaction trigger (000001), with one addition: a committing
-- session may ask for its notifications to be handed back instead of sent
-- inside the commit transaction (setting lakesoul.defer_compaction_notify =
-- 'on', transaction-local). PostgreSQL serialises the commits of all
-- transactions that NOTIFY (a database-wide lock held through the WAL flush),
-- so notifying inside every commit of a partition past its threshold caps the
-- whole catalog at one commit per disk flush. lakesoul.commit(…, true) uses
-- this and returns the payload; the client sends it after the commit
-- (lakesoul.notify_compaction). Other writers (LakeSoul's own clients) never
-- set the flag and get LakeSoul's behaviour unchanged: same condition, same
-- channel, same payload.
CREATE OR REPLACE FUNCTION public.partition_insert() RETURNS trigger AS $$
DECLARE
    rs_version   integer;
    rs_table_path text;
    rs_table_namespace text;
    rs_payload   text;
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
            rs_payload := format('{"table_path":"%s","table_partition_desc":"%s","table_namespace":"%s"}',
                                 rs_table_path, NEW.partition_desc, rs_table_namespace);
            IF current_setting('lakesoul.defer_compaction_notify', true) = 'on' THEN
                PERFORM set_config('lakesoul.deferred_compaction_notify', rs_payload, true);
            ELSE
                PERFORM pg_notify('lakesoul_compaction_notify', rs_payload);
            END IF;
        END IF;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql SET search_path = pg_catalog, public;
