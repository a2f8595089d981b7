-- import_target resolves CALL lakesoul.import's arguments as the calling
-- role (engine/import.go does the reading and the commit):
--   * the table, by name in the session's lake search path or by id
--     (42P01 when the role does not see it);
--   * the options, defaults filled in (format NULL: from the location's
--     file extension);
--   * what the role may read: read_server_files is true for superusers and
--     members of pg_read_server_files (PostgreSQL's rule for COPY FROM a
--     server file), who may import any location the server reaches;
--     namespaces are the namespaces the role sees (row-level security), whose
--     warehouse directories (<warehouse>/<namespace>/…) every role may import
--     from, as it may write there through the S3 proxy.
CREATE OR REPLACE FUNCTION lakesoul.import_target(tbl text, location text, format text DEFAULT NULL,
    header boolean DEFAULT false, delimiter text DEFAULT NULL, register boolean DEFAULT false)
RETURNS TABLE (table_id text, src text, src_format text, has_header boolean, delim text,
               reg boolean, read_server_files boolean, namespaces text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_id text := lakesoul.resolve_table($1);
BEGIN
    IF $2 IS NULL OR $2 = '' THEN
        RAISE EXCEPTION 'lakesoul.import needs a location (file:///… or s3://…)' USING ERRCODE = '22023';
    END IF;
    RETURN QUERY SELECT v_id, $2, lower($3), coalesce($4, false), $5, coalesce($6, false),
        coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false)
            OR pg_catalog.pg_has_role(current_user, 'pg_read_server_files', 'MEMBER'),
        ARRAY(SELECT n.namespace FROM public.namespace n ORDER BY 1);
END
$$;
