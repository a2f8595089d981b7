-- add_primary_key_emptying makes a table that has rows a primary-key table
-- (ALTER TABLE … ADD PRIMARY KEY: pgbench -i, pg_restore in one pass): in
-- one transaction it empties every partition (a DeleteCommit, as
-- lakesoul.truncate) and then changes the definition as add_primary_key
-- does. Rows written without a key are not bucketed or sorted by it, so none
-- may stay live under the new definition; the caller writes the rows again,
-- keyed, in the same transaction (engine/alterrows.go), having checked that
-- the key is unique and not null. Old versions stay for time travel, read
-- with the definition they were written under by nobody: history reads use
-- the table's current definition, as after any ALTER.
CREATE OR REPLACE FUNCTION lakesoul.add_primary_key_emptying(p_table_id text, p_partitions text,
    p_table_schema text, p_properties jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_old   public.table_info%ROWTYPE;
    v_parts jsonb;
BEGIN
    SELECT * INTO v_old FROM public.table_info WHERE table_id = p_table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    IF split_part(coalesce(v_old.partitions, ';'), ';', 2) <> '' THEN
        RAISE EXCEPTION 'multiple primary keys for table "%" are not allowed', v_old.table_name
            USING ERRCODE = '42P16';
    END IF;
    SELECT coalesce(jsonb_agg(jsonb_build_object('partition_desc', l.d, 'commit_id', gen_random_uuid(),
                                                 'read_version', l.ver, 'file_ops', '[]'::jsonb)), '[]'::jsonb)
      INTO v_parts
      FROM (SELECT DISTINCT ON (p.partition_desc) p.partition_desc AS d, p.version AS ver, p.snapshot AS snap
              FROM public.partition_info p WHERE p.table_id = p_table_id
             ORDER BY p.partition_desc, p.version DESC) l
     WHERE cardinality(l.snap) > 0;
    PERFORM lakesoul.commit(p_table_id, 'DeleteCommit', v_parts);
    IF EXISTS (SELECT 1 FROM (SELECT DISTINCT ON (p.partition_desc) p.snapshot
                                FROM public.partition_info p WHERE p.table_id = p_table_id
                               ORDER BY p.partition_desc, p.version DESC) l
                WHERE cardinality(l.snapshot) > 0) THEN
        RAISE EXCEPTION 'table % still has rows', p_table_id USING ERRCODE = '40001';
    END IF;
    PERFORM lakesoul.alter_table(p_table_id, p_table_schema, p_properties);
    UPDATE public.table_info SET partitions = p_partitions WHERE table_id = p_table_id;
END
$$;
