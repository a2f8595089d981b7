-- Write intents (migration 000011): how writers, commits and orphan
-- collection agree on which files may be deleted.
--
--   writer     write_intent_begin before it creates any file (the id is the
--              prefix of its file names), write_intent_renew while it is open
--              (only a live intent is renewed: an expired one may be being
--              collected), write_intent_release once it has deleted the files
--              it will not commit;
--   commit     lakesoul.commit / commit_many / compaction_commit take the
--              intent and consume it in the commit's own transaction
--              (write_intent_consume, then write_intent_verify): a commit
--              whose intent is gone fails with 55000 and lands nothing, and
--              every file it adds must carry the intent's id (or be claimed
--              by it: write_intent_claim_path) or be a file the table
--              already has;
--   collector  lists files first, then deletes expired intents in their own
--              transaction (write_intents_expire) and, in one snapshot,
--              reads the table's known paths and the intents still there
--              (write_intents_live): a file that is unknown and carries no
--              such intent is an orphan.
--
-- Why nothing is lost: an intent exists (committed) before its first file, so
-- a file the collector listed has an intent that its snapshot still shows,
-- unless it was consumed by a commit (whose rows that same snapshot shows:
-- the file is known) or deleted — by the collector once expired (the
-- writer's commit then finds it gone and fails) or by its writer, which no
-- longer wants the file. Consuming, renewing and expiring one intent are row
-- operations on the same row, so they serialise.
--
-- The writer's calls (begin, renew, claim, release) commit without waiting
-- for their WAL flush (catalog/intent.go): visible at once, flushed no later
-- than the synchronous commit that consumes the intent. A catalog crash that
-- loses one loses it before any commit consumed it, so that commit fails as
-- for an expired intent and the files were never referenced.

CREATE OR REPLACE FUNCTION lakesoul.write_intent_begin(p_ttl_ms bigint)
RETURNS TABLE (id text, token uuid) LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_alphabet constant text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    v_n bigint := nextval('lakesoul.write_intent_seq');
BEGIN
    id := '';
    FOR i IN 1..8 LOOP -- 8 base-62 digits, the alphabet of LakeSoul's file names
        id := substr(v_alphabet, (v_n % 62)::int + 1, 1) || id;
        v_n := v_n / 62;
    END LOOP;
    token := gen_random_uuid();
    INSERT INTO lakesoul.write_intent (id, token, expires_at)
    VALUES (id, token, now() + p_ttl_ms * interval '1 millisecond');
    RETURN NEXT;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul.write_intent_renew(p_id text, p_token uuid, p_ttl_ms bigint)
RETURNS boolean LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, lakesoul AS $$
BEGIN
    UPDATE lakesoul.write_intent i SET expires_at = now() + p_ttl_ms * interval '1 millisecond'
     WHERE i.id = p_id AND i.token = p_token AND i.expires_at > now();
    RETURN FOUND;
END
$$;

-- write_intent_claim_path adds a file the writer will create under a name
-- that does not carry the intent's id; false if the intent is gone.
CREATE OR REPLACE FUNCTION lakesoul.write_intent_claim_path(p_id text, p_token uuid, p_path text)
RETURNS boolean LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, lakesoul AS $$
BEGIN
    UPDATE lakesoul.write_intent i SET paths = i.paths || p_path
     WHERE i.id = p_id AND i.token = p_token AND i.expires_at > now();
    RETURN FOUND;
END
$$;

CREATE OR REPLACE FUNCTION lakesoul.write_intent_release(p_id text, p_token uuid)
RETURNS void LANGUAGE sql VOLATILE
SET search_path = pg_catalog, lakesoul AS $$
    DELETE FROM lakesoul.write_intent i WHERE i.id = p_id AND i.token = p_token
$$;

-- write_intent_consume deletes a live intent for the commit that runs it and
-- returns its claimed paths, or NULL if it is gone or expired. It runs as the
-- catalog owner (users cannot touch the table) and needs the intent's secret
-- token.
CREATE OR REPLACE FUNCTION lakesoul.write_intent_consume(p_id text, p_token uuid)
RETURNS text[] LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, lakesoul, pg_temp AS $$
    WITH gone AS (
        DELETE FROM lakesoul.write_intent i WHERE i.id = p_id AND i.token = p_token AND i.expires_at > now()
        RETURNING i.paths)
    SELECT paths FROM gone
$$;

-- write_intent_verify checks one table's part of a commit under intent p_id.
-- p_claimed is write_intent_consume's answer. An intent that was not
-- consumed (NULL) is acceptable only for a commit that already landed (every
-- partition's commit id is recorded: a client re-sending a commit whose
-- answer it lost, which lakesoul.commit answers without changing anything);
-- otherwise the commit fails, since its files may have been collected. A
-- consumed intent must cover every file the commit adds — by its name or as
-- a claimed path — unless the table already has that file (a leveled
-- compaction keeps files it did not rewrite).
CREATE OR REPLACE FUNCTION lakesoul.write_intent_verify(p_table_id text, p_partitions jsonb, p_id text, p_claimed text[])
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public AS $$
DECLARE
    v_path text;
BEGIN
    IF p_claimed IS NULL THEN
        IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_partitions) e
                    WHERE NOT EXISTS (SELECT 1 FROM public.data_commit_info d
                                       WHERE d.table_id = p_table_id AND d.partition_desc = e->>'partition_desc'
                                         AND d.commit_id = (e->>'commit_id')::uuid)) THEN
            RAISE EXCEPTION 'the write expired before it committed: its files may have been removed'
                USING ERRCODE = '55000',
                      DETAIL = format('Write intent %s is no longer registered in the catalog.', p_id),
                      HINT = 'Run the statement or transaction again.';
        END IF;
        RETURN;
    END IF;
    SELECT o->>'path' INTO v_path
      FROM jsonb_array_elements(p_partitions) e, jsonb_array_elements(coalesce(e->'file_ops', '[]')) o
     WHERE o->>'file_op' = 'add'
       AND regexp_replace(o->>'path', '^.*/', '') NOT LIKE 'part-' || p_id || '%'
       AND o->>'path' <> ALL (p_claimed)
       AND NOT EXISTS (SELECT 1 FROM public.data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) f
                        WHERE d.table_id = p_table_id AND d.partition_desc = e->>'partition_desc' AND f.path = o->>'path')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'commit: file % was not written under the commit''s write intent %', v_path, p_id
            USING ERRCODE = '22023';
    END IF;
END
$$;

-- write_intents_expire deletes the intents that expired (their writers are
-- gone or stalled; a stalled writer's commit will fail) and returns how many.
CREATE OR REPLACE FUNCTION lakesoul.write_intents_expire()
RETURNS int LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, lakesoul AS $$
DECLARE
    v_n int;
BEGIN
    DELETE FROM lakesoul.write_intent i WHERE i.expires_at <= now();
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$$;

-- write_intents_live lists the ids of the intents still registered (expired
-- or not: an intent that expired after write_intents_expire ran still
-- protects its files until the next collection) and their claimed paths.
CREATE OR REPLACE FUNCTION lakesoul.write_intents_live()
RETURNS TABLE (id text, paths text[]) LANGUAGE sql STABLE
SET search_path = pg_catalog, lakesoul AS $$
    SELECT i.id, i.paths FROM lakesoul.write_intent i
$$;
