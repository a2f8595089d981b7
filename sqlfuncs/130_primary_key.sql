-- add_primary_key makes a table without a key, which has never committed a
-- version, a primary-key table: new partitions ("<range cols>;<key cols>"),
-- schema (key columns not null) and properties (hashBucketNum). Rows written
-- without a key are not bucketed by it, so a table with any partition version
-- is refused (0A000); the table_info row is held FOR UPDATE, against commits,
-- which hold it FOR SHARE (020_commit.sql), so none can slip in between.
CREATE OR REPLACE FUNCTION lakesoul.add_primary_key(p_table_id text, p_partitions text,
    p_table_schema text, p_properties jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_old public.table_info%ROWTYPE;
BEGIN
    SELECT * INTO v_old FROM public.table_info WHERE table_id = p_table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    IF split_part(coalesce(v_old.partitions, ';'), ';', 2) <> '' THEN
        RAISE EXCEPTION 'multiple primary keys for table "%" are not allowed', v_old.table_name
            USING ERRCODE = '42P16';
    END IF;
    IF EXISTS (SELECT 1 FROM public.partition_info WHERE table_id = p_table_id) THEN
        RAISE EXCEPTION 'a primary key can only be added to a lake table that has no rows yet'
            USING ERRCODE = '0A000',
                  HINT = 'restore the schema first (pg_dump --schema-only), then the rows (pg_dump --data-only)';
    END IF;
    PERFORM lakesoul.alter_table(p_table_id, p_table_schema, p_properties);
    UPDATE public.table_info SET partitions = p_partitions WHERE table_id = p_table_id;
END
$$;
