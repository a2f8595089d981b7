DROP INDEX IF EXISTS public.partition_info_desc_terms_index;
DROP FUNCTION IF EXISTS lakesoul.partition_desc_terms(text, text);
DROP INDEX IF EXISTS public.partition_info_compaction_index;
DROP TABLE IF EXISTS lakesoul.table_created;
