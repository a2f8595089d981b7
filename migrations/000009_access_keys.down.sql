DROP FUNCTION IF EXISTS lakesoul.revoke_access_key(text);
DROP FUNCTION IF EXISTS lakesoul.create_access_key();
DROP VIEW IF EXISTS lakesoul.access_keys;
DROP TABLE IF EXISTS lakesoul.access_key;
