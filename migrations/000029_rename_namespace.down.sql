REVOKE UPDATE (namespace) ON lakesoul.sequence FROM base_super_admin_role, base_admin_role, base_user_role;
