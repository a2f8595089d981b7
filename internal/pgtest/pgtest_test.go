package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(context.Background(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// databaseExists asks the server behind admin whether database name exists.
func databaseExists(t *testing.T, admin, name string) bool {
	t.Helper()
	var exists bool
	err := connect(t, admin).QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

// checkFreshDatabases gets two databases from DSN and checks that they
// are distinct and empty, and that each is dropped when its test ends.
func checkFreshDatabases(t *testing.T, admin func() string) {
	var names []string
	t.Run("fresh", func(t *testing.T) {
		a, b := connect(t, DSN(t)), connect(t, DSN(t))
		names = []string{queryString(t, a, "SELECT current_database()"), queryString(t, b, "SELECT current_database()")}
		if names[0] == names[1] {
			t.Fatalf("two DSN calls gave the same database %s", names[0])
		}
		for _, conn := range []*pgx.Conn{a, b} {
			if n := queryString(t, conn, "SELECT count(*)::text FROM pg_class WHERE relnamespace = 'public'::regnamespace"); n != "0" {
				t.Errorf("new database has %s relations in public", n)
			}
		}
		if _, err := a.Exec(context.Background(), "CREATE TABLE only_in_a (id int)"); err != nil {
			t.Fatal(err)
		}
		if n := queryString(t, b, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'only_in_a'"); n != "0" {
			t.Error("table created in one database is visible in the other")
		}
		if queryString(t, a, "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user") != "true" &&
			os.Getenv(EnvCatalogURL) == "" {
			t.Error("the shared cluster's DSN is not a superuser")
		}
	})
	for _, name := range names {
		if databaseExists(t, admin(), name) {
			t.Errorf("database %s still exists after its test ended", name)
		}
	}
}

func TestDSN(t *testing.T) {
	checkFreshDatabases(t, func() string {
		if admin := os.Getenv(EnvCatalogURL); admin != "" {
			return admin
		}
		return sharedCluster(t).ConnString("postgres")
	})
}

func TestDSNFromCatalogURL(t *testing.T) {
	c := Cluster(t)
	u := url.URL{Scheme: "postgres", Path: "/postgres", RawQuery: url.Values{
		"host": {c.SocketDir()}, "port": {strconv.Itoa(c.Port())}, "user": {c.SuperUser()}, "sslmode": {"disable"},
	}.Encode()}
	for name, admin := range map[string]string{
		"keyword-value": c.ConnString("postgres"),
		"url":           u.String(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvCatalogURL, admin)
			dsn := DSN(t)
			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != c.SocketDir() || !strings.HasPrefix(cfg.Database, "lakesoul_test_") {
				t.Fatalf("DSN %q does not name a test database on the given server", dsn)
			}
			checkFreshDatabases(t, func() string { return admin })
		})
	}
}

func TestClusterRestart(t *testing.T) {
	ctx := context.Background()
	c := Cluster(t)
	dsn := c.ConnString("postgres")
	conn := connect(t, dsn)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept AS SELECT 7 AS v"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c2, err := pgcluster.Open(ctx, c.Options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Stop(context.Background()) })
	if c2.ConnString("postgres") != dsn {
		t.Fatalf("restart changed the DSN to %q", c2.ConnString("postgres"))
	}
	if v := queryString(t, connect(t, dsn), "SELECT v::text FROM kept"); v != "7" {
		t.Fatalf("kept.v = %s", v)
	}
}

// envAbandon, set for a child test binary, makes TestAbandonHelper start
// the shared cluster, write "<postmaster pid> <cluster dir>" to the named
// file and panic, as a crashing test would.
const envAbandon = "LAKESOUL_PGTEST_ABANDON_REPORT"

func TestAbandonHelper(t *testing.T) {
	report := os.Getenv(envAbandon)
	if report == "" {
		t.Skip("helper for TestAbandonedClusterStops")
	}
	DSN(t)
	if err := os.WriteFile(report, fmt.Appendf(nil, "%d %s", shared.cluster.PID(), shared.base), 0o600); err != nil {
		t.Fatal(err)
	}
	panic("pgtest: simulated crash of a test")
}

func TestAbandonedClusterStops(t *testing.T) {
	if _, err := pgcluster.FindBinDir(""); err != nil {
		failStart(t, err)
	}
	report := filepath.Join(t.TempDir(), "report")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAbandonHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envAbandon+"="+report, EnvCatalogURL+"=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "simulated crash") {
		t.Fatalf("helper did not crash as planned: %v\n%s", err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("helper wrote no report: %v\n%s", err, out)
	}
	var pid int
	var base string
	if _, err := fmt.Sscanf(string(b), "%d %s", &pid, &base); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })

	// The postmaster got its parent-death signal; wait for it to finish
	// its shutdown (bounded only by the test binary's -timeout).
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for processAlive(pid) {
		<-tick.C
	}
	if _, err := os.Stat(filepath.Join(base, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid left behind (%v): the server did not shut down cleanly", err)
	}
	sweepAbandoned()
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Fatalf("abandoned cluster dir %s not swept: %v", base, err)
	}
}

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u@h:5/postgres?sslmode=disable", "postgres://u@h:5/x?sslmode=disable"},
		{"postgresql:///postgres?host=%2Ftmp&dbname=postgres", "postgresql:///x?host=%2Ftmp"},
		{"host=/tmp dbname=postgres", "host=/tmp dbname=postgres dbname=x"},
	} {
		got := withDatabase(tc.in, "x")
		if got != tc.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if cfg, err := pgx.ParseConfig(got); err != nil || cfg.Database != "x" {
			t.Errorf("%q parses to database %q, %v", got, cfg.Database, err)
		}
	}
}
