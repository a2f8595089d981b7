DROP TABLE IF EXISTS lakesoul.column_index;
