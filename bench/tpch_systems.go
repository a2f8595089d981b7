package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/server"
	"github.com/lakesoul-go/lakesoul/writer"
)

// tpchSystem is one system of `bench tpch`: it loads the generated tables,
// then answers queries between open and done (DuckDB's databases live only
// that long, so they hold no memory while another system runs).
type tpchSystem interface {
	name() string
	load(ctx context.Context, dataDir string, counts map[string]int64) (tpchLoad, error)
	open(ctx context.Context) error
	query(ctx context.Context, q string) (tpchAnswer, error)
	done()
	close()
}

// tpchLoad is what a load took: seconds in all, each table's seconds (and
// PostgreSQL's "keys_indexes_analyze"), and the bytes the tables take.
type tpchLoad struct {
	seconds float64
	tables  map[string]float64
	bytes   int64
}

// A lake system's name may end in ":CODEC" (lakesoul-keyed:LZ4_RAW): its
// data files are then compressed with that Parquet codec instead of the
// writer's default, in a schema of their own.
func newTPCHSystem(name string, srv *server.Server, dir string) tpchSystem {
	base, codecName, _ := strings.Cut(name, ":")
	var codec []compress.Compression
	suffix := ""
	if codecName != "" {
		codec, _ = parseCodecs(codecName) // checked by runTPCH
		suffix = "_" + strings.ToLower(codecName)
	}
	switch base {
	case "lakesoul-keyed":
		return &tpchLake{sys: name, srv: srv, schema: "tpch_keyed" + suffix, keyed: true, codec: codec}
	case "lakesoul-append":
		return &tpchLake{sys: name, srv: srv, schema: "tpch_append" + suffix, codec: codec}
	case "postgres":
		return &tpchPostgres{srv: srv}
	case "duckdb":
		return &tpchDuck{path: filepath.Join(dir, "duckdb", "tpch.duckdb")}
	case "duckdb-parquet":
		return &tpchDuckParquet{dir: filepath.Join(dir, "duckdb-parquet")}
	}
	panic("tpch: unknown system " + name)
}

// timeTable times load for each table and adds up the seconds.
func timeTables(ld *tpchLoad, load func(t tpchTable) error) error {
	if ld.tables == nil {
		ld.tables = map[string]float64{}
	}
	for _, t := range tpchTables {
		start := time.Now()
		if err := load(t); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		ld.tables[t.name] = time.Since(start).Seconds()
		ld.seconds += ld.tables[t.name]
	}
	return nil
}

// copyFile sends a table's generated file to c by COPY … FROM STDIN.
func copyFile(ctx context.Context, c *pgx.Conn, path, copySQL string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = c.PgConn().CopyFrom(ctx, f, copySQL)
	return err
}

// tpchLake is a lake schema on the in-process server, loaded over pgwire
// by COPY FROM STDIN as a user's data would be: with TPC-H's primary keys
// and tpchBuckets hash buckets (keyed), or as append tables.
type tpchLake struct {
	sys    string
	srv    *server.Server
	schema string
	keyed  bool
	// codec is the data files' codec (nil: the writer's default).
	codec []compress.Compression
	conn  *pgx.Conn
}

func (l *tpchLake) name() string { return l.sys }

func (l *tpchLake) load(ctx context.Context, dataDir string, counts map[string]int64) (tpchLoad, error) {
	var ld tpchLoad
	if l.codec != nil {
		defer func(c compress.Compression) { writer.DataCodec = c }(writer.DataCodec)
		writer.DataCodec = l.codec[0]
	}
	if err := l.open(ctx); err != nil {
		return ld, err
	}
	if _, err := l.conn.Exec(ctx, "CREATE SCHEMA "+l.schema); err != nil {
		return ld, err
	}
	err := timeTables(&ld, func(t tpchTable) error {
		with := ""
		if l.keyed {
			with = fmt.Sprintf("hash_bucket_num = %d", tpchBuckets(counts[t.name]))
		}
		if _, err := l.conn.Exec(ctx, t.createSQL(l.schema+".", l.keyed, with)); err != nil {
			return err
		}
		return copyFile(ctx, l.conn, tpchTableFile(dataDir, t.name), "COPY "+l.schema+"."+t.name+" FROM STDIN")
	})
	if err != nil {
		return ld, err
	}
	for _, t := range tpchTables {
		files, err := ccfFilesOf(ctx, l.srv.CatalogURL(), l.schema, t.name)
		if err != nil {
			return ld, err
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				return ld, err
			}
			ld.bytes += st.Size()
		}
	}
	return ld, nil
}

// open connects (again, after a failed query) with the schema on the
// search path.
func (l *tpchLake) open(ctx context.Context) error {
	if l.conn != nil && !l.conn.IsClosed() {
		return nil
	}
	c, err := connectBench(ctx, l.srv)
	if err != nil {
		return err
	}
	if _, err := c.Exec(ctx, "SET search_path = "+l.schema); err != nil {
		c.Close(ctx)
		return err
	}
	l.conn = c
	return nil
}

func (l *tpchLake) query(ctx context.Context, q string) (tpchAnswer, error) {
	a, err := pgxTPCHAnswer(ctx, l.conn, q)
	if err != nil && ctx.Err() != nil {
		l.close() // a cancelled query may leave the connection mid-protocol
	}
	return a, err
}

// explain is the server's EXPLAIN ANALYZE of q: pruning, rows read and
// merged, then DuckDB's plan with its timings.
func (l *tpchLake) explain(ctx context.Context, q string) (string, error) {
	if err := l.open(ctx); err != nil {
		return "", err
	}
	rows, err := l.conn.Query(ctx, "EXPLAIN ANALYZE "+q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return "", err
		}
		b.WriteString(line + "\n")
	}
	return b.String(), rows.Err()
}

func (l *tpchLake) done() {}

func (l *tpchLake) close() {
	if l.conn != nil {
		l.conn.Close(context.Background())
		l.conn = nil
	}
}

// tpchPostgres is a database on the catalog's PostgreSQL: heap tables
// loaded by COPY, then their primary keys, indexes on the foreign keys and
// the filtered dates (tpchTable.indexes), and VACUUM ANALYZE — all part of
// the load's time.
type tpchPostgres struct {
	srv  *server.Server
	conn *pgx.Conn
}

const tpchPGDatabase = "bench_tpch_pg"

func (p *tpchPostgres) name() string { return "postgres" }

func (p *tpchPostgres) load(ctx context.Context, dataDir string, _ map[string]int64) (tpchLoad, error) {
	var ld tpchLoad
	admin, err := pgx.Connect(ctx, p.srv.CatalogURL())
	if err != nil {
		return ld, err
	}
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+tpchPGDatabase)
	_, err = admin.Exec(ctx, "CREATE DATABASE "+tpchPGDatabase)
	admin.Close(ctx)
	if err != nil {
		return ld, err
	}
	if err := p.open(ctx); err != nil {
		return ld, err
	}
	if err := timeTables(&ld, func(t tpchTable) error {
		if _, err := p.conn.Exec(ctx, t.createSQL("", false, "")); err != nil {
			return err
		}
		return copyFile(ctx, p.conn, tpchTableFile(dataDir, t.name), "COPY "+t.name+" FROM STDIN")
	}); err != nil {
		return ld, err
	}
	start := time.Now()
	for _, t := range tpchTables {
		stmts := []string{"ALTER TABLE " + t.name + " ADD PRIMARY KEY (" + strings.Join(t.key, ", ") + ")"}
		for _, ix := range t.indexes {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX ON %s (%s)", t.name, strings.Join(ix, ", ")))
		}
		for _, q := range stmts {
			if _, err := p.conn.Exec(ctx, q); err != nil {
				return ld, fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	if _, err := p.conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return ld, err
	}
	ld.tables["keys_indexes_analyze"] = time.Since(start).Seconds()
	ld.seconds += ld.tables["keys_indexes_analyze"]
	err = p.conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&ld.bytes)
	return ld, err
}

func (p *tpchPostgres) open(ctx context.Context) error {
	if p.conn != nil && !p.conn.IsClosed() {
		return nil
	}
	cfg, err := pgx.ParseConfig(p.srv.CatalogURL())
	if err != nil {
		return err
	}
	cfg.Database = tpchPGDatabase
	p.conn, err = pgx.ConnectConfig(ctx, cfg)
	return err
}

func (p *tpchPostgres) query(ctx context.Context, q string) (tpchAnswer, error) {
	a, err := pgxTPCHAnswer(ctx, p.conn, q)
	if err != nil && ctx.Err() != nil {
		p.close()
	}
	return a, err
}

func (p *tpchPostgres) done() {}

func (p *tpchPostgres) close() {
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
}

// duckReadTable is the SELECT reading a table's generated file in DuckDB.
func duckReadTable(dataDir string, t tpchTable) string {
	return fmt.Sprintf("SELECT * FROM read_csv('%s', delim = '\\t', header = false, quote = '', escape = '', columns = %s)",
		strings.ReplaceAll(tpchTableFile(dataDir, t.name), "'", "''"), t.duckColumns())
}

// tpchDuck is DuckDB's own tables in a database file (no keys: DuckDB's
// are constraints, not access paths, and slow its loads).
type tpchDuck struct {
	path string
	db   *sql.DB
}

func (d *tpchDuck) name() string { return "duckdb" }

func (d *tpchDuck) load(ctx context.Context, dataDir string, _ map[string]int64) (tpchLoad, error) {
	var ld tpchLoad
	if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
		return ld, err
	}
	if err := d.open(ctx); err != nil {
		return ld, err
	}
	defer d.done()
	if err := timeTables(&ld, func(t tpchTable) error {
		for _, q := range []string{t.createSQL("", false, ""), "INSERT INTO " + t.name + " " + duckReadTable(dataDir, t)} {
			if _, err := d.db.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return ld, err
	}
	start := time.Now()
	if _, err := d.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return ld, err
	}
	ld.tables["checkpoint"] = time.Since(start).Seconds()
	ld.seconds += ld.tables["checkpoint"]
	st, err := os.Stat(d.path)
	if err != nil {
		return ld, err
	}
	ld.bytes = st.Size()
	return ld, nil
}

func (d *tpchDuck) open(ctx context.Context) error {
	db, err := sql.Open("duckdb", d.path)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	d.db = db
	return nil
}

func (d *tpchDuck) query(ctx context.Context, q string) (tpchAnswer, error) {
	return sqlTPCHAnswer(ctx, d.db, q)
}

func (d *tpchDuck) done() {
	if d.db != nil {
		d.db.Close()
		d.db = nil
	}
}

func (d *tpchDuck) close() { d.done() }

// tpchDuckParquet is one Parquet file per table that DuckDB writes (its
// defaults: Snappy, dictionaries, row groups of 122,880 rows), queried
// through views over read_parquet.
type tpchDuckParquet struct {
	dir string
	db  *sql.DB
}

func (d *tpchDuckParquet) name() string { return "duckdb-parquet" }

func (d *tpchDuckParquet) file(t tpchTable) string { return filepath.Join(d.dir, t.name+".parquet") }

func (d *tpchDuckParquet) load(ctx context.Context, dataDir string, _ map[string]int64) (tpchLoad, error) {
	var ld tpchLoad
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return ld, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return ld, err
	}
	defer db.Close()
	if err := timeTables(&ld, func(t tpchTable) error {
		_, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", duckReadTable(dataDir, t),
			strings.ReplaceAll(d.file(t), "'", "''")))
		return err
	}); err != nil {
		return ld, err
	}
	for _, t := range tpchTables {
		st, err := os.Stat(d.file(t))
		if err != nil {
			return ld, err
		}
		ld.bytes += st.Size()
	}
	return ld, nil
}

func (d *tpchDuckParquet) open(ctx context.Context) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	for _, t := range tpchTables {
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s')", t.name, strings.ReplaceAll(d.file(t), "'", "''"))
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return err
		}
	}
	d.db = db
	return nil
}

func (d *tpchDuckParquet) query(ctx context.Context, q string) (tpchAnswer, error) {
	return sqlTPCHAnswer(ctx, d.db, q)
}

func (d *tpchDuckParquet) done() {
	if d.db != nil {
		d.db.Close()
		d.db = nil
	}
}

func (d *tpchDuckParquet) close() { d.done() }
