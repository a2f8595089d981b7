-- A registry of the partitions each table has, for pruning (LakeSoul §5.6):
-- "which partitions of table T have k = v" is answered by a GIN index on this
-- small table (one row per partition) instead of one on partition_info (one
-- row per version), which every commit would otherwise have to update. A
-- trigger registers a partition when its version 0 is inserted, by any client;
-- lakesoul.drop_partition and lakesoul.drop_table_by_id unregister it. A row
-- whose partition has no version any more (dropped by another client) is
-- harmless: readers join it to partition_info and find nothing.
CREATE TABLE IF NOT EXISTS lakesoul.partition_registry (
    table_id       text NOT NULL,
    partition_desc text NOT NULL,
    PRIMARY KEY (table_id, partition_desc)
);

INSERT INTO lakesoul.partition_registry (table_id, partition_desc)
SELECT DISTINCT table_id, partition_desc FROM public.partition_info
ON CONFLICT DO NOTHING;

CREATE INDEX IF NOT EXISTS partition_registry_desc_terms_index
    ON lakesoul.partition_registry USING GIN (lakesoul.partition_desc_terms(table_id, partition_desc));

-- SECURITY DEFINER: any role that may insert partition_info (LakeSoul's own
-- clients too) registers partitions without rights on schema lakesoul.
CREATE OR REPLACE FUNCTION lakesoul.register_partition() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO lakesoul.partition_registry (table_id, partition_desc)
    VALUES (NEW.table_id, NEW.partition_desc)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS partition_registry_insert ON public.partition_info;
CREATE TRIGGER partition_registry_insert
    AFTER INSERT ON public.partition_info
    FOR EACH ROW WHEN (NEW.version = 0) EXECUTE FUNCTION lakesoul.register_partition();

-- Replaced by the registry's index.
DROP INDEX IF EXISTS public.partition_info_desc_terms_index;
