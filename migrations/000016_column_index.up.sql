-- Column indexes (CREATE [UNIQUE] INDEX … [USING btree] (col, …)) on lake
-- tables. An index names columns whose data files carry a Parquet bloom
-- filter per row group (besides the statistics and page index every column
-- has): writers and compaction add the filters from the moment the index
-- exists, and reads skip files and row groups by them. A UNIQUE index is
-- allowed only on the primary key, which is unique already.
CREATE TABLE lakesoul.column_index (
    index_name  text        NOT NULL,
    table_id    text        NOT NULL REFERENCES public.table_info (table_id) ON DELETE CASCADE,
    columns     text[]      NOT NULL CHECK (cardinality(columns) > 0),
    is_unique   boolean     NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, index_name)
);

-- Visible, and changeable, for roles that see the table (RLS on table_info).
GRANT SELECT, INSERT, UPDATE, DELETE ON lakesoul.column_index
    TO base_super_admin_role, base_admin_role, base_user_role;
ALTER TABLE lakesoul.column_index ENABLE ROW LEVEL SECURITY;
CREATE POLICY column_index_visible ON lakesoul.column_index FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = column_index.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info t WHERE t.table_id = column_index.table_id));
