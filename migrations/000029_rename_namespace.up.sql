-- ALTER SCHEMA … RENAME TO (lakesoul.rename_namespace, sqlfuncs/
-- 180_rename_namespace.sql) moves a namespace's sequences to the new name as
-- the renaming role: the registry row's namespace must be writable by the
-- roles that create sequences (migration 14 granted them INSERT and DELETE
-- only; the row's id names its sequence object, so it is updated in place).
GRANT UPDATE (namespace) ON lakesoul.sequence TO base_super_admin_role, base_admin_role, base_user_role;
