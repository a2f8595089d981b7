package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// JVM engines on lakesoul serve (README: Engines): Flink through its JDBC
// connector. Flink's Python package pins its own pyarrow, pandas and numpy,
// older than the engines' venv holds, so it has a venv of its own
// (scripts/flink-requirements.txt, $LAKESOUL_FLINK_PYTHON, default
// ~/.cache/lakesoul/flink-venv/bin/python); its JDBC connector comes from
// Maven Central ($LAKESOUL_FLINK_JDBC_JAR, default the one scripts/test
// fetches into ~/.m2). Missing parts skip the test, naming them, unless
// LAKESOUL_REQUIRE_ENGINES=1.

// flinkJDBCVersion is the Flink JDBC connector for Flink 1.20, the newest
// Flink whose JDBC connector Maven Central serves here (4.0.0-2.0, for
// Flink 2.0, is not served).
const flinkJDBCVersion = "3.3.0-1.20"

// flinkParts returns Flink's Python and its JDBC connector jar, or skips
// (fails, with LAKESOUL_REQUIRE_ENGINES=1) naming what is missing.
func flinkParts(t *testing.T) (py, jar string) {
	t.Helper()
	home, _ := os.UserHomeDir()
	py = os.Getenv("LAKESOUL_FLINK_PYTHON")
	if py == "" {
		py = filepath.Join(home, ".cache", "lakesoul", "flink-venv", "bin", "python")
	}
	jar = os.Getenv("LAKESOUL_FLINK_JDBC_JAR")
	if jar == "" {
		jar = filepath.Join(home, ".m2", "repository", "org", "apache", "flink", "flink-connector-jdbc", flinkJDBCVersion,
			"flink-connector-jdbc-"+flinkJDBCVersion+".jar")
	}
	missing := func(why string) {
		if os.Getenv(envRequireEngines) == "1" {
			t.Fatalf("Flink is required (%s=1): %s", envRequireEngines, why)
		}
		t.Skipf("%s (scripts/test installs it; %s=1 makes this a failure)", why, envRequireEngines)
	}
	if out, err := exec.Command(py, "-c", "import pyflink.table").CombinedOutput(); err != nil {
		missing(fmt.Sprintf("%s cannot import pyflink: %v\n%s", py, err, out))
	}
	if _, err := os.Stat(jar); err != nil {
		missing(fmt.Sprintf("no Flink JDBC connector %s: %v", flinkJDBCVersion, err))
	}
	if _, err := exec.LookPath("java"); err != nil {
		missing("no java on PATH")
	}
	return py, jar
}

// TestFlinkJDBC: Flink 1.20 (PyPI apache-flink, a local mini cluster, Java
// 17) with its JDBC connector and pgjdbc 42.7 from Maven Central. In
// streaming mode a GROUP BY over a lake table read through the connector is
// an updating changelog the JDBC sink upserts into a primary-key table (an
// INSERT … ON CONFLICT … DO UPDATE per key and flush, two sink tasks at
// once); a changelog of inserts, updates and deletes is applied to another
// primary-key table and to a CDC table. In batch mode the connector reads a
// table split into four range queries on id and appends part of it to a
// table without a key (INSERT batches), and Flink's PostgreSQL catalog
// lists the server's tables and joins two. Every table ends as the
// changelog says, and every answer equals the server's SELECT.
func TestFlinkJDBC(t *testing.T) {
	py, connector := flinkParts(t)
	pgjdbc := pgjdbcJar(t)
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	const n = 3000
	mustExec(t, ctx, c,
		"CREATE SCHEMA fl",
		`CREATE TABLE fl.orders (id bigint PRIMARY KEY, customer text, amount numeric(10,2)) WITH (hash_bucket_num = 4)`,
		fmt.Sprintf(`INSERT INTO fl.orders SELECT g, 'c' || (g %% 7), (g %% 1000) / 10.0 FROM generate_series(1, %d) g`, n),
		`UPDATE fl.orders SET amount = amount + 1 WHERE id % 5 = 0`,
		`CREATE TABLE fl.totals (customer text PRIMARY KEY, n bigint, total numeric(12,2))`,
		`INSERT INTO fl.totals VALUES ('stale', 1, 1), ('c1', 0, 0)`,
		`CREATE TABLE fl.kv (id bigint PRIMARY KEY, v text)`,
		`CREATE TABLE fl.kvcdc (id bigint PRIMARY KEY, v text, op text) WITH (cdc_column = 'op')`,
		`INSERT INTO fl.kvcdc (id, v) VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')`,
		`CREATE TABLE fl.events (id bigint, customer text)`,
		`INSERT INTO fl.events VALUES (0, 'before')`,
		`INSERT INTO fl.kv VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')`)
	pw, err := e.srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("jdbc:postgresql://%s/%s", e.srv.addr, database),
		"user": adminRole, "password": pw, "jars": []string{connector, pgjdbc},
		"orders": "fl.orders", "totals": "fl.totals", "kv": "fl.kv", "kvcdc": "fl.kvcdc", "events": "fl.events", "every": 100, "n": n, "flush": 1000,
		"base_url": "jdbc:postgresql://" + e.srv.addr, "database": database, "schema": "fl"})
	out := runClient(t, ctx, nil, py, enginesPath(t, "flink_jdbc.py"), string(cfg))
	var got []string
	for _, l := range out {
		if strings.HasPrefix(l, "streamed ") || strings.HasPrefix(l, "batch ") || strings.HasPrefix(l, "catalog ") {
			got = append(got, l)
		}
	}
	totals := textRows(t, ctx, c, `SELECT string_agg(customer || '=' || n || '/' || total, ';' ORDER BY customer) FROM
		(SELECT customer, count(*) AS n, sum(amount) AS total FROM fl.orders GROUP BY customer UNION ALL
		 SELECT 'stale', 1, 1.00) s`)[0]
	orders := textRows(t, ctx, c, `SELECT count(*) || ' ' || sum(id) || ' ' || sum(amount) || ' ' || count(DISTINCT customer)
		FROM fl.orders`)[0]
	join := textRows(t, ctx, c, `SELECT string_agg(customer || '=' || c || '/' || s || '/' || m, ';' ORDER BY customer) FROM
		(SELECT o.customer, count(*) AS c, sum(o.amount) AS s, max(t.n) AS m FROM fl.orders o JOIN fl.totals t
		 ON o.customer = t.customer WHERE o.id % 3 = 0 GROUP BY o.customer) j`)[0]
	kv := "1=flink updated one;3=flink updated three;4=four;10=flink a;12=flink c"
	wantRows(t, "Flink's answers", got, []string{"streamed totals", "streamed kv",
		"batch orders " + orders, "batch appended", "batch totals " + totals, "batch kv " + kv, "batch kvcdc " + kv,
		"catalog tables fl.events,fl.kv,fl.kvcdc,fl.orders,fl.totals", "catalog join " + join})
	wantRows(t, "the rows Flink appended", textRows(t, ctx, c,
		"SELECT count(*) || ' ' || sum(id) || ' ' || string_agg(DISTINCT customer, ',' ORDER BY customer) FROM fl.events"),
		textRows(t, ctx, c, `SELECT count(*) || ' ' || sum(id) || ' ' || string_agg(DISTINCT customer, ',' ORDER BY customer)
		FROM (SELECT 0 AS id, 'before' AS customer UNION ALL SELECT id, customer FROM fl.orders WHERE id % 100 = 0) e`))
	wantRows(t, "the totals Flink upserted", textRows(t, ctx, c,
		"SELECT string_agg(customer || '=' || n || '/' || total, ';' ORDER BY customer) FROM fl.totals"), []string{totals})
	wantRows(t, "the changelog Flink applied", textRows(t, ctx, c,
		"SELECT string_agg(id || '=' || v, ';' ORDER BY id) FROM fl.kv"), []string{kv})
	wantRows(t, "the changelog Flink applied to a CDC table", textRows(t, ctx, c,
		"SELECT string_agg(id || '=' || v || '/' || op, ';' ORDER BY id) FROM fl.kvcdc"),
		[]string{"1=flink updated one/insert;3=flink updated three/insert;4=four/insert;10=flink a/insert;12=flink c/insert"})
}

// TestPrestoTrinoPostgreSQL would run Presto 0.296 or Trino with its
// PostgreSQL connector pointed at this server (SHOW TABLES, a join and an
// aggregate over lake tables). Neither server distribution nor either
// PostgreSQL plugin is served by Maven Central here (trino-main 483 and
// presto-main 0.296 are, but a server needs its launcher and the plugin);
// the test says precisely what it asked for. It asks for the servers' POMs
// and the plugins' jars, not the gigabyte tarballs, so a change is found
// cheaply.
func TestPrestoTrinoPostgreSQL(t *testing.T) {
	probeMaven(t, "Presto and Trino with their PostgreSQL connectors", "the Presto/Trino test",
		[]string{"io.trino:trino-server:483:pom", "io.trino:trino-postgresql:483"},
		[]string{"com.facebook.presto:presto-server:0.296:pom", "com.facebook.presto:presto-postgresql:0.296"})
}
