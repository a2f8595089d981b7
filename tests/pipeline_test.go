package tests

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The statements of a pipeline — the extended protocol's Executes up to
// one Sync: pgx batches, psycopg 3 pipelines, JDBC executeBatch — are one
// implicit transaction, as in PostgreSQL (issue 32): an error in any of
// them keeps none, and all of them commit together, in one commit.

// commits is the number of commits of table in lakesoul.history.
func commits(t *testing.T, ctx context.Context, c *pgx.Conn, table string) int {
	t.Helper()
	n, err := strconv.Atoi(queryStrings(t, ctx, c, "SELECT count(*) FROM lakesoul.history('"+table+"')")[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPipelineTransactionPgxBatch(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA plb", "CREATE TABLE plb.t (id int PRIMARY KEY, v text)",
		"INSERT INTO plb.t VALUES (0, 'seed')")

	// A failing statement in the middle: nothing of the batch is applied.
	before := commits(t, ctx, c, "plb.t")
	b := &pgx.Batch{}
	b.Queue("INSERT INTO plb.t VALUES ($1, $2)", 1, "a")
	b.Queue("INSERT INTO plb.t VALUES ($1, 'b' || (10 / $2::int))", 2, 0)
	b.Queue("INSERT INTO plb.t VALUES ($1, $2)", 3, "c")
	if err := c.SendBatch(ctx, b).Close(); pgCode(err) != "22012" {
		t.Fatalf("batch with a failing statement: %v, want 22012", err)
	}
	if got := ids(t, ctx, c, "plb.t"); got != "0" {
		t.Errorf("rows after the failed batch: %q, want 0", got)
	}
	if n := commits(t, ctx, c, "plb.t") - before; n != 0 {
		t.Errorf("the failed batch made %d commits", n)
	}

	// All good: all applied, in one commit; DDL in the batch commits with
	// the writes.
	b = &pgx.Batch{}
	for i := 1; i <= 5; i++ {
		b.Queue("INSERT INTO plb.t VALUES ($1, $2)", i, "v")
	}
	b.Queue("ALTER TABLE plb.t ADD COLUMN c int")
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, ctx, c, "plb.t"); got != "0,1,2,3,4,5" {
		t.Errorf("rows after the batch: %q", got)
	}
	if n := commits(t, ctx, c, "plb.t") - before; n != 1 {
		t.Errorf("the batch of 5 INSERTs made %d commits, want 1", n)
	}

	// The failure comes after DDL: the DDL is undone too.
	b = &pgx.Batch{}
	b.Queue("ALTER TABLE plb.t ADD COLUMN d int")
	b.Queue("INSERT INTO plb.t (id, v) VALUES ($1, 'x' || (10 / $2::int))", 9, 0)
	if err := c.SendBatch(ctx, b).Close(); pgCode(err) != "22012" {
		t.Fatalf("batch with DDL and a failing statement: %v, want 22012", err)
	}
	if _, err := c.Exec(ctx, "SELECT d FROM plb.t"); pgCode(err) != "42703" {
		t.Errorf("column d after the failed batch: %v, want 42703", err)
	}

	// A statement that cannot run in a transaction block runs as the
	// first of a batch, and is refused after another statement of it.
	b = &pgx.Batch{}
	b.Queue("VACUUM plb.t")
	b.Queue("INSERT INTO plb.t (id, v) VALUES ($1, $2)", 6, "f")
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Errorf("VACUUM first in a batch: %v", err)
	}
	b = &pgx.Batch{}
	b.Queue("INSERT INTO plb.t (id, v) VALUES ($1, $2)", 7, "g")
	b.Queue("VACUUM plb.t")
	if err := c.SendBatch(ctx, b).Close(); pgCode(err) != "25001" {
		t.Errorf("VACUUM second in a batch: %v, want 25001", err)
	}
	if got := ids(t, ctx, c, "plb.t"); got != "0,1,2,3,4,5,6" {
		t.Errorf("rows after the VACUUM batches: %q", got)
	}
}

// A client that goes away in the middle of a pipeline leaves nothing of it
// behind and holds nothing: its rows and DDL are rolled back, and the held
// catalog transaction its DDL took is released.
func TestPipelineTransactionDisconnect(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA pld", "CREATE TABLE pld.t (id int PRIMARY KEY, v text)")

	d := srv.connect(t)
	hc, err := d.PgConn().Hijack()
	if err != nil {
		t.Fatal(err)
	}
	fe := hc.Frontend
	for _, q := range []string{"INSERT INTO pld.t VALUES (1, 'a')", "ALTER TABLE pld.t ADD COLUMN c int"} {
		fe.Send(&pgproto3.Parse{Query: q})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
	}
	fe.Send(&pgproto3.Flush{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	// Both executed: two CommandCompletes.
	for done := 0; done < 2; {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			done++
		case *pgproto3.ErrorResponse:
			t.Fatalf("pipeline: %s %s", m.Code, m.Message)
		}
	}
	hc.Conn.Close() // no Sync: the pipeline's transaction is open

	// The held catalog transaction is released and nothing is kept: DDL
	// on the table from another session goes through (it would wait for
	// the table's catalog rows otherwise).
	mustExec(t, ctx, c, "ALTER TABLE pld.t ADD COLUMN c int")
	if got := ids(t, ctx, c, "pld.t"); got != "" {
		t.Errorf("rows after the client left mid-pipeline: %q, want none", got)
	}
}

// TestPipelineTransactionPsycopg3 runs psycopg 3 pipelines in autocommit
// (Debian's python3-psycopg): a pipeline whose third INSERT fails keeps
// none of its rows, as on PostgreSQL; so does executemany.
func TestPipelineTransactionPsycopg3(t *testing.T) {
	python, dsn := pythonClient(t, "psycopg", "python3-psycopg")
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg3_pipeline.py"), dsn, "psy3pl")
	expectLines(t, got,
		"FAILED 22012",
		"AFTER_FAILURE 0",
		"AFTER_SUCCESS 5",
		"EXECUTEMANY_FAILED 22012",
		"AFTER_EXECUTEMANY 5",
		"DONE")
}
