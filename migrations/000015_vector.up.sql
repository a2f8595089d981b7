-- pgvector's vector type, for clients that look it up by name
-- (pgvector-go's RegisterTypes asks to_regtype('vector')): where pgvector is
-- not installed, a domain over real[] gives the name an OID, which the server
-- reports for vector columns. Values never live in the catalog.
DO $$
BEGIN
    IF to_regtype('vector') IS NULL THEN
        CREATE DOMAIN public.vector AS real[];
        COMMENT ON DOMAIN public.vector IS 'lakesoul: pgvector vector type name';
    END IF;
END
$$;
GRANT USAGE ON TYPE vector TO PUBLIC;

-- Vector indexes (CREATE INDEX … USING ivfflat|hnsw) on lake tables.
CREATE TABLE lakesoul.vector_index (
    index_name  text        NOT NULL,
    table_id    text        NOT NULL REFERENCES public.table_info (table_id) ON DELETE CASCADE,
    column_name text        NOT NULL,
    method      text        NOT NULL CHECK (method IN ('ivfflat')),
    metric      text        NOT NULL CHECK (metric IN ('l2', 'cosine', 'ip')),
    options     jsonb       NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, index_name)
);

-- One built index segment per partition × bucket: the index file, and the
-- data files (by path) whose rows it holds. A reader searches the segment
-- for those files and the remaining live files exactly.
CREATE TABLE lakesoul.vector_index_segment (
    table_id       text        NOT NULL,
    index_name     text        NOT NULL,
    partition_desc text        NOT NULL,
    bucket         int         NOT NULL,
    path           text        NOT NULL,
    data_files     text[]      NOT NULL,
    rows           bigint      NOT NULL,
    built_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, index_name, partition_desc, bucket),
    FOREIGN KEY (table_id, index_name) REFERENCES lakesoul.vector_index ON DELETE CASCADE
);

-- Visible, and changeable, for roles that see the table (RLS on table_info).
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.vector_index, lakesoul.vector_index_segment
    TO base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.vector_index ENABLE ROW LEVEL SECURITY;
CREATE POLICY vector_index_visible ON lakesoul.vector_index FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = vector_index.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = vector_index.table_id));
ALTER TABLE lakesoul.vector_index_segment ENABLE ROW LEVEL SECURITY;
CREATE POLICY vector_index_segment_visible ON lakesoul.vector_index_segment FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = vector_index_segment.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = vector_index_segment.table_id));
