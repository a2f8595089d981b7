-- Commit notifications (LISTEN lakesoul_commits). A NOTIFY inside a commit
-- transaction would serialise every notifying commit of the database through
-- its WAL flush (PostgreSQL holds its notify lock from pre-commit to the end
-- of the commit), so commits never notify themselves: after a commit the
-- committing server hands the versions it created to notify_commits, in a
-- transaction of its own that writes nothing durable (synchronous_commit
-- off), batching the commits of many writers into one call.
--
-- notify_commits(p_versions): p_versions is a JSON array of
-- {"t": table_id, "p": partition_desc, "v": version}. Each version that
-- exists becomes one element of a JSON array payload on channel
-- lakesoul_commits: {"table": quoted schema.name, "table_id", "domain",
-- "partition", "version", "commit_op", "committed_at" (UTC, ms)}; payloads
-- stay under PostgreSQL's 8000-byte limit (an element too long alone drops
-- its partition desc and says "partition_truncated": true). The domain lets
-- each server deliver a version only to sessions whose role sees it
-- (domain_visible_to).
CREATE OR REPLACE FUNCTION lakesoul.notify_commits(p_versions jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public SET TimeZone = 'UTC' AS $$
DECLARE
    r       record;
    v_item  jsonb;
    v_text  text;
    v_chunk text := '';
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR r IN
        SELECT t.table_namespace AS ns, t.table_name AS tn, t.table_id AS id, t.domain AS dom,
               p.partition_desc AS d, p.version AS ver, p.commit_op AS op, p.timestamp AS ts
          FROM jsonb_to_recordset(p_versions) AS e(t text, p text, v int)
          JOIN public.partition_info p ON p.table_id = e.t AND p.partition_desc = e.p AND p.version = e.v
          JOIN public.table_info t ON t.table_id = e.t
    LOOP
        v_item := jsonb_build_object('table', quote_ident(CASE WHEN r.ns = 'default' THEN 'public' ELSE r.ns END) || '.' || quote_ident(r.tn), 'table_id', r.id,
                                     'domain', r.dom, 'partition', r.d, 'version', r.ver, 'commit_op', r.op,
                                     'committed_at', to_char(lakesoul.ms_timestamptz(r.ts), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
        v_text := v_item::text;
        IF octet_length(v_text) > 7000 THEN
            v_text := (v_item - 'partition' || jsonb_build_object('partition_truncated', true))::text;
        END IF;
        IF v_chunk <> '' AND octet_length(v_chunk) + octet_length(v_text) > 7900 THEN
            PERFORM pg_notify('lakesoul_commits', '[' || v_chunk || ']');
            v_chunk := '';
        END IF;
        v_chunk := CASE WHEN v_chunk = '' THEN v_text ELSE v_chunk || ',' || v_text END;
    END LOOP;
    IF v_chunk <> '' THEN
        PERFORM pg_notify('lakesoul_commits', '[' || v_chunk || ']');
    END IF;
END
$$;

-- domain_visible_to(role, domain): whether the role sees objects of the
-- domain — lakesoul.domain_visible's predicate (migration 000008) for a
-- named role rather than current_user, plus the roles row-level security
-- does not apply to (superusers, BYPASSRLS). False for an unknown role.
CREATE OR REPLACE FUNCTION lakesoul.domain_visible_to(p_role text, p_domain text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog AS $$
    SELECT coalesce((SELECT u.rolsuper OR u.rolbypassrls
                         OR p_domain IN ('public', 'lake-public')
                         OR p_domain = u.rolname
                         OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = p_domain AND pg_has_role(u.oid, r.oid, 'member'))
                       FROM pg_roles u WHERE u.rolname = p_role), false)
$$;
