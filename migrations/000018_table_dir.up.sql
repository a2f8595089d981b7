-- Table directories recorded in the catalog (ALTER TABLE … RENAME TO,
-- engine/rename.go). A table's files live in the directory its table_path
-- names; before renames existed that was always <warehouse>/<namespace>/<name>
-- (layout.TableDir), and the server refused any other path. A renamed table
-- keeps its files where they are, so its directory no longer follows from its
-- name: the directory is recorded here when a table is created (every table
-- created from this migration on) and is what the server checks its path
-- against (layout.CheckRecordedDir); tables without a row keep the rule of
-- their name. A new table whose name's directory is recorded for (or used
-- by) another table gets a fresh sibling directory <name>_<8 hex digits>
-- (lakesoul.free_table_dir).
--
-- A row is never changed: the directory of a table is fixed at its creation.
-- Rows are visible, and may be inserted, only for tables the role sees (as
-- lakesoul.table_oid); a role may not update them, and a row goes with its
-- table (ON DELETE CASCADE). A directory belongs to one table at most.
CREATE TABLE lakesoul.table_dir (
    table_id text PRIMARY KEY REFERENCES public.table_info (table_id) ON DELETE CASCADE,
    dir      text NOT NULL UNIQUE
);
ALTER TABLE lakesoul.table_dir ENABLE ROW LEVEL SECURITY;
CREATE POLICY table_dir_visible ON lakesoul.table_dir FOR ALL
    USING (EXISTS (SELECT 1 FROM public.table_info i WHERE i.table_id = table_dir.table_id))
    WITH CHECK (EXISTS (SELECT 1 FROM public.table_info i WHERE i.table_id = table_dir.table_id));
GRANT SELECT, INSERT, DELETE ON lakesoul.table_dir TO base_super_admin_role, base_admin_role, base_user_role;
