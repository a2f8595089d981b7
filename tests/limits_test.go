package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Regression tests of issue 13's denial-of-service items: statements nested
// deep enough to overflow the C parser's stack, unauthenticated clients
// making the server buffer large messages, unbounded connections, statements
// outliving their client, unbounded rows, and the smaller items (auth delay,
// is_superuser, the private PostgreSQL's environment, COPY options).

// pollDeadline only guards the polls below against hanging; nothing is
// asserted about how fast they succeed.
const pollDeadline = 2 * time.Minute

// poll calls cond until it returns true, failing the test after
// pollDeadline.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	pollWithin(t, what, pollDeadline, cond)
}

// pollWithin is poll with a deadline of d.
func pollWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopDeadline is how long a statement whose client went away or cancelled
// may go on: generous against a busy machine, and far below the 300 s the
// statements would run for by themselves.
const stopDeadline = time.Minute

// wantAlive checks the server answers c.
func wantAlive(t *testing.T, ctx context.Context, c *pgx.Conn, after string) {
	t.Helper()
	var n int
	if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("after %s: SELECT 41 + 1 gave %d, %v", after, n, err)
	}
}

// TestDeepNestingRefused: statements nested deeply enough to overflow the C
// parser's stack (the 40 000-term `SELECT 1+1+…` killed the server with
// SIGSEGV) are refused with 54001, and the server answers the next query on
// the same connection and on others. Large statements whose trees are
// shallow are not refused.
func TestDeepNestingRefused(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA deep", "CREATE TABLE deep.t (id bigint PRIMARY KEY, v text)",
		"INSERT INTO deep.t VALUES (1, 'a')")
	deep := map[string]string{
		"plus":       "SELECT 1" + strings.Repeat("+1", 40000),
		"parens":     "SELECT " + strings.Repeat("(", 40000) + "1" + strings.Repeat(")", 40000),
		"concat":     "SELECT 'a'" + strings.Repeat("||'a'", 40000),
		"subqueries": "SELECT " + strings.Repeat("(SELECT ", 5000) + "1" + strings.Repeat(")", 5000),
		"case":       "SELECT " + strings.Repeat("CASE WHEN true THEN ", 5000) + "1" + strings.Repeat(" END", 5000),
		"arrays":     "SELECT " + strings.Repeat("ARRAY[", 5000) + "1" + strings.Repeat("]", 5000),
		"lake":       "SELECT id" + strings.Repeat("+1", 40000) + " FROM deep.t",
		// DuckDB plans nested subqueries in time doubling per level, deaf
		// to cancels: 40 levels would have run for days.
		"lake subqueries": "SELECT " + strings.Repeat("(SELECT ", 40) + "id FROM deep.t" + strings.Repeat(")", 40),
		"lake exists":     "SELECT 1 FROM deep.t WHERE " + strings.Repeat("EXISTS (SELECT 1 FROM deep.t WHERE ", 40) + "true" + strings.Repeat(")", 40),
		"insert":          "INSERT INTO deep.t VALUES (2, 'a'" + strings.Repeat("||'a'", 40000) + ")",
		"snapshot":        "SELECT * FROM lakesoul.snapshot('" + strings.Repeat("(", 20000) + "', version => 1)",
	}
	for name, q := range deep {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			_, err := c.Exec(ctx, q, mode)
			var pe *pgconn.PgError
			if name == "snapshot" {
				// A table name that is no name: refused as one.
				if pgCode(err) != "22023" {
					t.Errorf("%s: %v, want 22023", name, err)
				}
			} else if !errors.As(err, &pe) || pe.Code != "54001" {
				t.Errorf("%s (%v): %v, want 54001", name, mode, err)
			}
			wantAlive(t, ctx, c, name)
		}
	}
	// Just under the server's own bound the statement reaches DuckDB (over a
	// lake table) or the catalog PostgreSQL (no lake table): each answers,
	// with a result or an error of its own, and nothing crashes.
	for name, q := range map[string]string{
		"duckdb":             "SELECT id" + strings.Repeat("+1", 900) + " FROM deep.t",
		"catalog":            "SELECT 1" + strings.Repeat("+1", 900),
		"duckdb subqueries":  "SELECT " + strings.Repeat("(SELECT ", 16) + "id FROM deep.t" + strings.Repeat(")", 16),
		"catalog subqueries": "SELECT " + strings.Repeat("(SELECT ", 16) + "1" + strings.Repeat(")", 16),
	} {
		var got string
		err := c.QueryRow(ctx, q).Scan(&got)
		t.Logf("%s: %q, %v", name, got, err)
		if err != nil && pgCode(err) == "" {
			t.Errorf("%s: %v, want a result or an SQL error", name, err)
		}
		wantAlive(t, ctx, c, name)
	}
	// Large but shallow: bulk VALUES, long IN lists, AND/OR chains.
	rows := make([]string, 10000)
	for i := range rows {
		rows[i] = fmt.Sprintf("(%d, 'v%d')", i+10, i)
	}
	mustExec(t, ctx, c, "INSERT INTO deep.t VALUES "+strings.Join(rows, ", "))
	in := "SELECT count(*) FROM deep.t WHERE id IN (1" + strings.Repeat(", 10", 20000) + ")"
	and := "SELECT count(*) FROM deep.t WHERE id > 0" + strings.Repeat(" AND v <> 'x'", 5000)
	or := "SELECT count(*) FROM deep.t WHERE id = -1" + strings.Repeat(" OR id = 10", 5000)
	for q, want := range map[string]string{in: "2", and: "10001", or: "1"} {
		wantRows(t, q[:40], queryStrings(t, ctx, c, q), []string{want})
	}
	other := s.connect(t)
	wantAlive(t, ctx, other, "the deep statements, on another connection")
}

// limitsServer starts a server with small client limits for one test.
func limitsServer(t *testing.T, args ...string) *server {
	t.Helper()
	requirePG(t)
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "limits-Secret1", args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", srv.logTail(8000))
		}
		srv.stopT(t)
	})
	return srv
}

// rawStartup opens a socket, sends a startup packet for user and returns
// the socket once the server asked for SASL authentication.
func rawStartup(t *testing.T, s *server, user string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sm := &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": user, "database": database}}
	b, err := sm.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	msg, err := pgproto3.NewFrontend(c, io.Discard).Receive()
	if err != nil {
		t.Fatalf("startup: %v", err)
	}
	if _, ok := msg.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("startup: got %T, want AuthenticationSASL", msg)
	}
	return c
}

// serverErrorCode reads what the server sends on c until it closes it and
// returns the SQLSTATE of the ErrorResponse among it ("" if none).
func serverErrorCode(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(pollDeadline)) // a hang guard only
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server neither answered nor closed the connection")
	}
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if n < 4 || 1+n > len(b) {
			break
		}
		if b[0] == 'E' {
			var er pgproto3.ErrorResponse
			if er.Decode(b[5:1+n]) == nil {
				return er.Code
			}
		}
		b = b[1+n:]
	}
	return ""
}

// TestPreAuthMessagesBounded: before authentication the server buffers at
// most a small message. 25 clients announcing 64 MiB SASL responses (and
// sending 16 MiB of them) are refused with FATAL 08P01 from the header, and
// the server's peak RSS does not grow by their data; an oversized startup
// packet is refused the same way.
func TestPreAuthMessagesBounded(t *testing.T) {
	s := limitsServer(t)
	pid := s.cmd.Process.Pid
	before := peakRSS(t, pid)
	junk := make([]byte, 1<<20)
	var socks []net.Conn
	for range 25 {
		socks = append(socks, rawStartup(t, s, adminRole))
	}
	for _, c := range socks {
		go func() {
			hdr := binary.BigEndian.AppendUint32([]byte{'p'}, 64<<20+4)
			if _, err := c.Write(hdr); err != nil {
				return
			}
			for range 16 {
				if _, err := c.Write(junk); err != nil {
					return // the server closed the connection
				}
			}
		}()
	}
	for i, c := range socks {
		if code := serverErrorCode(t, c); code != "08P01" {
			t.Errorf("socket %d: got %q, want FATAL 08P01", i, code)
		}
	}
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(binary.BigEndian.AppendUint32(nil, 10001+4))
	c.Write(make([]byte, 10001))
	if code := serverErrorCode(t, c); code != "08P01" {
		t.Errorf("oversized startup packet: got %q, want FATAL 08P01", code)
	}
	after := peakRSS(t, pid)
	t.Logf("server peak RSS %d MiB before, %d MiB after", before>>20, after>>20)
	if grown := after - before; grown > 64<<20 {
		t.Errorf("server peak RSS grew by %d MiB for 25 refused 64 MiB SASL messages", grown>>20)
	}
	wantAlive(t, testCtx(t), s.connect(t), "the oversized messages")
}

// TestConnectionLimits: the session beyond --max-connections gets FATAL
// 53300, the reserved slots are only for the admin, and a slot frees when a
// session ends; a silent socket is closed after --authentication-timeout; a
// failed authentication is answered only after --auth-failure-delay.
func TestConnectionLimits(t *testing.T) {
	s := limitsServer(t, "--max-connections", "3", "--reserved-connections", "1",
		"--authentication-timeout", "5s", "--auth-failure-delay", "500ms")
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('lim_ws')",
		"SELECT lakesoul.create_user('lim_u', 'lim-pw', 'lim_ws')")
	login := func(user, pw string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, s.dsn(user, pw, database))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	u1, err := login("lim_u", "lim-pw")
	if err != nil {
		t.Fatal(err)
	}
	// Slots: admin, u1; the third is reserved.
	_, err = login("lim_u", "lim-pw")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || !strings.Contains(pe.Message, "reserved") {
		t.Fatalf("user taking the reserved slot: %v, want FATAL 53300", err)
	}
	if _, err := login(adminRole, "limits-Secret1"); err != nil {
		t.Fatalf("admin in the reserved slot: %v", err)
	}
	_, err = login(adminRole, "limits-Secret1")
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != "sorry, too many clients already" {
		t.Fatalf("fourth session: %v, want FATAL 53300", err)
	}
	u1.Close(ctx)
	admin.Close(ctx)
	poll(t, "a session after two ended", func() bool {
		c, err := login("lim_u", "lim-pw")
		if err == nil {
			c.Close(ctx)
			return true
		}
		if pgCode(err) != "53300" {
			t.Fatalf("session after two ended: %v", err)
		}
		return false
	})

	silent, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	serverErrorCode(t, silent) // returns once the server closed it
	stalled := rawStartup(t, s, "lim_u")
	serverErrorCode(t, stalled)

	start := time.Now()
	if _, err := login("lim_u", "wrong"); pgCode(err) != "28P01" {
		t.Fatalf("wrong password: %v, want 28P01", err)
	}
	if elapsed := time.Since(start); elapsed < 500*time.Millisecond {
		t.Errorf("failed authentication answered after %v, before --auth-failure-delay", elapsed)
	}
}

// activeQueries counts the catalog backends running a statement containing
// text (other than the one asking).
func activeQueries(t *testing.T, ctx context.Context, cat *pgx.Conn, text string) int {
	t.Helper()
	var n int
	err := cat.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE state = 'active' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0`, text).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// logged reports whether the server's log has a line with every one of
// parts.
func (s *server) logged(parts ...string) bool {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestDisconnectEndsStatement: a client that goes away while its statement
// runs in DuckDB (a long join) or while it sends COPY data ends the
// statement: the server finishes the connection, which it does only once
// the statement returned, and the COPY commits nothing.
func TestDisconnectEndsStatement(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	ctx := testCtx(t)
	setup := s.connect(t)
	mustExec(t, ctx, setup, "CREATE SCHEMA disc", "CREATE TABLE disc.big (i int)",
		"INSERT INTO disc.big SELECT i FROM generate_series(1, 3000) AS s(i)", "CREATE TABLE disc.copied (i int)")

	c := s.connect(t)
	pid := c.PgConn().PID()
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "SELECT count(*) FROM disc.big a, disc.big b, disc.big c WHERE a.i + b.i + c.i = -1")
		done <- err
	}()
	time.Sleep(time.Second) // let it start; a disconnect before would prove less
	c.PgConn().Conn().Close()
	<-done
	pollWithin(t, "the DuckDB query ended after the client went away", stopDeadline, func() bool {
		return s.logged("client connection lost", fmt.Sprintf("pid=%d", pid))
	})

	c = s.connect(t)
	pid = c.PgConn().PID()
	pr, pw := io.Pipe()
	go func() {
		_, err := c.PgConn().CopyFrom(context.Background(), pr, "COPY disc.copied FROM STDIN")
		done <- err
	}()
	fmt.Fprintf(pw, "1\n2\n3\n")
	time.Sleep(500 * time.Millisecond)
	c.PgConn().Conn().Close()
	pw.Close()
	<-done
	pollWithin(t, "the COPY ended after the client went away", stopDeadline, func() bool {
		return s.logged("client connection lost", fmt.Sprintf("pid=%d", pid))
	})
	wantRows(t, "rows of the abandoned COPY", queryStrings(t, ctx, setup, "SELECT count(*) FROM disc.copied"), []string{"0"})
}

// TestCatalogStatementStops: a statement running on the catalog PostgreSQL
// (pg_sleep) stops when its client goes away and when the client sends a
// CancelRequest (57014): the catalog's backend stops running it. pgwire
// cancels the statement's context in both cases; the catalog connection
// must pass that on to PostgreSQL.
func TestCatalogStatementStops(t *testing.T) {
	t.Parallel()
	// A server of its own: a statement that does not stop would hold up
	// the shared server's shutdown.
	s := limitsServer(t)
	ctx := testCtx(t)
	cat := s.catalogConn(t)

	c := s.connect(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "SELECT pg_sleep(300.5)")
		done <- err
	}()
	poll(t, "pg_sleep running", func() bool { return activeQueries(t, ctx, cat, "pg_sleep(300.5)") == 1 })
	c.PgConn().Conn().Close()
	<-done
	pollWithin(t, "pg_sleep ended after the client went away", stopDeadline, func() bool { return activeQueries(t, ctx, cat, "pg_sleep(300.5)") == 0 })

	c = s.connect(t)
	go func() {
		_, err := c.Exec(context.Background(), "SELECT pg_sleep(301.5)")
		done <- err
	}()
	poll(t, "pg_sleep running", func() bool { return activeQueries(t, ctx, cat, "pg_sleep(301.5)") == 1 })
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	pollWithin(t, "pg_sleep ended after CancelRequest", stopDeadline, func() bool { return activeQueries(t, ctx, cat, "pg_sleep(301.5)") == 0 })
	if err := <-done; pgCode(err) != "57014" {
		t.Errorf("cancelled pg_sleep: %v, want 57014", err)
	}
	wantAlive(t, ctx, c, "the CancelRequest")
}

// TestRowAndMessageLimits: a COPY row beyond --max-row-size gives 54000
// and commits nothing; so do a result row beyond it and a query beyond
// --max-message-size, and the connection goes on after each.
func TestRowAndMessageLimits(t *testing.T) {
	s := limitsServer(t, "--max-row-size", "1MiB", "--max-message-size", "4MiB")
	ctx := testCtx(t)
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA rowlim", "CREATE TABLE rowlim.t (id bigint PRIMARY KEY, v text)")
	big := strings.Repeat("x", 3<<20)
	for _, data := range []string{
		"1\tsmall\n2\t" + big + "\n3\tsmall\n",
		"1,\"" + strings.Repeat(big[:1000]+"\n", 3000) + "\"\n",
	} {
		format := "text"
		if strings.HasPrefix(data, "1,") {
			format = "csv"
		}
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), "COPY rowlim.t FROM STDIN WITH (FORMAT "+format+")")
		if pgCode(err) != "54000" {
			t.Errorf("COPY (%s) with a 3 MiB row: %v, want 54000", format, err)
		}
		wantRows(t, "rows after the failed COPY", queryStrings(t, ctx, c, "SELECT count(*) FROM rowlim.t"), []string{"0"})
	}
	for _, q := range []string{"SELECT repeat('x', 2000000)", "SELECT id, repeat(v, 2000000) FROM rowlim.t"} {
		mustExec(t, ctx, c, "INSERT INTO rowlim.t VALUES (1, 'x')")
		if _, err := c.Exec(ctx, q); pgCode(err) != "54000" {
			t.Errorf("%s: %v, want 54000", q, err)
		}
		wantAlive(t, ctx, c, q)
	}
	_, err := c.Exec(ctx, "SELECT 1 -- "+strings.Repeat("y", 5<<20), pgx.QueryExecModeSimpleProtocol)
	if pgCode(err) != "54000" {
		t.Errorf("a 5 MiB query: %v, want 54000", err)
	}
	wantAlive(t, ctx, c, "the 5 MiB query")
}

// TestSessionFacts: is_superuser tells the truth about the session's role
// (and a client's startup parameter cannot change it); the private
// PostgreSQL's processes do not inherit the server's secrets; COPY options
// PostgreSQL refuses as conflicting give 22023.
func TestSessionFacts(t *testing.T) {
	dir := testBaseDir(t)
	requirePG(t)
	// The password is in the server's environment, as the issue reproduced
	// it (the flag repeats it only for the tests' own connections).
	s, err := startServerEnv(filepath.Join(dir, "data"), "env-Secret-123", []string{
		"LAKESOUL_ADMIN_PASSWORD=env-Secret-123", "AWS_SECRET_ACCESS_KEY=aws-secret-456", "AWS_ACCESS_KEY_ID=aws-id-789"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stopT(t) })
	ctx := testCtx(t)
	admin := s.connect(t)
	if v := admin.PgConn().ParameterStatus("is_superuser"); v != "on" {
		t.Errorf("admin: is_superuser = %q, want on", v)
	}
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('facts_ws')",
		"SELECT lakesoul.create_user('facts_u', 'facts-pw', 'facts_ws', admin => true)")
	cfg, err := pgx.ParseConfig(s.dsn("facts_u", "facts-pw", database))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["is_superuser"] = "on"
	u, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close(ctx)
	if v := u.PgConn().ParameterStatus("is_superuser"); v != "off" {
		t.Errorf("workspace user: is_superuser = %q, want off", v)
	}
	wantRows(t, "SHOW is_superuser", queryStrings(t, ctx, u, "SHOW is_superuser"), []string{"off"})

	pids := postgresProcessesIn(s.pgDir())
	if len(pids) == 0 {
		t.Fatal("no postgres processes found")
	}
	for _, pid := range pids {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"env-Secret-123", "aws-secret-456", "aws-id-789", "LAKESOUL_"} {
			if bytes.Contains(env, []byte(secret)) {
				t.Errorf("postgres process %d has %q in its environment", pid, secret)
			}
		}
	}

	mustExec(t, ctx, admin, "CREATE SCHEMA copyopt", "CREATE TABLE copyopt.t (a text, b text)")
	for _, opts := range []string{
		"FORMAT csv, DELIMITER ',', QUOTE ','",
		"FORMAT csv, DELIMITER '|', QUOTE '|'",
		"FORMAT csv, NULL 'a,b'",
		"FORMAT text, NULL 'x\tx'",
		"FORMAT csv, NULL '\"'",
		"FORMAT text, DELIMITER '\\'",
		"FORMAT text, DELIMITER 'a'",
		"FORMAT text, DELIMITER '.'",
		"FORMAT csv, DELIMITER E'\\n'",
		"FORMAT csv, DELIMITER E'\\r'",
		"FORMAT text, NULL E'\\n'",
	} {
		_, err := admin.PgConn().CopyFrom(ctx, strings.NewReader("x\n"), "COPY copyopt.t FROM STDIN WITH ("+opts+")")
		if pgCode(err) != "22023" {
			t.Errorf("COPY WITH (%s): %v, want 22023", opts, err)
		}
	}
	if _, err := admin.PgConn().CopyFrom(ctx, strings.NewReader("x\n"), "COPY copyopt.t FROM STDIN WITH (FORMAT csv, FORMAT text)"); pgCode(err) != "42601" {
		t.Errorf("a repeated COPY option: %v, want 42601", err)
	}
	if _, err := admin.PgConn().CopyFrom(ctx, strings.NewReader("1\\2\n"), "COPY copyopt.t FROM STDIN WITH (FORMAT csv, DELIMITER '\\')"); err != nil {
		t.Errorf("CSV with a backslash delimiter: %v", err)
	}
}
