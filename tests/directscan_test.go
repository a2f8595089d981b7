package tests

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestDirectScanMatchesDuckDB checks that a plain projection of a primary-key
// table, which the engine streams from the merge without DuckDB
// (engine/directscan.go), sends exactly the bytes the DuckDB route sends for
// the same rows: every column type, NULLs, merged upserts, partition values,
// in text and in binary format. `WHERE true` keeps a query on the DuckDB
// route (engine.TestDirectScanIsUsed proves which route each form takes).
func TestDirectScanMatchesDuckDB(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := context.Background()
	for _, q := range []string{
		`DROP SCHEMA IF EXISTS direct CASCADE`,
		`CREATE SCHEMA direct`,
		`CREATE TABLE direct.t (id bigint, region text, i2 smallint, i4 int, f4 real, f8 double precision,
			ok boolean, name text, code varchar(8), raw bytea, d date, ts timestamp, tstz timestamptz,
			amount numeric(12,3), PRIMARY KEY (id)) PARTITION BY LIST (region) WITH (hash_bucket_num = 3)`,
		`INSERT INTO direct.t VALUES
			(1, 'eu', 1, 10, 1.5, 2.25, true, 'ann', 'a1', '\x00ff', '2026-01-02', '2026-01-02 03:04:05.123456',
				'2026-01-02 03:04:05+02', 12.5),
			(2, 'eu', -2, -20, -0.1, 1e300, false, '', 'b2', '', '1999-12-31', '1970-01-01 00:00:00', '1960-06-01 12:00:00+00', -0.001),
			(3, 'us', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			(4, 'us', 32767, 2147483647, 'Infinity'::real, 'NaN'::float8, true, 'élan 🚀', 'zz', 'bytes', '0001-01-01', '2262-04-11 23:47:16',
				'2100-01-01 00:00:00+00', 999999999.999)`,
		// Upserts merged on read: a full row and a changed value.
		`INSERT INTO direct.t VALUES (2, 'eu', 7, 70, 7.5, 7.25, true, 'bob', 'b3', '\x07', '2000-01-01', '2000-01-01 00:00:01',
			'2000-01-01 00:00:00+00', 7)`,
		`UPDATE direct.t SET name = 'ANN' WHERE id = 1`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pairs := []struct{ direct, duck string }{
		{`SELECT * FROM direct.t`, `SELECT * FROM direct.t WHERE true`},
		{`SELECT t.* FROM direct.t`, `SELECT t.* FROM direct.t WHERE true`},
		{`SELECT name AS who, id, amount, region FROM direct.t`, `SELECT name AS who, id, amount, region FROM direct.t WHERE true`},
		{`SELECT x.ts, x.tstz, x.d, x.raw FROM direct.t x`, `SELECT x.ts, x.tstz, x.d, x.raw FROM direct.t x WHERE 1 = 1`},
	}
	for _, p := range pairs {
		for _, format := range []int16{pgx.TextFormatCode, pgx.BinaryFormatCode} {
			got := rawRows(t, c.PgConn(), p.direct, format)
			want := rawRows(t, c.PgConn(), p.duck, format)
			if len(want) != 4 {
				t.Fatalf("%s: %d rows, want 4", p.duck, len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("format %d: %s\n got %q\nwant %q", format, p.direct, got, want)
			}
		}
	}
	// The simple protocol (text, as psql sends it).
	for _, p := range pairs {
		if got, want := simpleRows(t, c.PgConn(), p.direct), simpleRows(t, c.PgConn(), p.duck); !slices.Equal(got, want) {
			t.Errorf("simple protocol: %s\n got %q\nwant %q", p.direct, got, want)
		}
	}
	// LIMIT / OFFSET count rows the way the DuckDB route does.
	for q, want := range map[string]int{
		`SELECT id FROM direct.t LIMIT 2`: 2, `SELECT id FROM direct.t LIMIT 0`: 0, `SELECT id FROM direct.t OFFSET 3`: 1,
		`SELECT id FROM direct.t LIMIT 10 OFFSET 1`: 3, `SELECT id FROM direct.t LIMIT ALL`: 4, `SELECT id FROM direct.t OFFSET 9`: 0,
	} {
		if got := len(rawRows(t, c.PgConn(), q, pgx.TextFormatCode)); got != want {
			t.Errorf("%s: %d rows, want %d", q, got, want)
		}
	}
	// A cursor fetches the stream in pieces (PortalSuspended between FETCHes).
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `DECLARE cur CURSOR FOR SELECT id FROM direct.t`); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 3 {
		rows, _ := tx.Query(ctx, `FETCH 3 FROM cur`)
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1, 2, 3, 4}) {
		t.Errorf("cursor fetched %v", ids)
	}
}

// rawRows runs q with the extended protocol and every result column in
// format, and returns each row's raw fields, sorted (scan order is free).
func rawRows(t *testing.T, c *pgconn.PgConn, q string, format int16) []string {
	t.Helper()
	res := c.ExecParams(context.Background(), q, nil, nil, nil, []int16{format}).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", q, res.Err)
	}
	return encodeRawRows(res.Rows)
}

// simpleRows runs q with the simple protocol.
func simpleRows(t *testing.T, c *pgconn.PgConn, q string) []string {
	t.Helper()
	results, err := c.Exec(context.Background(), q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return encodeRawRows(results[0].Rows)
}

func encodeRawRows(rows [][][]byte) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		var b bytes.Buffer
		for _, f := range r {
			if f == nil {
				b.WriteString("<null>|")
				continue
			}
			fmt.Fprintf(&b, "%x|", f)
		}
		out[i] = b.String()
	}
	slices.Sort(out)
	return out
}

// A client that reads only part of a large direct scan's result leaves the
// session usable, and later scans see every merged row. (Cancellation is
// tested deterministically in engine.TestDirectScanPortal.)
func TestDirectScanPartialReads(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	c := srv.connect(t)
	ctx := context.Background()
	for _, q := range []string{
		`DROP SCHEMA IF EXISTS directbig CASCADE`, `CREATE SCHEMA directbig`,
		`CREATE TABLE directbig.t (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 4)`,
		`INSERT INTO directbig.t SELECT i, repeat('x', 40) || i FROM generate_series(1, 300000) AS s(i)`,
		`INSERT INTO directbig.t SELECT i, 'updated' FROM generate_series(1, 300000, 2) AS s(i)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Extended protocol: read a few rows, then close the result early.
	rows, err := c.Query(ctx, `SELECT id, v FROM directbig.t`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && rows.Next(); i++ {
	}
	rows.Close()
	var n, updated int64
	if err := c.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE v = 'updated') FROM directbig.t`).Scan(&n, &updated); err != nil ||
		n != 300000 || updated != 150000 {
		t.Fatalf("after partial read: count %d, updated %d, %v", n, updated, err)
	}
	got := rawRows(t, c.PgConn(), `SELECT id FROM directbig.t`, pgx.BinaryFormatCode)
	if len(got) != 300000 {
		t.Fatalf("direct scan returned %d rows, want 300000", len(got))
	}
}
