package tests

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
)

// flightSessionsServer serves Flight SQL with small session bounds: 8
// clients of which 1 is reserved, 2 sessions per role, clients idle for
// 3 s closed.
func flightSessionsServer(t *testing.T) (*server, string) {
	t.Helper()
	requirePG(t)
	addr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServer(filepath.Join(testBaseDir(t), "data"), "flsess-Secret1", "--flight-listen", addr,
		"--max-connections", "8", "--reserved-connections", "1", "--max-connections-per-role", "2",
		"--flight-idle-timeout", "3s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.logTail(8000))
		}
		s.stopT(t)
	})
	return s, addr
}

// openFlight logs user in over a connection of its own (closed when the
// test ends) and returns the client, its bearer context and the login's
// error.
func openFlight(t *testing.T, ctx context.Context, addr, user, pw string) (*flightsql.Client, context.Context, error) {
	t.Helper()
	cl, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	actx, err := cl.Client.AuthenticateBasicToken(ctx, user, pw)
	return cl, actx, err
}

// flightOne runs query over Flight SQL and returns its rows.
func flightOne(ctx context.Context, cl *flightsql.Client, query string) ([]string, error) {
	rows, _, err := flightRows(ctx, cl, query)
	return rows, err
}

// wantExhausted checks that err is gRPC ResourceExhausted with SQLSTATE
// 53300 and PostgreSQL's message msg.
func wantExhausted(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if grpcCodeOf(err) != codes.ResourceExhausted || !strings.Contains(fmt.Sprint(err), "SQLSTATE 53300: "+msg) {
		t.Fatalf("%s: %v, want ResourceExhausted SQLSTATE 53300: %s", what, err, msg)
	}
}

// TestFlightSessions: a Flight SQL client's session ends with its gRPC
// connection (bearer tokens too), so 120 handshakes and 20 driver
// connections (Basic credentials) that close at once lock nobody out; a role has at most
// --max-connections-per-role sessions over Flight SQL and pgwire together
// (ResourceExhausted / FATAL 53300 "too many connections for role"), while
// other roles and the admin still get in, the last slot being the admin's;
// a client unused for --flight-idle-timeout is closed and its slot freed;
// a client idle in a transaction block for its
// idle_in_transaction_session_timeout is closed and the block rolled back;
// a token's session outlives its handshake's connection while another
// connection it was used on is open.
func TestFlightSessions(t *testing.T) {
	s, addr := flightSessionsServer(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "SELECT lakesoul.create_workspace('fls_ws')")
	for _, u := range []string{"fls_a", "fls_b", "fls_c", "fls_d"} {
		// fls_b is the workspace's admin: it creates a schema.
		mustExec(t, ctx, admin, fmt.Sprintf("SELECT lakesoul.create_user('%s', 'pw-%s', 'fls_ws', admin => %t)", u, u, u == "fls_b"))
	}
	const adminPW = "flsess-Secret1"

	t.Run("handshakes", func(t *testing.T) {
		// Each handshake's connection closes at once; the server ends its
		// session when it sees the connection end, a moment later, so a
		// login refused for the role's bound is tried again for a while.
		for i := range 120 {
			deadline := time.Now().Add(10 * time.Second)
			for {
				cl, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					t.Fatal(err)
				}
				_, err = cl.Client.AuthenticateBasicToken(ctx, "fls_a", "pw-fls_a")
				cl.Close()
				if err == nil {
					break
				}
				if grpcCodeOf(err) != codes.ResourceExhausted || time.Now().After(deadline) {
					t.Fatalf("handshake %d: %v", i, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// Basic credentials on every call (the database/sql driver): one
		// client per connection, ended with it.
		for i := range 20 {
			pollWithin(t, fmt.Sprintf("driver connection %d", i), 10*time.Second, func() bool {
				db, err := sql.Open("flightsql", fmt.Sprintf("flightsql://fls_a:pw-fls_a@%s", addr))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var who string
				err = db.QueryRowContext(ctx, "SELECT current_user").Scan(&who)
				if err != nil && !strings.Contains(err.Error(), "ResourceExhausted") {
					t.Fatalf("driver connection %d: %v", i, err)
				}
				return err == nil && who == "fls_a"
			})
		}
		for _, u := range [][2]string{{"fls_b", "pw-fls_b"}, {adminRole, adminPW}, {"fls_a", "pw-fls_a"}} {
			cl, actx, err := openFlight(t, ctx, addr, u[0], u[1])
			if err != nil {
				t.Fatalf("%s after 120 closed handshakes: %v", u[0], err)
			}
			if got, err := flightOne(actx, cl, "SELECT current_user"); err != nil || len(got) != 1 || got[0] != u[0] {
				t.Fatalf("%s: %v, %v", u[0], got, err)
			}
			cl.Close()
		}
	})

	t.Run("caps", func(t *testing.T) {
		var open []*flightsql.Client
		login := func(user, pw string) error {
			cl, actx, err := openFlight(t, ctx, addr, user, pw)
			if err == nil {
				if _, err := flightOne(actx, cl, "SELECT 1"); err != nil {
					t.Fatalf("%s: %v", user, err)
				}
				open = append(open, cl)
			}
			return err
		}
		// The sessions of the handshakes above may still be ending.
		pollWithin(t, "fls_a's first session", 10*time.Second, func() bool { return login("fls_a", "pw-fls_a") == nil })
		if err := login("fls_a", "pw-fls_a"); err != nil {
			t.Fatalf("fls_a's second session: %v", err)
		}
		wantExhausted(t, "fls_a's third session", login("fls_a", "pw-fls_a"), `too many connections for role "fls_a"`)
		// Over pgwire too: the bound is the role's, whatever the door.
		_, err := pgx.Connect(ctx, s.dsn("fls_a", "pw-fls_a", database))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != `too many connections for role "fls_a"` || pe.Severity != "FATAL" {
			t.Fatalf("fls_a over pgwire: %v, want FATAL 53300 too many connections for role", err)
		}
		// Other roles and the admin get in; the eighth client is the
		// admin's alone.
		for _, u := range []string{"fls_b", "fls_b", "fls_c", "fls_c"} {
			if err := login(u, "pw-"+u); err != nil {
				t.Fatalf("%s while fls_a is at its bound: %v", u, err)
			}
		}
		if err := login(adminRole, adminPW); err != nil {
			t.Fatalf("admin: %v", err)
		}
		wantExhausted(t, "fls_d in the reserved slot", login("fls_d", "pw-fls_d"),
			"remaining connection slots are reserved for roles with the SUPERUSER attribute")
		if err := login(adminRole, adminPW); err != nil {
			t.Fatalf("admin in the reserved slot: %v", err)
		}
		wantExhausted(t, "a ninth client", login(adminRole, adminPW), "sorry, too many clients already")
		// Closing connections frees their slots (the first freed is still
		// reserved).
		open[0].Close()
		open[1].Close()
		pollWithin(t, "fls_d after two clients closed", 2*time.Second, func() bool {
			err := login("fls_d", "pw-fls_d")
			return err == nil
		})
		for _, cl := range open {
			cl.Close()
		}
	})

	t.Run("idle", func(t *testing.T) {
		// Two idle clients of fls_c, connections open: after the idle
		// timeout they are closed, their tokens expire and their slots
		// are free.
		var idle [2]struct {
			cl   *flightsql.Client
			actx context.Context
		}
		for i := range idle {
			var err error
			pollWithin(t, "fls_c logs in", 10*time.Second, func() bool {
				idle[i].cl, idle[i].actx, err = openFlight(t, ctx, addr, "fls_c", "pw-fls_c")
				return err == nil
			})
			if _, err := flightOne(idle[i].actx, idle[i].cl, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := openFlight(t, ctx, addr, "fls_c", "pw-fls_c"); grpcCodeOf(err) != codes.ResourceExhausted {
			t.Fatalf("fls_c's third client while two are open: %v", err)
		}
		time.Sleep(5 * time.Second)
		if _, err := flightOne(idle[0].actx, idle[0].cl, "SELECT 1"); grpcCodeOf(err) != codes.Unauthenticated {
			t.Fatalf("an idle client's token after the idle timeout: %v, want Unauthenticated", err)
		}
		if _, _, err := openFlight(t, ctx, addr, "fls_c", "pw-fls_c"); err != nil {
			t.Fatalf("fls_c after its idle clients were closed: %v", err)
		}
	})

	t.Run("idle in transaction", func(t *testing.T) {
		var cl *flightsql.Client
		var actx context.Context
		pollWithin(t, "fls_b logs in", 10*time.Second, func() bool {
			var err error
			cl, actx, err = openFlight(t, ctx, addr, "fls_b", "pw-fls_b")
			return err == nil
		})
		for _, q := range []string{"CREATE SCHEMA fls_s", "SET idle_in_transaction_session_timeout = '1s'"} {
			if _, err := cl.ExecuteUpdate(actx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		tx, err := cl.BeginTransaction(actx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecuteUpdate(actx, "CREATE TABLE fls_s.t (id bigint, PRIMARY KEY (id))"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // the timeout, and the registry's look each second
		if _, err := tx.ExecuteUpdate(actx, "INSERT INTO fls_s.t VALUES (1)"); grpcCodeOf(err) != codes.Unauthenticated {
			t.Fatalf("a statement after the idle-in-transaction timeout: %v, want Unauthenticated", err)
		}
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM lakesoul.tables WHERE table_schema = 'fls_s'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("the block's CREATE TABLE: %d tables, %v; want rolled back", n, err)
		}
	})

	t.Run("token on another connection", func(t *testing.T) {
		// A driver may log in on one connection and work on another (or
		// re-dial): the token's session lives while any connection it was
		// used on is open, so closing the handshake's connection in the
		// middle of a transaction on the other loses nothing.
		mustExec(t, ctx, admin, "CREATE SCHEMA fls_tok", "CREATE TABLE fls_tok.t (id bigint, v text)")
		login, actx, err := openFlight(t, ctx, addr, adminRole, adminPW)
		if err != nil {
			t.Fatal(err)
		}
		work, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer work.Close()
		tx, err := work.BeginTransaction(actx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecuteUpdate(actx, "INSERT INTO fls_tok.t VALUES (1, 'before')"); err != nil {
			t.Fatal(err)
		}
		login.Close()
		time.Sleep(time.Second) // the server sees the login connection end
		if _, err := tx.ExecuteUpdate(actx, "INSERT INTO fls_tok.t VALUES (2, 'after')"); err != nil {
			t.Fatalf("a statement after the login connection closed: %v", err)
		}
		if err := tx.Commit(actx); err != nil {
			t.Fatalf("COMMIT after the login connection closed: %v", err)
		}
		wantRows(t, "the transaction's rows", textRows(t, ctx, admin, "SELECT id, v FROM fls_tok.t ORDER BY id"),
			[]string{"1|before", "2|after"})
		// The token's last connection ends: its session too.
		work.Close()
		pollWithin(t, "the token refused after its connections closed", 10*time.Second, func() bool {
			again, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			_, err = flightOne(actx, again, "SELECT 1")
			return grpcCodeOf(err) == codes.Unauthenticated
		})
	})
}
