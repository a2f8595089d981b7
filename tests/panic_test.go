package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// faultsBin is the server built with the build tag lakesoul_faults, whose
// internal/faults.Point panics where LAKESOUL_FAULTS says; built once, by
// the first test that needs it, next to the binary under test.
var faultsBin struct {
	once sync.Once
	path string
	err  error
}

func faultsBinary(t *testing.T) string {
	t.Helper()
	faultsBin.once.Do(func() {
		faultsBin.path = filepath.Join(filepath.Dir(lakesoulBin), "lakesoul-faults")
		faultsBin.err = buildBinary(faultsBin.path, "lakesoul_faults")
	})
	if faultsBin.err != nil {
		t.Fatal(faultsBin.err)
	}
	return faultsBin.path
}

// injectedFaults are the points the test arms, each on a table of its own
// (internal/faults.Point's key): a statement's own goroutine (the ingest
// commit), goroutines a statement starts (the ingest writer, direct-scan
// workers, COPY's converter, a Flight scan unit's stream), DuckDB's threads
// (lakesoul_scan's FillChunk) and background jobs (a vector index build, a
// compaction).
var injectedFaults = []string{
	"sink.commit=pf.commit_boom",
	"sink.write=pf.write_boom",
	"directscan.worker=pf.scan_boom",
	"scanunit.read=pf.unit_boom",
	"scan.fill=pf.fill_boom",
	"copy.convert=pf.copy_boom",
	"vector.build=pf.vec_boom",
	"compaction.job=pf.compact_boom",
}

// TestInjectedPanics: a panic at each armed point fails only the statement
// or job it happened in — XX000 "internal error" over pgwire and Flight
// SQL, a transaction block in the failed state, the connection and the
// Flight client serving their next statements, other sessions unaffected,
// nothing of the failed statement visible — and is logged with its stack;
// the server and its PostgreSQL stay up throughout.
func TestInjectedPanics(t *testing.T) {
	requirePG(t)
	bin := faultsBinary(t)
	base := testBaseDir(t)
	faddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServerBin(bin, filepath.Join(base, "data"), sharedPassword,
		[]string{"LAKESOUL_FAULTS=" + strings.Join(injectedFaults, ",")}, "--flight-listen", faddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.logTail(20000))
		}
		s.stopT(t)
	})
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('pf_ws')",
		"SELECT lakesoul.create_user('pf_user', 'pf-pw', 'pf_ws', admin => true)")
	user := s.login(t, ctx, "pf_user", "pf-pw")
	other := s.login(t, ctx, "pf_user", "pf-pw")
	mustExec(t, ctx, user, "CREATE SCHEMA pf", "CREATE TABLE pf.ok (id bigint PRIMARY KEY, v text)",
		"INSERT INTO pf.ok VALUES (1, 'a')")
	for _, name := range []string{"commit_boom", "write_boom", "scan_boom", "unit_boom", "fill_boom", "copy_boom", "compact_boom"} {
		mustExec(t, ctx, user, "CREATE TABLE pf."+name+" (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 2)")
	}
	// The tables a statement only reads get their rows before (writing
	// them passes no armed point).
	mustExec(t, ctx, user, "INSERT INTO pf.scan_boom SELECT g, 's' || g FROM generate_series(1, 100) g",
		"INSERT INTO pf.unit_boom SELECT g, 'u' || g FROM generate_series(1, 100) g",
		"INSERT INTO pf.fill_boom SELECT g, 'f' || g FROM generate_series(1, 100) g")

	// others checks, after each failure, that another session is served
	// and that pf.ok is as it was.
	others := func(what string) {
		t.Helper()
		wantRows(t, what+": another session", queryStrings(t, ctx, other, "SELECT id, v FROM pf.ok ORDER BY id"), []string{"1|a"})
		select {
		case <-s.exited:
			t.Fatalf("%s: the server exited: %v", what, s.waitErr)
		default:
		}
	}
	pgFails := func(what string, err error) {
		t.Helper()
		if code := pgCode(err); code != "XX000" {
			t.Errorf("%s: %v (SQLSTATE %q), want XX000", what, err, code)
		} else if !strings.Contains(err.Error(), "internal error") {
			t.Errorf("%s: %v, want the message \"internal error\"", what, err)
		}
		if _, err := user.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatalf("%s: the connection no longer serves: %v", what, err)
		}
		others(what)
	}

	// pgwire: a statement, goroutines it starts, DuckDB's threads.
	_, err = user.Exec(ctx, "INSERT INTO pf.commit_boom VALUES (1, 'x')")
	pgFails("INSERT, panic in the statement", err)
	_, err = user.Exec(ctx, "INSERT INTO pf.write_boom SELECT g, 'w' FROM generate_series(1, 1000) g")
	pgFails("INSERT, panic in the ingest writer goroutine", err)
	_, err = user.PgConn().CopyFrom(ctx, strings.NewReader("1\tc\n2\tc\n"), "COPY pf.copy_boom FROM STDIN")
	pgFails("COPY, panic in the converter goroutine", err)
	_, err = tryQueryStrings(ctx, user, "SELECT id, v FROM pf.scan_boom")
	pgFails("direct scan, panic in a worker goroutine", err)
	_, err = tryQueryStrings(ctx, user, "SELECT sum(id) FROM pf.fill_boom")
	pgFails("DuckDB scan, panic on a DuckDB thread", err)
	for _, tb := range []string{"commit_boom", "write_boom", "copy_boom"} {
		if n := countRows(t, ctx, other, "pf."+tb); n != 0 {
			t.Errorf("pf.%s has %d rows after its failed writes", tb, n)
		}
	}

	// In a transaction block the panic fails the block like any error:
	// 25P02 until ROLLBACK, which undoes the block's earlier write.
	mustExec(t, ctx, user, "BEGIN", "INSERT INTO pf.ok VALUES (2, 'in block')")
	_, err = user.Exec(ctx, "INSERT INTO pf.commit_boom VALUES (2, 'x')")
	if pgCode(err) != "XX000" {
		t.Errorf("panic in a block: %v, want XX000", err)
	}
	if _, err := user.Exec(ctx, "SELECT 1"); pgCode(err) != "25P02" {
		t.Errorf("after a panic in a block: %v, want 25P02", err)
	}
	mustExec(t, ctx, user, "ROLLBACK")
	others("after the block's rollback")

	// Flight SQL: the same, and the client's session goes on.
	cl, fctx := mustFlight(t, ctx, faddr, "pf_user", "pf-pw")
	flightFails := func(what string, err error) {
		t.Helper()
		if code := flightSQLState(err); code != "XX000" || grpcCodeOf(err).String() != "Internal" {
			t.Errorf("%s: %v, want Internal with SQLSTATE XX000", what, err)
		}
		if got, _, err := flightRows(fctx, cl, "SELECT 40 + 2"); err != nil || len(got) != 1 || got[0] != "42" {
			t.Fatalf("%s: the Flight client no longer serves: %v %v", what, got, err)
		}
		others(what)
	}
	_, err = cl.ExecuteUpdate(fctx, "INSERT INTO pf.commit_boom VALUES (3, 'x')")
	flightFails("Flight ExecuteUpdate, panic in the statement", err)
	// With a LIMIT the scan is one stream of the direct scan's workers;
	// without, a plain scan's endpoints are its units, each read by a
	// stream goroutine of its DoGet.
	_, _, err = flightRows(fctx, cl, "SELECT id, v FROM pf.scan_boom LIMIT 1000")
	flightFails("Flight DoGet of a direct scan, panic in a worker goroutine", err)
	_, _, err = flightRows(fctx, cl, "SELECT id, v FROM pf.unit_boom")
	flightFails("Flight DoGet of a scan unit, panic in the stream goroutine", err)
	_, _, err = flightRows(fctx, cl, "SELECT sum(id) FROM pf.fill_boom")
	flightFails("Flight query, panic on a DuckDB thread", err)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"i", "j"}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	ns := "pf"
	_, err = cl.ExecuteIngest(fctx, rdr, &flightsql.ExecuteIngestOpts{Schema: &ns, Table: "write_boom",
		TableDefinitionOptions: &flightsql.TableDefinitionOptions{IfNotExist: flightsql.TableDefinitionOptionsTableNotExistOptionFail,
			IfExists: flightsql.TableDefinitionOptionsTableExistsOptionAppend}})
	rdr.Release()
	rec.Release()
	flightFails("Flight ingest, panic in the ingest writer goroutine", err)
	txn, err := cl.BeginTransaction(fctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.ExecuteUpdate(fctx, "INSERT INTO pf.ok VALUES (3, 'in txn')"); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.ExecuteUpdate(fctx, "INSERT INTO pf.commit_boom VALUES (4, 'x')"); flightSQLState(err) != "XX000" {
		t.Errorf("Flight panic in a transaction: %v, want XX000", err)
	}
	if _, err := txn.ExecuteUpdate(fctx, "INSERT INTO pf.ok VALUES (4, 'in txn')"); flightSQLState(err) != "25P02" {
		t.Errorf("Flight statement after a panic in the transaction: %v, want 25P02", err)
	}
	if err := txn.Rollback(fctx); err != nil {
		t.Fatal(err)
	}
	others("after the Flight transaction's rollback")

	// Background jobs fail alone: a vector index build (the CREATE INDEX
	// itself succeeds; the build runs after it) and a compaction, queued
	// after ten versions and run by a worker, and asked for by CALL (whose
	// statement then fails with it).
	mustExec(t, ctx, user, "CREATE TABLE pf.vec_boom (id bigint PRIMARY KEY, emb vector(3))",
		"INSERT INTO pf.vec_boom SELECT g, ARRAY[g, g, g]::vector(3) FROM generate_series(1, 50) g",
		"CREATE INDEX vec_boom_idx ON pf.vec_boom USING ivfflat (emb vector_l2_ops) WITH (lists = 2)")
	for i := range 12 { // versions 0…11: the queue takes a partition at version 10
		mustExec(t, ctx, user, fmt.Sprintf("INSERT INTO pf.compact_boom VALUES (%d, 'c')", i))
	}
	for _, point := range []string{"vector.build=pf.vec_boom", "compaction.job=pf.compact_boom"} {
		if !waitForLog(s, "injected fault "+point, 2*time.Minute) {
			t.Errorf("the background job never reached %s", point)
		}
	}
	_, err = user.Exec(ctx, "CALL lakesoul.compact('pf.compact_boom')")
	pgFails("CALL lakesoul.compact, panic in the compaction", err)
	if n := countRows(t, ctx, other, "pf.compact_boom"); n != 12 {
		t.Errorf("pf.compact_boom has %d rows, want 12", n)
	}
	if got := queryStrings(t, ctx, other, "SELECT id FROM pf.vec_boom ORDER BY emb <-> '[1,1,1]' LIMIT 2"); len(got) != 2 {
		t.Errorf("vector search after the failed build: %q", got)
	}

	// Every panic was logged with its stack where it was recovered, and no
	// connection was terminated.
	log, err := os.ReadFile(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range injectedFaults {
		if !bytes.Contains(log, []byte(`msg="panic recovered" panic="injected fault `+f+`" stack="goroutine `)) {
			t.Errorf("no panic logged with its stack for %s", f)
		}
	}
	if bytes.Contains(log, []byte("terminating connection")) {
		t.Error("a connection was terminated")
	}
	wantRows(t, "the user's connection at the end", queryStrings(t, ctx, user, "SELECT id, v FROM pf.ok ORDER BY id"), []string{"1|a"})
}

// waitForLog waits until the server's log contains text.
func waitForLog(s *server, text string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(s.logPath); err == nil && bytes.Contains(b, []byte(text)) {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
