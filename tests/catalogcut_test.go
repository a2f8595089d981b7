package tests

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// Catalog loss at every catalog call (issue 37, item 4). The server reaches
// its catalog through cutProxy, which counts the requests every catalog
// connection sends (a simple Query, or an extended-protocol batch ended by
// Sync: one round trip each) and, when armed with N, cuts the connection
// that carries the N-th request — before forwarding it (the catalog never
// sees it) or right after (the catalog runs it, its answer is lost). A
// workload that touches every kind of catalog work (login, DDL, write
// intents, commits, snapshots, read-modify-write, explicit transactions,
// COPY, pg_catalog queries, time travel) runs once per N, for N = 1, 2, …
// until a run finishes before its N-th request: so every catalog round trip
// the workload makes is cut once, in both modes, whatever code path sends
// it. Every statement either succeeds or fails with a connection SQLSTATE —
// never XX000 — and its message shows nothing of the catalog's address.

// cutProxy forwards TCP connections to a PostgreSQL socket and cuts the
// connection carrying the armed request.
type cutProxy struct {
	ln     net.Listener
	target string // unix socket path

	mu     sync.Mutex
	count  int                   // requests since arm
	at     int                   // cut at this request (0 = never)
	match  func(sql string) bool // or cut the first request it matches
	after  bool                  // forward the request, then cut
	goDown bool                  // at the cut, cut every connection and refuse new ones
	down   bool                  // refusing connections
	conns  map[net.Conn]bool     // open connections, both sides
	cut    int                   // cuts done since arm
	what   string                // the request cut (its SQL, when the batch has it)
}

func newCutProxy(t *testing.T, socket string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: socket, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// arm resets the request count and cuts at request n (0: never).
func (p *cutProxy) arm(n int, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count, p.at, p.match, p.after, p.goDown, p.cut = 0, n, nil, after, false, 0
}

// armDown cuts the first request match accepts, then every connection, and
// refuses new ones until up: the catalog is gone.
func (p *cutProxy) armDown(match func(string) bool, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count, p.at, p.match, p.after, p.goDown, p.cut = 0, 0, match, after, true, 0
}

// armDownAt is armDown cutting request n.
func (p *cutProxy) armDownAt(n int, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count, p.at, p.match, p.after, p.goDown, p.cut = 0, n, nil, after, true, 0
}

// up accepts connections again.
func (p *cutProxy) up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.at, p.match, p.goDown, p.cut, p.what = false, 0, nil, false, 0, ""
}

// track records c as open (false: already down, c closed).
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cutProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	c.Close()
}

// goneLocked cuts every connection but keep and refuses new ones.
func (p *cutProxy) goneLocked(keep net.Conn) {
	p.down = true
	for c := range p.conns {
		if c != keep {
			c.Close()
		}
	}
}

// fired reports whether the armed cut happened, and the request it cut.
func (p *cutProxy) fired() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut > 0, p.what
}

// requestText is the SQL of a batch's Query, Parse or Bind message (names
// maps the connection's prepared statements to their SQL, learnt from its
// Parse messages), or its message types when it has none.
func requestText(batch []byte, names map[string]string) string {
	var types []byte
	text := ""
	for len(batch) >= 5 {
		typ, size := batch[0], int(binary.BigEndian.Uint32(batch[1:5]))
		fields := strings.Split(string(batch[5:1+size]), "\x00")
		switch {
		case typ == 'Q' && text == "":
			text = fields[0]
		case typ == 'P' && len(fields) > 1:
			names[fields[0]] = fields[1]
			if text == "" {
				text = fields[1]
			}
		case typ == 'B' && len(fields) > 1 && text == "":
			text = names[fields[1]]
		}
		types = append(types, typ)
		batch = batch[1+size:]
	}
	if text == "" {
		return "batch " + string(types)
	}
	return text
}

func (p *cutProxy) serve(client net.Conn) {
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := net.Dial("unix", p.target)
	if err != nil || !p.track(server) {
		return
	}
	defer p.untrack(server)
	// The catalog's messages go to the client until a cut drops them;
	// answered then learns of the answer to the cut request (ReadyForQuery).
	var dropped atomic.Bool
	answered := make(chan struct{})
	go func() {
		defer client.Close()
		var h [5]byte
		for {
			if _, err := io.ReadFull(server, h[:]); err != nil {
				return
			}
			msg := make([]byte, 1+int(binary.BigEndian.Uint32(h[1:])))
			copy(msg, h[:])
			if _, err := io.ReadFull(server, msg[5:]); err != nil {
				return
			}
			if dropped.Load() {
				if h[0] == 'Z' {
					close(answered)
					return
				}
				continue
			}
			if _, err := client.Write(msg); err != nil {
				return
			}
		}
	}()
	// The startup packet (or a cancel request) has no type byte.
	var head [4]byte
	if _, err := io.ReadFull(client, head[:]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if n < 8 || n > 1<<16 {
		return
	}
	startup := make([]byte, n)
	copy(startup, head[:])
	if _, err := io.ReadFull(client, startup[4:]); err != nil {
		return
	}
	if _, err := server.Write(startup); err != nil {
		return
	}
	// Typed messages: held until a request (Q or S) completes the batch,
	// which is then forwarded or cut.
	var batch []byte
	names := map[string]string{}
	for {
		var h [5]byte
		if _, err := io.ReadFull(client, h[:]); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(h[1:]))
		if size < 4 {
			return
		}
		msg := make([]byte, 1+size)
		copy(msg, h[:])
		if _, err := io.ReadFull(client, msg[5:]); err != nil {
			return
		}
		batch = append(batch, msg...)
		if h[0] != 'Q' && h[0] != 'S' {
			continue
		}
		what := requestText(batch, names)
		p.mu.Lock()
		p.count++
		cut := p.at > 0 && p.count == p.at || p.match != nil && p.cut == 0 && p.match(what)
		after, goDown := p.after, p.goDown
		if cut {
			p.cut++
			p.what = what
			if goDown {
				p.goneLocked(server) // (the catalog still gets an "after" request)
			}
		}
		p.mu.Unlock()
		if cut && !after {
			return // the catalog never sees the request
		}
		if _, err := server.Write(batch); err != nil {
			return
		}
		batch = batch[:0]
		if cut {
			// The catalog runs the request; its answer is lost.
			dropped.Store(true)
			client.Close()
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
			}
			return
		}
	}
}

// connectionCodes are the SQLSTATEs a statement may fail with when the
// catalog connection it used broke: PostgreSQL's connection exceptions and
// shutdown codes.
var connectionCodes = map[string]bool{"08006": true, "08007": true, "57P01": true, "57P03": true}

// startCutServer starts a server whose catalog (a throwaway cluster) it
// reaches through a cutProxy.
func startCutServer(t *testing.T, ctx context.Context, extraArgs ...string) (*server, *cutProxy, *pgconn.Config) {
	t.Helper()
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(ctx, "cut"); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgconn.ParseConfig(cluster.ConnString("cut"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port)))
	_, port, _ := net.SplitHostPort(proxy.ln.Addr().String())
	url := fmt.Sprintf("host=127.0.0.1 port=%s user=%s dbname=cut sslmode=disable", port, cfg.User)
	args := append([]string{"--catalog-url", url, "--compaction-workers", "0"}, extraArgs...)
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "cut-Secret1", args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.cmd.Process.Signal(os.Interrupt)
		<-srv.exited
	})
	return srv, proxy, cfg
}

func TestCatalogCutAtEveryCall(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	srv, proxy, cfg := startCutServer(t, ctx)
	_, port, _ := net.SplitHostPort(proxy.ln.Addr().String())
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}

	// run runs the workload in schema ns and returns the first error and
	// the step it failed at.
	run := func(ns string) (string, error) {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		c, err := pgx.Connect(sctx, srv.dsn(adminRole, pw, database))
		if err != nil {
			return "login", err
		}
		defer c.Close(context.Background())
		steps := []string{
			"CREATE SCHEMA " + ns,
			"CREATE TABLE " + ns + ".t (id int PRIMARY KEY, v text) WITH (hash_bucket_num = 2)",
			"CREATE TABLE " + ns + ".a (x int, y text)",
			"INSERT INTO " + ns + ".t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
			"INSERT INTO " + ns + ".a VALUES (1, 'a')",
			"COPY",
			"SELECT * FROM " + ns + ".t ORDER BY id",
			"SELECT count(*), sum(x) FROM " + ns + ".a",
			"UPDATE " + ns + ".t SET v = 'u' WHERE id = 1",
			"DELETE FROM " + ns + ".a WHERE x = 1",
			"INSERT INTO " + ns + ".t VALUES (2, 'B') ON CONFLICT (id) DO UPDATE SET v = excluded.v",
			"BEGIN",
			"INSERT INTO " + ns + ".t VALUES (4, 'd')",
			"UPDATE " + ns + ".a SET y = 'z' WHERE x = 2",
			"COMMIT",
			"SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '" + ns + "'",
			"SELECT count(*) FROM lakesoul.history('" + ns + ".t')",
			"ALTER TABLE " + ns + ".a ADD COLUMN z int",
			"TRUNCATE " + ns + ".a",
			"DROP TABLE " + ns + ".a",
		}
		for _, q := range steps {
			var err error
			if q == "COPY" {
				_, err = c.CopyFrom(sctx, pgx.Identifier{ns, "a"}, []string{"x", "y"},
					pgx.CopyFromRows([][]any{{2, "b"}, {3, "c"}}))
			} else {
				_, err = c.Exec(sctx, q)
			}
			if err != nil {
				return q, err
			}
		}
		// The session's view is whole: what it committed is there.
		var n int
		if err := c.QueryRow(sctx, "SELECT count(*) FROM "+ns+".t").Scan(&n); err != nil {
			return "final read", err
		}
		if n != 4 {
			return "final read", fmt.Errorf("%s.t has %d rows, want 4", ns, n)
		}
		return "", nil
	}

	proxy.arm(0, false)
	if step, err := run("cut_dry"); err != nil {
		t.Fatalf("the workload without cuts: %s: %v", step, err)
	}
	// check checks the outcome of a run whose catalog connection was cut.
	check := func(n int, after bool, what, step string, err error) {
		t.Helper()
		t.Logf("cut at %d (after=%t) %.100q: %s: %v", n, after, what, step, err)
		if err == nil {
			return // the server re-sent the call (a commit) or did not need its answer
		}
		code := pgCode(err)
		if !connectionCodes[code] {
			t.Errorf("cut at catalog request %d (after=%t) %q: %s: %v (SQLSTATE %s), want a connection failure", n, after, what, step, err, code)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			text := pe.Message + pe.Detail + pe.Hint
			for _, secret := range []string{"127.0.0.1", port, "user=", cfg.Host} {
				if strings.Contains(text, secret) {
					t.Errorf("cut at catalog request %d: %s: the message %q shows %q", n, step, text, secret)
				}
			}
		}
	}
	cuts := 0
	for _, after := range []bool{false, true} {
		for n := 1; ; n++ {
			var step, what string
			var err error
			var fired bool
			for attempt := 0; ; attempt++ {
				proxy.arm(n, after)
				step, err = run(fmt.Sprintf("cut_%d_%t_%d", n, after, attempt))
				fired, what = proxy.fired()
				proxy.arm(0, false)
				if fired || err == nil || attempt == 2 {
					break
				}
				// A connection an earlier cut closed after its answer
				// got through went back to the pool and failed this
				// run first (as idle connections do when a catalog
				// restarts): classified the same; run again.
				check(n, after, "a connection cut earlier", step, err)
			}
			if !fired {
				if err != nil {
					t.Errorf("no cut at %d (after=%t), yet %s: %v\n%s", n, after, step, err, srv.logTail(6000))
				}
				break
			}
			cuts++
			check(n, after, what, step, err)
		}
	}
	t.Logf("cut %d catalog requests", cuts)
	if cuts < 20 {
		t.Errorf("only %d catalog requests were cut", cuts)
	}
	// The server is whole after all of it.
	c := srv.connect(t)
	var one int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM cut_dry.t").Scan(&one); err != nil || one != 4 {
		t.Errorf("after the cuts: %d rows, %v", one, err)
	}
}

// TestCommitOutcomeUnknownIs08007: the catalog goes away (every connection
// cut, new ones refused for longer than --commit-retry-window) at each
// catalog request of a statement that commits — a statement's own commit, a
// transaction block's (lakesoul.commit_many) and a block holding a catalog
// transaction (its COMMIT) — before the catalog got the request and after.
// The client gets success (the row is there), 08006 (nothing was committed:
// the row is not there), or 08007 naming the table and its commit id, which
// lakesoul.history lists once the catalog is back exactly when the row is
// there.
func TestCommitOutcomeUnknownIs08007(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	srv, proxy, _ := startCutServer(t, ctx, "--commit-retry-window", "1s")
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA ou", "CREATE TABLE ou.t (id int PRIMARY KEY, v text)", "CREATE TABLE ou.u (id int)",
		"INSERT INTO ou.t VALUES (0, 'a')")
	var tableID string
	if err := c.QueryRow(ctx, "SELECT table_id FROM lakesoul.tables WHERE table_schema = 'ou' AND table_name = 't'").Scan(&tableID); err != nil {
		t.Fatal(err)
	}
	commitID := regexp.MustCompile(`table ` + tableID + `: commit id ([0-9a-f-]{36})`)
	id := 0
	unknown := map[string]int{} // 08007s per case
	landedUnknown := 0          // of which landed
	for _, c0 := range []struct {
		name string
		sql  []string // the last statement's requests are cut
	}{
		{"statement", []string{"INSERT INTO ou.t VALUES ($1, 'x')"}},
		{"block", []string{"BEGIN", "INSERT INTO ou.t VALUES ($1, 'x')", "INSERT INTO ou.u VALUES ($1)", "COMMIT"}},
		{"held", []string{"BEGIN", "CREATE TABLE ou.h$1 (x int)", "INSERT INTO ou.t VALUES ($1, 'x')", "COMMIT"}},
	} {
		for _, after := range []bool{true, false} {
			for n := 1; ; n++ {
				id++
				var err error
				for i, q := range c0.sql {
					if i == len(c0.sql)-1 {
						proxy.armDownAt(n, after)
					}
					if _, err = c.Exec(ctx, strings.ReplaceAll(q, "$1", fmt.Sprint(id))); err != nil {
						break
					}
				}
				fired, what := proxy.fired()
				proxy.up()
				if c0.name != "statement" {
					_, _ = c.Exec(ctx, "ROLLBACK") // (a failed COMMIT ended the block already)
				}
				var listed, rows int
				uid := "00000000-0000-0000-0000-000000000000"
				var pe *pgconn.PgError
				errors.As(err, &pe)
				if pe != nil && pe.Code == "08007" {
					m := commitID.FindStringSubmatch(pe.Detail)
					if m == nil {
						t.Errorf("%s (after=%t) cut at %.60q: the detail %q names no commit id of table %s", c0.name, after, what, pe.Detail, tableID)
					} else {
						uid = m[1]
					}
				}
				t.Logf("%s (after=%t) cut at %d %.60q: %v", c0.name, after, n, what, err)
				deadline := time.Now().Add(30 * time.Second)
				for {
					qerr := c.QueryRow(ctx, "SELECT count(*) FROM lakesoul.history($1) WHERE $2::uuid = ANY (commit_ids)", tableID, uid).Scan(&listed)
					if qerr == nil {
						qerr = c.QueryRow(ctx, "SELECT count(*) FROM ou.t WHERE id = $1", id).Scan(&rows)
					}
					if qerr == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: after the catalog is back: %v\n%s", c0.name, qerr, srv.logTail(5000))
					}
					time.Sleep(100 * time.Millisecond)
				}
				if !fired {
					if err != nil || rows != 1 {
						t.Errorf("%s: no cut at %d, yet %v (%d rows)", c0.name, n, err, rows)
					}
					break
				}
				switch code := pgCode(err); {
				case err == nil:
					if rows != 1 {
						t.Errorf("%s (after=%t) cut at %.60q: success, but the row is not there", c0.name, after, what)
					}
				case code == "08006":
					if rows != 0 {
						t.Errorf("%s (after=%t) cut at %.60q: 08006 (not committed), but the row is there", c0.name, after, what)
					}
				case code == "08007":
					unknown[c0.name]++
					landedUnknown += rows
					if listed != rows {
						t.Errorf("%s (after=%t) cut at %.60q: lakesoul.history lists the commit %d times, the row is there %d times", c0.name, after, what, listed, rows)
					}
				default:
					t.Errorf("%s (after=%t) cut at %.60q: %v, want 08006 or 08007", c0.name, after, what, err)
				}
			}
		}
	}
	// The enumeration reached the commits themselves: each case had an
	// unknown outcome, and some of those landed.
	for _, name := range []string{"statement", "block", "held"} {
		if unknown[name] == 0 {
			t.Errorf("%s: no cut gave 08007", name)
		}
	}
	if landedUnknown == 0 {
		t.Error("no 08007 commit landed")
	}
}
