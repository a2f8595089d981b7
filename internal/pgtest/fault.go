package pgtest

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Fault injection at COMMIT in a real catalog. InstallCommitFaults adds, to
// a migrated catalog database, deferred constraint triggers on the metadata
// tables every catalog write touches (namespace, table_info, table_name_id,
// partition_info, data_commit_info). They fire when the writing transaction
// commits, for rows whose table_id, namespace or table_namespace is an armed
// target, and do what the target's mode says:
//
//	fail   raise SQLSTATE FaultCode: the COMMIT fails, nothing of it stays
//	sleep  sleep at COMMIT (so a test can cut the connection right there)
//	log    record (target, metadata table, operation, current_user) in
//	       public.commit_fault_log and let the commit pass
//
// The trigger function runs as the writing role (SECURITY INVOKER), so the
// log shows the role each commit really ran as.

// FaultCode is the SQLSTATE of an injected commit failure.
const FaultCode = "LSF01"

// Execer runs a statement (a *pgx.Conn, a pool, a transaction).
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const installFaultsSQL = `
CREATE TABLE IF NOT EXISTS public.commit_fault (target text PRIMARY KEY, mode text NOT NULL);
CREATE TABLE IF NOT EXISTS public.commit_fault_log (target text, tbl text, op text, usr text);
GRANT SELECT ON public.commit_fault TO PUBLIC;
GRANT INSERT ON public.commit_fault_log TO PUBLIC;
CREATE OR REPLACE FUNCTION public.commit_fault_fire() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    r jsonb := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
    f public.commit_fault%ROWTYPE;
BEGIN
    SELECT * INTO f FROM public.commit_fault
     WHERE target IN (r->>'table_id', r->>'namespace', r->>'table_namespace') LIMIT 1;
    IF f.mode = 'fail' THEN
        RAISE EXCEPTION 'injected failure at COMMIT (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = 'LSF01';
    ELSIF f.mode = 'sleep' THEN
        PERFORM pg_sleep(600);
    ELSIF f.mode = 'log' THEN
        INSERT INTO public.commit_fault_log VALUES (f.target, TG_TABLE_NAME, TG_OP, current_user);
    END IF;
    RETURN NULL;
END
$$;
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['namespace', 'table_info', 'table_name_id', 'partition_info', 'data_commit_info'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS commit_fault ON public.%I', t);
        EXECUTE format('CREATE CONSTRAINT TRIGGER commit_fault AFTER INSERT OR UPDATE OR DELETE ON public.%I
                        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.commit_fault_fire()', t);
    END LOOP;
END
$$;
`

// InstallCommitFaults installs the fault triggers (idempotent).
func InstallCommitFaults(ctx context.Context, db Execer) error {
	_, err := db.Exec(ctx, installFaultsSQL)
	return err
}

// ArmCommitFault arms target (a table id or namespace name) with mode
// ("fail", "sleep", "log"); "" disarms it.
func ArmCommitFault(ctx context.Context, db Execer, target, mode string) error {
	if mode == "" {
		_, err := db.Exec(ctx, "DELETE FROM public.commit_fault WHERE target = $1", target)
		return err
	}
	_, err := db.Exec(ctx, `INSERT INTO public.commit_fault VALUES ($1, $2)
		ON CONFLICT (target) DO UPDATE SET mode = excluded.mode`, target, mode)
	return err
}
