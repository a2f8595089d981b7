DROP TABLE IF EXISTS lakesoul.vector_index_segment;
DROP TABLE IF EXISTS lakesoul.vector_index;
DO $$
BEGIN
    IF obj_description(to_regtype('vector'), 'pg_type') = 'lakesoul: pgvector vector type name' THEN
        DROP DOMAIN public.vector;
    END IF;
END
$$;
