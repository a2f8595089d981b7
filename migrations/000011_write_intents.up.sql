-- Write intents: a writer's promise that files whose names carry its id are
-- on their way to a commit. Orphan collection never deletes a file covered by
-- an intent, and a commit under an intent consumes it, in the commit's
-- transaction, and fails if it is gone (expired and collected, or released):
-- so a commit never references a file a collector may have deleted, and a
-- collector never deletes the files of an open writer (an open transaction
-- block, a long COPY, a compaction), however old they are.
--
-- A writer registers its intent before it creates any file and renews it
-- while it is open (sqlfuncs/090_write_intents.sql). Its files are named
-- part-<id><8 more alphanumerics>_<bucket>.parquet: LakeSoul's shape, with
-- the intent id as the first 8 of the 16 random characters (LakeSoul's
-- readers only parse the _<bucket> suffix). Ids come from a sequence, so no
-- two intents share one; it starts at a random point so that a catalog
-- re-created from scratch does not reuse the ids (and file names) of files
-- left in the warehouse. token is the writer's secret: only the holder can
-- commit under (consume) the intent.
--
-- Only the catalog owner reads and writes the table (no grants, row-level
-- security without policies); users consume their own intents through
-- lakesoul.commit, which calls a SECURITY DEFINER function that needs the
-- token.

CREATE SEQUENCE IF NOT EXISTS lakesoul.write_intent_seq MINVALUE 0 MAXVALUE 218340105584895;
SELECT setval('lakesoul.write_intent_seq', (random() * 100000000000000)::bigint);

CREATE TABLE IF NOT EXISTS lakesoul.write_intent (
    id         text PRIMARY KEY,
    token      uuid NOT NULL,
    -- files the writer creates under names that do not carry the id (a
    -- leveled compaction moves a file into the next level under its name)
    paths      text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS write_intent_expires_index ON lakesoul.write_intent (expires_at);

REVOKE ALL ON lakesoul.write_intent FROM PUBLIC;
REVOKE ALL ON SEQUENCE lakesoul.write_intent_seq FROM PUBLIC;
ALTER TABLE lakesoul.write_intent ENABLE ROW LEVEL SECURITY;
