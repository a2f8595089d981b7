package compaction_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/metrics"
)

// A compaction commits through the catalog's commit path: when the catalog
// connection dies while the commit is in flight (here its backend is
// terminated, 57P01, while the commit waits at COMMIT), the commit is re-sent
// as every commit is, lands once, and is counted in the commit metrics — one
// committed commit and its re-send — as every commit is.
func TestCompactionCommitTakesTheCatalogsCommitPath(t *testing.T) {
	ctx := context.Background()
	e, tbl, before, admin := commitPathTable(t, "cp")
	if err := pgtest.InstallCommitFaults(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if err := pgtest.ArmCommitFault(ctx, admin, tbl.ID, "sleep"); err != nil {
		t.Fatal(err)
	}
	// Once the compaction's commit sleeps at COMMIT: disarm, and cut it.
	killed := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var pid int32
			err := admin.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
				WHERE query LIKE '%lakesoul.compaction_commit(%' AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`).Scan(&pid)
			if err == pgx.ErrNoRows {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if err == nil {
				if err = pgtest.ArmCommitFault(ctx, admin, tbl.ID, ""); err == nil {
					_, err = admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
				}
			}
			killed <- err
			return
		}
		killed <- context.DeadlineExceeded
	}()

	committed, retries := metrics.Commits(metrics.Committed), metrics.CommitRetries()
	res, err := compaction.CompactPartition(ctx, e.cat, e.store, tbl, "-5", compaction.Options{})
	if kerr := <-killed; kerr != nil {
		t.Fatalf("cutting the commit's connection: %v", kerr)
	}
	if err != nil {
		t.Fatalf("compaction whose commit connection was cut: %v", err)
	}
	if res.Status != compaction.Compacted {
		t.Fatalf("result %+v", res)
	}
	if got := metrics.Commits(metrics.Committed) - committed; got != 1 {
		t.Errorf("committed commits counted: %v, want 1 (the compaction's)", got)
	}
	if got := metrics.CommitRetries() - retries; got < 1 {
		t.Errorf("commit re-sends counted: %v, want at least 1", got)
	}
	expectCompacted(t, e, tbl, before, res)
}

// commitPathTable is an unpartitioned table with three commits of two rows,
// its rows and a connection of the catalog's superuser.
func commitPathTable(t *testing.T, name string) (*env, *catalog.Table, []string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t)
	tbl := e.table(name, cols, false, 1, nil)
	for i := 0; i < 3; i++ {
		e.upsert(tbl, []any{i, "v", i, "x"}, []any{i + 10, "w", i, "y"})
	}
	before := e.read(tbl)
	admin, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	return e, tbl, before, admin
}

// expectCompacted checks that res is tbl's compaction into one version
// holding its rows as they were (before).
func expectCompacted(t *testing.T, e *env, tbl *catalog.Table, before []string, res compaction.Result) {
	t.Helper()
	if res.Status != compaction.Compacted {
		t.Fatalf("result %+v", res)
	}
	expectSame(t, "rows after the compaction", e.read(tbl), before)
	pf, err := e.cat.LiveFiles(context.Background(), tbl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf) != 1 || pf[0].Version != res.Version {
		t.Fatalf("partitions %+v, compaction result %+v", pf, res)
	}
}

// A compaction commit's re-send that finds the claim gone (LSC01) looks the
// commit up again before calling the claim lost: the first send, whose
// answer the connection lost, may commit while the re-send waits for the job
// row that send holds. Here the first send's COMMIT waits on an advisory
// lock; the client side of its connection is cut (the backend lives on);
// once the re-send waits for the job row, the lock is released, the first
// send commits and the re-send finds the claim gone. The compaction must
// report its commit and keep its files (fails without: ErrClaimLost, and the
// committed version's files deleted).
func TestCompactionResendAfterFirstSendLanded(t *testing.T) {
	ctx := context.Background()
	e, tbl, before, admin := commitPathTable(t, "rs")
	const lock = 4242
	if _, err := admin.Exec(ctx, `CREATE FUNCTION public.commit_wait() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `CREATE CONSTRAINT TRIGGER commit_wait AFTER INSERT ON public.data_commit_info
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.commit_wait()`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	px := newCutProxy(t, e.dsn)
	pcat, err := catalog.Open(ctx, px.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pcat.Close()

	waiting := func(cond string) error {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var n int
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE query LIKE '%lakesoul.compaction_commit(%' AND pid <> pg_backend_pid() AND `+cond).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
		}
		return fmt.Errorf("%s: %w", cond, context.DeadlineExceeded)
	}
	done := make(chan error, 1)
	go func() {
		// The first send waits at COMMIT: cut its client side.
		if err := waiting("wait_event = 'advisory'"); err != nil {
			done <- err
			return
		}
		px.cut()
		// The re-send waits for the job row: let the first send commit.
		err := waiting("wait_event_type = 'Lock' AND wait_event <> 'advisory'")
		if _, uerr := admin.Exec(ctx, "SELECT pg_advisory_unlock($1)", lock); err == nil {
			err = uerr
		}
		done <- err
	}()
	res, err := compaction.CompactPartition(ctx, pcat, e.store, tbl, "-5", compaction.Options{})
	if derr := <-done; derr != nil {
		t.Fatalf("staging the re-send: %v", derr)
	}
	if err != nil {
		t.Fatalf("compaction whose first send committed while its re-send waited: %v", err)
	}
	expectCompacted(t, e, tbl, before, res)
}

// cutProxy forwards TCP connections to a PostgreSQL server; cut closes the
// client side of every connection open now and leaves the server side
// open, so that their backends go on as if the client were only slow.
type cutProxy struct {
	dsn     string
	mu      sync.Mutex
	clients []net.Conn
}

func newCutProxy(t *testing.T, dsn string) *cutProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var upstreams []net.Conn
	var umu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		umu.Lock()
		for _, u := range upstreams {
			u.Close()
		}
		umu.Unlock()
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p := &cutProxy{}
	if u, perr := url.Parse(dsn); perr == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("host", host)
		q.Set("port", port)
		u.RawQuery = q.Encode()
		p.dsn = u.String()
	} else {
		p.dsn = dsn + " host=" + host + " port=" + port
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// pgconn answers a broken connection with a cancel request
			// (asyncClose): dropped here, as a network that lost the path
			// to the server would, so that the backend goes on.
			var head [8]byte
			if _, err := io.ReadFull(c, head[:]); err != nil || binary.BigEndian.Uint32(head[4:]) == 80877102 {
				c.Close()
				continue
			}
			u, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			if _, err := u.Write(head[:]); err != nil {
				c.Close()
				continue
			}
			umu.Lock()
			upstreams = append(upstreams, u)
			umu.Unlock()
			p.mu.Lock()
			p.clients = append(p.clients, c)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c) }() // the server side stays open when c ends
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.clients {
		c.Close()
	}
	p.clients = nil
}
