package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// Durability (issue 13, items 9 and 11): a catalog COMMIT that fails is an
// error for the client and leaves nothing behind — no rows, no dropped
// table, no deleted files — on every write path, for the admin (the catalog
// owner) and for a workspace user (whose catalog work runs under its own
// role); and every write path commits as the session's role. Faults are
// real: deferred constraint triggers in the server's catalog
// (pgtest.InstallCommitFaults), armed per table or namespace.

// durabilityFixture is a schema with the tables the write paths use, as
// one role.
type durabilityFixture struct {
	t     *testing.T
	ctx   context.Context
	srv   *server
	cat   *pgx.Conn // the catalog, as its superuser
	c     *pgx.Conn // the client, as role
	role  string
	ns    string
	dirs  map[string]string // table name -> local directory
	ids   map[string]string // table name -> table id
	tabls []string
}

// newDurabilityFixture creates schema ns as c's role: t (PK), a (append),
// p (PK, partitioned by d), each with some rows; a has an update in its
// history, so that cleanup has a version to remove.
func newDurabilityFixture(t *testing.T, ctx context.Context, srv *server, cat, c *pgx.Conn, role, ns string) *durabilityFixture {
	t.Helper()
	mustExec(t, ctx, c,
		"CREATE SCHEMA "+ns,
		"CREATE TABLE "+ns+".t (id int PRIMARY KEY, v text) WITH (hash_bucket_num = 2)",
		"CREATE TABLE "+ns+".a (id int, v text)",
		"CREATE TABLE "+ns+".p (id int, v text, d text, PRIMARY KEY (id)) PARTITION BY LIST (d)",
		"INSERT INTO "+ns+".t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO "+ns+".a VALUES (1, 'a'), (2, 'b')",
		"UPDATE "+ns+".a SET v = 'b2' WHERE id = 2",
		"INSERT INTO "+ns+".p VALUES (1, 'a', 'd1'), (2, 'b', 'd2')")
	f := &durabilityFixture{t: t, ctx: ctx, srv: srv, cat: cat, c: c, role: role, ns: ns,
		dirs: map[string]string{}, ids: map[string]string{}, tabls: []string{"t", "a", "p"}}
	for _, name := range f.tabls {
		var id, path string
		if err := cat.QueryRow(ctx, "SELECT table_id, table_path FROM table_info WHERE table_namespace = $1 AND table_name = $2",
			ns, name).Scan(&id, &path); err != nil {
			t.Fatalf("table %s.%s in the catalog: %v", ns, name, err)
		}
		dir, err := objstore.LocalPath(path)
		if err != nil {
			t.Fatal(err)
		}
		f.ids[name], f.dirs[name] = id, dir
	}
	return f
}

// state is everything a failed write must leave as it was: the rows of
// every table, the tables listed, and the data files on disk.
func (f *durabilityFixture) state() string {
	f.t.Helper()
	var b strings.Builder
	for _, name := range f.tabls {
		fmt.Fprintf(&b, "%s: %q\n", name, queryStrings(f.t, f.ctx, f.c, "SELECT * FROM "+f.ns+"."+name+" ORDER BY 1"))
		fmt.Fprintf(&b, "%s files: %q\n", name, filesUnder(f.t, f.dirs[name]))
	}
	fmt.Fprintf(&b, "tables: %q\n", queryStrings(f.t, f.ctx, f.c,
		"SELECT table_name FROM lakesoul.tables WHERE table_schema = $1 ORDER BY 1", f.ns))
	fmt.Fprintf(&b, "columns: %q\n", queryStrings(f.t, f.ctx, f.c,
		"SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1", f.ns))
	return b.String()
}

func (f *durabilityFixture) arm(mode string, targets ...string) {
	f.t.Helper()
	for _, target := range targets {
		if err := pgtest.ArmCommitFault(f.ctx, f.cat, target, mode); err != nil {
			f.t.Fatal(err)
		}
	}
}

// armAll arms every table of the fixture and its namespace.
func (f *durabilityFixture) armAll(mode string) {
	f.t.Helper()
	f.arm(mode, f.ns)
	for _, id := range f.ids {
		f.arm(mode, id)
	}
}

// writePaths are the statements that write, each as a function of the
// fixture's client; every one must commit in the catalog.
func (f *durabilityFixture) writePaths() []struct {
	name string
	run  func() error
} {
	ns := f.ns
	exec := func(sqls ...string) func() error {
		return func() error {
			for _, q := range sqls {
				if _, err := f.c.Exec(f.ctx, q); err != nil {
					return err
				}
			}
			return nil
		}
	}
	block := func(sqls ...string) func() error {
		return func() error {
			tx, err := f.c.Begin(f.ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(f.ctx)
			for _, q := range sqls {
				if _, err := tx.Exec(f.ctx, q); err != nil {
					return fmt.Errorf("inside the block, %s: %w", q, err)
				}
			}
			return tx.Commit(f.ctx)
		}
	}
	return []struct {
		name string
		run  func() error
	}{
		{"INSERT", exec("INSERT INTO " + ns + ".t VALUES (3, 'c')")},
		{"INSERT append", exec("INSERT INTO " + ns + ".a VALUES (3, 'c')")},
		{"INSERT ... SELECT", exec("INSERT INTO " + ns + ".a SELECT id + 10, v FROM " + ns + ".t")},
		{"UPDATE", exec("UPDATE " + ns + ".t SET v = 'z' WHERE id = 1")},
		{"UPDATE copy-on-write", exec("UPDATE " + ns + ".a SET v = 'z' WHERE id = 1")},
		{"DELETE", exec("DELETE FROM " + ns + ".a WHERE id = 1")},
		{"DELETE PK", exec("DELETE FROM " + ns + ".t WHERE id = 1")},
		{"MERGE", exec("MERGE INTO " + ns + ".t USING (VALUES (1, 'm'), (7, 'n')) s(id, v) ON t.id = s.id " +
			"WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)")},
		{"INSERT ON CONFLICT DO UPDATE", exec("INSERT INTO " + ns + ".t VALUES (1, 'u'), (8, 'w') ON CONFLICT (id) DO UPDATE SET v = excluded.v")},
		{"INSERT ON CONFLICT DO NOTHING", exec("INSERT INTO " + ns + ".t VALUES (1, 'u'), (9, 'w') ON CONFLICT DO NOTHING")},
		{"COPY binary", func() error {
			_, err := f.c.CopyFrom(f.ctx, pgx.Identifier{ns, "t"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(4), "d"}, {int32(5), "e"}}))
			return err
		}},
		{"COPY text", func() error {
			_, err := f.c.PgConn().CopyFrom(f.ctx, strings.NewReader("6\tf\n"), "COPY "+ns+".a FROM STDIN")
			return err
		}},
		{"TRUNCATE", exec("TRUNCATE " + ns + ".t")},
		{"block, one table", block("INSERT INTO "+ns+".t VALUES (10, 'x')", "INSERT INTO "+ns+".t VALUES (11, 'y')")},
		{"block, several tables", block("INSERT INTO "+ns+".t VALUES (10, 'x')", "INSERT INTO "+ns+".a VALUES (10, 'x')",
			"UPDATE "+ns+".p SET v = 'q' WHERE id = 1")},
		{"block with COPY", func() error {
			tx, err := f.c.Begin(f.ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(f.ctx)
			if _, err := tx.CopyFrom(f.ctx, pgx.Identifier{ns, "a"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(12), "c"}})); err != nil {
				return fmt.Errorf("inside the block: %w", err)
			}
			if _, err := tx.Exec(f.ctx, "DELETE FROM "+ns+".t WHERE id = 2"); err != nil {
				return fmt.Errorf("inside the block: %w", err)
			}
			return tx.Commit(f.ctx)
		}},
		{"ALTER TABLE ADD COLUMN", exec("ALTER TABLE " + ns + ".t ADD COLUMN w int")},
		{"ALTER TABLE SET", exec("ALTER TABLE " + ns + ".a SET (partition.ttl = '30')")},
		{"CREATE TABLE", exec("CREATE TABLE " + ns + ".newt (x int)")},
		{"DROP TABLE", exec("DROP TABLE " + ns + ".t")},
		{"DROP TABLE append", exec("DROP TABLE " + ns + ".a")},
		{"CALL rollback", exec("CALL lakesoul.rollback('" + ns + ".a', version => 0)")},
		{"CALL cleanup", exec("CALL lakesoul.cleanup('" + ns + ".a', now() + interval '1 hour')")},
		{"CALL drop_partition", exec("CALL lakesoul.drop_partition('" + ns + ".p', 'd=d1')")},
		{"CALL compact", exec("CALL lakesoul.compact('" + ns + ".t')")},
		{"DROP SCHEMA CASCADE", exec("DROP SCHEMA " + ns + " CASCADE")}, // last: it removes everything
	}
}

func TestFailedCommitIsAnError(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	cat := srv.catalogConn(t)
	if err := pgtest.InstallCommitFaults(ctx, cat); err != nil {
		t.Fatal(err)
	}
	for _, who := range durabilityRoles(t, ctx, srv, "durf") {
		t.Run(who.role, func(t *testing.T) {
			f := newDurabilityFixture(t, ctx, srv, cat, who.conn, who.role, who.ns)
			// One more version of t, so that compaction has work.
			mustExec(t, ctx, who.conn, "INSERT INTO "+f.ns+".t VALUES (2, 'b')")
			before := f.state()
			f.armAll("fail")
			for _, p := range f.writePaths() {
				err := p.run()
				if err == nil {
					t.Errorf("%s: a failed COMMIT was acknowledged", p.name)
				} else if code := pgCode(err); code != pgtest.FaultCode {
					t.Errorf("%s: %v (SQLSTATE %s), want the injected COMMIT failure %s", p.name, err, code, pgtest.FaultCode)
				}
				if after := f.state(); after != before {
					t.Fatalf("%s: a failed commit changed what is visible:\nbefore:\n%s\nafter:\n%s", p.name, before, after)
				}
			}
			f.armAll("")
			// The server is fine and the tables take writes again.
			mustExec(t, ctx, who.conn, "INSERT INTO "+f.ns+".t VALUES (3, 'c')", "DROP SCHEMA "+f.ns+" CASCADE")
		})
	}
}

// TestWritesCommitAsSessionRole checks the role every write path's catalog
// work runs as: the fault triggers log current_user for each metadata row a
// commit writes. COPY FROM used to commit as the catalog owner.
func TestWritesCommitAsSessionRole(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	cat := srv.catalogConn(t)
	if err := pgtest.InstallCommitFaults(ctx, cat); err != nil {
		t.Fatal(err)
	}
	roles := durabilityRoles(t, ctx, srv, "durr")
	for _, who := range roles {
		t.Run(who.role, func(t *testing.T) {
			f := newDurabilityFixture(t, ctx, srv, cat, who.conn, who.role, who.ns)
			for _, p := range f.writePaths() {
				if p.name == "CALL compact" {
					// Compaction rewrites as the server's own work (as
					// workers do); the call resolves its targets as the
					// role, so a table the role cannot see is not compacted.
					continue
				}
				mustExec(t, ctx, cat, "DELETE FROM public.commit_fault_log")
				f.armAll("log")
				err := p.run()
				f.armAll("")
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				users := queryStrings(t, ctx, cat, "SELECT DISTINCT usr FROM public.commit_fault_log ORDER BY 1")
				if !slices.Equal(users, []string{who.role}) {
					t.Errorf("%s: catalog rows written as %q, want only %q", p.name, users, who.role)
				}
				if p.name == "DROP SCHEMA CASCADE" {
					break // nothing left to write to
				}
				// Restore what a destructive path removed.
				if strings.HasPrefix(p.name, "DROP TABLE") || p.name == "TRUNCATE" || p.name == "CALL drop_partition" {
					mustExec(t, ctx, who.conn, "DROP SCHEMA "+f.ns+" CASCADE")
					f = newDurabilityFixture(t, ctx, srv, cat, who.conn, who.role, who.ns)
				}
			}
		})
	}
	// A user cannot COPY into another workspace's table: it does not exist
	// for them, and nothing is committed.
	owner, other := roles[1], workspaceUser(t, ctx, srv, roles[0].conn, "durr2")
	mustExec(t, ctx, owner.conn, "CREATE SCHEMA "+owner.ns, "CREATE TABLE "+owner.ns+".t (id int PRIMARY KEY, v text)")
	_, err := other.conn.CopyFrom(ctx, pgx.Identifier{owner.ns, "t"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(1), "x"}}))
	if pgCode(err) != "42P01" {
		t.Fatalf("COPY into another workspace's table: %v, want 42P01", err)
	}
	_, err = other.conn.PgConn().CopyFrom(ctx, strings.NewReader("1\tx\n"), "COPY "+owner.ns+".t FROM STDIN")
	if pgCode(err) != "42P01" {
		t.Fatalf("text COPY into another workspace's table: %v, want 42P01", err)
	}
	wantRows(t, "rows of the other workspace's table", queryStrings(t, ctx, owner.conn, "SELECT count(*) FROM "+owner.ns+".t"), []string{"0"})
}

type durabilityRole struct {
	role string
	conn *pgx.Conn
	ns   string
}

// durabilityRoles returns the admin and a workspace administrator (a user
// whose role differs from the catalog's login), each with a schema name.
func durabilityRoles(t *testing.T, ctx context.Context, srv *server, prefix string) []durabilityRole {
	t.Helper()
	admin := srv.connect(t)
	return []durabilityRole{{adminRole, admin, prefix + "_admin"}, workspaceUser(t, ctx, srv, admin, prefix)}
}

// workspaceUser creates workspace <prefix>_ws with an administrator
// <prefix>_user, logged in, and names a schema for it.
func workspaceUser(t *testing.T, ctx context.Context, srv *server, admin *pgx.Conn, prefix string) durabilityRole {
	t.Helper()
	ws, user := prefix+"_ws", prefix+"_user"
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('"+ws+"')",
		"SELECT lakesoul.create_user('"+user+"', 'pw-"+user+"', '"+ws+"', admin => true)")
	uc, err := pgx.Connect(ctx, srv.dsn(user, "pw-"+user, database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uc.Close(context.Background()) })
	return durabilityRole{user, uc, prefix + "_user"}
}

// TestOrphanCollectionSparesOpenWriters (item 10): the staged files of an
// open transaction block and of a COPY still running survive an orphan
// collection that takes every unknown file for old, and their commits then
// read back; a block whose write intent expired (a stalled session) loses
// its files to the collector and its COMMIT fails, leaving the table as it
// was and readable. The collector runs here directly, with the clock moved
// two days on, as the lifecycle task of a compaction worker would.
func TestOrphanCollectionSparesOpenWriters(t *testing.T) {
	requirePG(t)
	srv := startServerT(t, filepath.Join(testBaseDir(t), "data"), "orphan-Secret1")
	defer srv.stopT(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	cat := srv.catalogConn(t)
	info, _ := readPostmasterPid(srv.pgDir())
	lake, err := catalog.Open(ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", info.socketDir, info.port, adminRole, database))
	if err != nil {
		t.Fatal(err)
	}
	defer lake.Close()
	collect := func() compaction.LifecycleReport {
		t.Helper()
		rep, err := compaction.RunLifecycle(ctx, lake, objstore.Local{}, compaction.LifecycleOptions{
			OrphanGrace: time.Minute, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
		if err != nil {
			t.Fatalf("orphan collection: %v", err)
		}
		return rep
	}
	mustExec(t, ctx, c,
		"CREATE SCHEMA orph",
		"CREATE TABLE orph.t (id int PRIMARY KEY, v text) WITH (hash_bucket_num = 2)",
		"INSERT INTO orph.t VALUES (0, 'seed')")
	var path string
	if err := cat.QueryRow(ctx, "SELECT table_path FROM table_info WHERE table_namespace = 'orph' AND table_name = 't'").Scan(&path); err != nil {
		t.Fatal(err)
	}
	dir, err := objstore.LocalPath(path)
	if err != nil {
		t.Fatal(err)
	}
	count := func(conn *pgx.Conn) string {
		return strings.Join(queryStrings(t, ctx, conn, "SELECT count(*), count(DISTINCT v) FROM orph.t"), "")
	}
	// newFiles lists the table's data files and ingest runs that are not
	// in before.
	newFiles := func(before []string) []string {
		var out []string
		for _, f := range filesUnder(t, dir) {
			if (strings.HasSuffix(f, ".parquet") || layout.IsRunFile(f)) && !slices.Contains(before, f) {
				out = append(out, f)
			}
		}
		return out
	}

	t.Run("open transaction block", func(t *testing.T) {
		before := filesUnder(t, dir)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		// Large enough to be written to files at once, not buffered.
		if _, err := tx.Exec(ctx, "INSERT INTO orph.t SELECT g, 'block' FROM generate_series(1, 20000) AS s(g)"); err != nil {
			t.Fatal(err)
		}
		staged := newFiles(before)
		if len(staged) == 0 {
			t.Fatal("the block wrote no files")
		}
		collect()
		if gone := slices.DeleteFunc(slices.Clone(staged), func(f string) bool { return slices.Contains(filesUnder(t, dir), f) }); len(gone) > 0 {
			t.Fatalf("orphan collection deleted staged files of an open block: %v", gone)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("COMMIT: %v", err)
		}
		if got := count(c); got != "20001|2" {
			t.Fatalf("after COMMIT: %s", got)
		}
	})

	t.Run("COPY still running", func(t *testing.T) {
		before := filesUnder(t, dir)
		// More than one ingest batch (32 MiB) of rows, then the client waits
		// for the collector before it sends the rest.
		r, w := io.Pipe()
		defer w.CloseWithError(errors.New("the test ended"))
		done := make(chan error, 1)
		cc := srv.connect(t)
		go func() {
			_, err := cc.PgConn().CopyFrom(ctx, r, "COPY orph.t FROM STDIN")
			done <- err
		}()
		pad := strings.Repeat("x", 1000)
		go func() {
			for i := 100000; i < 140000; i++ {
				if _, err := fmt.Fprintf(w, "%d\tcopy%s\n", i, pad); err != nil {
					return
				}
			}
		}()
		var staged []string
		for deadline := time.Now().Add(3 * time.Minute); len(staged) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the COPY wrote no files")
			}
			staged = newFiles(before)
		}
		collect()
		if gone := slices.DeleteFunc(slices.Clone(staged), func(f string) bool { return slices.Contains(filesUnder(t, dir), f) }); len(gone) > 0 {
			t.Fatalf("orphan collection deleted files of a running COPY: %v", gone)
		}
		fmt.Fprintf(w, "140000\tlast\n")
		w.Close()
		if err := <-done; err != nil {
			t.Fatalf("COPY: %v", err)
		}
		if got := count(c); got != "60002|4" {
			t.Fatalf("after COPY: %s", got)
		}
	})

	t.Run("expired intent", func(t *testing.T) {
		want := count(c)
		before := filesUnder(t, dir)
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "INSERT INTO orph.t SELECT g, 'stalled' FROM generate_series(200000, 220000) AS s(g)"); err != nil {
			t.Fatal(err)
		}
		staged := newFiles(before)
		if len(staged) == 0 {
			t.Fatal("the block wrote no files")
		}
		id, ok := layout.IntentOfFile(staged[0])
		if !ok {
			t.Fatalf("staged file %s carries no write intent", staged[0])
		}
		// The session stalls past the intent's lifetime.
		if tag, err := cat.Exec(ctx, "UPDATE lakesoul.write_intent SET expires_at = now() - interval '1 second' WHERE id = $1", id); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("expire intent %s: %v %v", id, tag, err)
		}
		collect()
		if left := newFiles(before); len(left) != 0 {
			t.Fatalf("files of an expired intent survived the collection: %v", left)
		}
		err = tx.Commit(ctx)
		if code := pgCode(err); code != "55000" {
			t.Fatalf("COMMIT after the intent expired and its files were collected: %v (SQLSTATE %s), want 55000", err, code)
		}
		if got := count(c); got != want {
			t.Fatalf("after the failed COMMIT: %s, want %s", got, want)
		}
		// Readable, and writable again.
		mustExec(t, ctx, c, "INSERT INTO orph.t VALUES (-1, 'after')")
		wantRows(t, "table after all", queryStrings(t, ctx, c, "SELECT v FROM orph.t WHERE id IN (-1, 0, 1) ORDER BY id"),
			[]string{"after", "seed", "block"})
	})
}

// TestDiskFullIs53100: a warehouse whose disk fills up fails the write with
// PostgreSQL's disk_full (53100), a message without the server's paths,
// nothing committed and nothing left behind, and the server carries on.
// The warehouse is a 1 MiB tmpfs, so the test needs root (it skips
// otherwise).
func TestDiskFullIs53100(t *testing.T) {
	requirePG(t)
	base := testBaseDir(t)
	mnt := filepath.Join(base, "tinywh")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	srv, err := startServer(filepath.Join(base, "data"), "diskfull-Secret1", "--warehouse", objstore.LocalURI(mnt))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA df",
		"CREATE TABLE df.t (id int PRIMARY KEY, v text)",
		"INSERT INTO df.t VALUES (1, 'fits')")
	before := filesUnder(t, mnt)
	// About 10 MB of hex digits: more than the disk holds, compressed or not.
	big := "SELECT g, md5(g::text) || md5((g * 7)::text) || md5((g * 13)::text) FROM generate_series(2, 100000) AS s(g)"
	for name, run := range map[string]func() error{
		"INSERT": func() error { _, err := c.Exec(ctx, "INSERT INTO df.t "+big); return err },
		"COPY": func() error {
			var b strings.Builder
			for i := 2; i < 100000; i++ {
				fmt.Fprintf(&b, "%d\t%x%x%x\n", i, i*7919, i*104729, i*1299709)
			}
			_, err := c.PgConn().CopyFrom(ctx, strings.NewReader(b.String()), "COPY df.t FROM STDIN")
			return err
		},
	} {
		err := run()
		if code := pgCode(err); code != "53100" {
			t.Fatalf("%s onto a full disk: %v (SQLSTATE %s), want 53100", name, err, code)
		}
		if msg := err.Error(); !strings.Contains(msg, "No space left on device") || strings.Contains(msg, mnt) || strings.Contains(msg, "file://") {
			t.Errorf("%s: message %q: want PostgreSQL's wording without paths", name, msg)
		}
		wantRows(t, name+": rows after the failed write", queryStrings(t, ctx, c, "SELECT id, v FROM df.t"), []string{"1|fits"})
		if after := filesUnder(t, mnt); !slices.Equal(after, before) {
			t.Errorf("%s: the failed write left files: %q, was %q", name, after, before)
		}
	}
	mustExec(t, ctx, c, "INSERT INTO df.t VALUES (2, 'fits too')", "DROP TABLE df.t")
}

// TestCatalogLostIs08006: while the catalog PostgreSQL is down, statements
// fail with connection_failure (08006) and a message that names neither the
// catalog's address nor its login; once it is back, the same session works.
func TestCatalogLostIs08006(t *testing.T) {
	requirePG(t)
	ctx := testCtx(t)
	cluster := pgtest.Cluster(t)
	if err := cluster.CreateDatabase(ctx, "lost"); err != nil {
		t.Fatal(err)
	}
	url := cluster.ConnString("lost")
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startServer(filepath.Join(testBaseDir(t), "data"), "lost-Secret1", "--catalog-url", url, "--compaction-workers", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.cmd.Process.Signal(os.Interrupt)
		<-srv.exited
	}()
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA lost", "CREATE TABLE lost.t (id int PRIMARY KEY, v text)", "INSERT INTO lost.t VALUES (1, 'a')")

	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT * FROM lost.t", "INSERT INTO lost.t VALUES (2, 'b')", "CREATE TABLE lost.u (x int)",
		"SELECT count(*) FROM pg_catalog.pg_class"} {
		_, err := c.Exec(ctx, q)
		if code := pgCode(err); code != "08006" {
			t.Errorf("%s with the catalog down: %v (SQLSTATE %s), want 08006", q, err, code)
			continue
		}
		msg := err.Error()
		for _, secret := range []string{cfg.Host, fmt.Sprint(cfg.Port), cfg.User + " ", "user=", ".s.PGSQL"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s: the message %q shows %q", q, msg, secret)
			}
		}
	}
	back, err := pgcluster.Open(ctx, cluster.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer back.Stop(context.Background())
	wantRows(t, "after the catalog is back", queryStrings(t, ctx, c, "SELECT id, v FROM lost.t"), []string{"1|a"})
}
