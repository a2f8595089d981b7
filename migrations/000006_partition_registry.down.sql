CREATE INDEX IF NOT EXISTS partition_info_desc_terms_index
    ON public.partition_info USING GIN (lakesoul.partition_desc_terms(table_id, partition_desc));
DROP TRIGGER IF EXISTS partition_registry_insert ON public.partition_info;
DROP FUNCTION IF EXISTS lakesoul.register_partition();
DROP TABLE IF EXISTS lakesoul.partition_registry;
