package duckstream_test

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/internal/duckstream"
)

func open(t *testing.T) *sql.Conn {
	t.Helper()
	if err := duckstream.Available(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func query(t *testing.T, c *sql.Conn, ctx context.Context, q string, args ...any) (*duckstream.Rows, error) {
	t.Helper()
	var r *duckstream.Rows
	err := c.Raw(func(dc any) error {
		var err error
		r, err = duckstream.Query(ctx, dc.(*duckdb.Conn), q, args)
		return err
	})
	return r, err
}

// Every DuckDB type comes out of a stream exactly as database/sql's rows of
// the same query give it.
func TestValuesAsRows(t *testing.T) {
	c := open(t)
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')"); err != nil {
		t.Fatal(err)
	}
	exprs := []string{
		"true", "1::TINYINT", "2::UTINYINT", "3::SMALLINT", "4::USMALLINT", "5::INTEGER", "6::UINTEGER",
		"7::BIGINT", "8::UBIGINT", "170141183460469231731687303715884105727::HUGEINT", "9::UHUGEINT",
		"1.5::FLOAT", "2.25::DOUBLE", "123.4500::DECIMAL(9,4)", "1234567890123456789.12::DECIMAL(38,2)",
		"'text'", "'\\x00\\xff'::BLOB", "DATE '2024-02-29'", "TIME '12:34:56.789'", "TIMESTAMP '2024-01-02 03:04:05.123456'",
		"TIMESTAMP_S '2024-01-02 03:04:05'", "TIMESTAMP_MS '2024-01-02 03:04:05.123'", "TIMESTAMP_NS '2024-01-02 03:04:05.123456789'",
		"TIMESTAMPTZ '2024-01-02 03:04:05+02'", "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID", "INTERVAL '1 year 2 days 3 seconds'",
		"[1, NULL, 3]", "[[1], [2, 3]]", "array_value(1.5, 2.5)", "{'a': 1, 'b': 'x'}", "MAP {'k': 1}", "'happy'::mood",
		"'0101'::BIT", "union_value(n := 2)", "'{\"a\":1}'::JSON", "TIMETZ '12:00:00+01'", "NULL::INTEGER", "NULL::VARCHAR",
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM range(3000)" // more than one chunk
	want, err := c.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	r, err := query(t, c, ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Columns() != len(exprs) {
		t.Fatalf("%d columns, want %d", r.Columns(), len(exprs))
	}
	got := make([]any, len(exprs))
	vals := make([]any, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for {
		ok, err := r.Next(ctx, got)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if !want.Next() {
			t.Fatalf("stream has more than %d rows", n)
		}
		if err := want.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], vals[i]) {
				t.Fatalf("row %d %s: stream %#v, rows %#v", n, exprs[i], got[i], vals[i])
			}
		}
		n++
	}
	if want.Next() || n != 3000 {
		t.Fatalf("stream ended after %d rows", n)
	}
}

// The first row of an endless result arrives: nothing waits for the end.
func TestStreams(t *testing.T) {
	c := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := query(t, c, ctx, "SELECT range AS i, repeat('x', 1000) AS pad FROM range(1000000000000)")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	row := make([]any, 2)
	for i := range 100000 {
		if ok, err := r.Next(ctx, row); !ok || err != nil {
			t.Fatalf("row %d: %v %v", i, ok, err)
		}
		if row[0] != int64(i) {
			t.Fatalf("row %d is %v", i, row[0])
		}
	}
}

// Parameters bind as database/sql binds them; an error raised while the
// result is read is DuckDB's typed error.
func TestParamsAndErrors(t *testing.T) {
	c := open(t)
	ctx := context.Background()
	r, err := query(t, c, ctx, "SELECT $1::BIGINT + range, $2 FROM range(2)", 40, "s")
	if err != nil {
		t.Fatal(err)
	}
	row := make([]any, 2)
	if ok, err := r.Next(ctx, row); !ok || err != nil || row[0] != int64(40) || row[1] != "s" {
		t.Fatalf("%v %v %v", ok, err, row)
	}
	r.Close()
	// The error may come while the result starts or while it is read.
	r, err = query(t, c, ctx, "SELECT CASE WHEN range = 1000000 THEN error('boom') ELSE range END FROM range(2000000)")
	for err == nil {
		var ok bool
		if ok, err = r.Next(ctx, row[:1]); !ok && err == nil {
			t.Fatal("no error")
		}
	}
	if r != nil {
		r.Close()
	}
	var de *duckdb.Error
	if !errors.As(err, &de) || !strings.Contains(de.Msg, "boom") || de.Type != duckdb.ErrorTypeInvalidInput {
		t.Fatalf("error %#v", err)
	}
}

// Cancelling the context interrupts a fetch DuckDB is busy with.
func TestCancel(t *testing.T) {
	c := open(t)
	for _, q := range []string{
		"SELECT count(*) FROM range(100000000000)",                        // works before the first row
		"SELECT range FROM range(100000000000) WHERE range = 99999999999", // while rows are fetched
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		r, err := query(t, c, ctx, q)
		if err == nil {
			var ok bool
			ok, err = r.Next(ctx, make([]any, 1))
			r.Close()
			if ok {
				t.Fatalf("%s: a row", q)
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", q, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("%s: cancel took %s", q, d)
		}
		var n int
		if err := c.QueryRowContext(context.Background(), "SELECT 42").Scan(&n); err != nil || n != 42 {
			t.Fatalf("after a cancel: %v %v", n, err)
		}
	}
}
