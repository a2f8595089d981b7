-- The functions of sqlfuncs/160_rename.sql need the table; they go with it.
DROP FUNCTION IF EXISTS lakesoul.free_table_dir(text);
DROP FUNCTION IF EXISTS lakesoul.record_table_dir(text);
DROP FUNCTION IF EXISTS lakesoul.rename_table(text, text);
DROP TABLE IF EXISTS lakesoul.table_dir;
