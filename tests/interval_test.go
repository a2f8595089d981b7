package tests

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// intervalScript creates interval columns in a keyed table and one
// without a key and works on them as a PostgreSQL user would (issue 35,
// item 5): literals in every input form PostgreSQL reads, its order and
// equality ('1 mon' = '30 days'), arithmetic with dates and timestamps,
// aggregates, justify_*, extract, each IntervalStyle, UPDATE, ON CONFLICT,
// MERGE and DELETE. TestIntervalDifferential runs it on lakesoul and on
// PostgreSQL.
var intervalScript = []string{
	`CREATE SCHEMA ivd`,
	`CREATE TABLE ivd.k (id int, i interval, d date, ts timestamp, tz timestamptz, PRIMARY KEY (id))`,
	`CREATE TABLE ivd.n (id int, note text)`,
	`ALTER TABLE ivd.n ADD COLUMN i interval`,
	`INSERT INTO ivd.k VALUES
		(1, '1 day 02:03:04', '2024-01-31', '2024-01-31 10:00', '2024-03-30 12:00+00'),
		(2, '1 year 2 mons', '2024-02-29', '2024-02-29 00:00', '2024-10-26 23:30+00'),
		(3, 'P1Y2M3DT4H5M6S', '2023-12-31', '2023-12-31 23:59:59.5', '2024-01-01 00:00+00'),
		(4, '@ 1 day ago', '2024-01-01', '2024-01-01 00:00', '2024-01-01 00:00+00'),
		(5, '-1 days +02:00', '2024-01-01', '2024-01-01 00:00', NULL),
		(6, '00:00:00.000001', '2024-01-01', NULL, '2024-01-01 00:00+00'),
		(7, NULL, '2024-01-01', '2024-01-01 00:00', '2024-01-01 00:00+00'),
		(8, '1 mon', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(9, interval '30 days', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(10, '1.5 years -3.25 days 27:00:00.25', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(11, '2 weeks 3 hours 4 minutes 5.678 seconds', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00'),
		(12, '-178000000 years', '2024-01-31', '2024-01-31 00:00', '2024-01-31 00:00+00')`,
	`INSERT INTO ivd.n SELECT id, 'copy', i FROM ivd.k`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`SELECT id, i FROM ivd.n ORDER BY id`,
	`SELECT id, i FROM ivd.k ORDER BY i, id`,
	`SELECT id, i FROM ivd.n ORDER BY i DESC NULLS LAST, id`,
	// Which of equal intervals ('1 mon', '30 days') a group shows is the
	// plan's choice in PostgreSQL too: the groups are compared by their ids.
	`SELECT min(id), max(id), count(*) FROM ivd.n GROUP BY i ORDER BY i NULLS FIRST`,
	`SELECT id FROM ivd.k WHERE i > '1 day' ORDER BY id`,
	`SELECT id FROM ivd.n WHERE i = '1 mon' ORDER BY id`,
	`SELECT id FROM ivd.k WHERE i BETWEEN '-1 day' AND interval '1 day 3 hours' ORDER BY id`,
	`SELECT id, d + i, ts + i, ts - i, tz + i, tz - i FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT id, i * 2, i / 4, -i, i + interval '1 hour', i - '1 mon' FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT id, ts - (ts - i) FROM ivd.k WHERE id < 12 ORDER BY id`,
	`SELECT min(i), max(i) FROM ivd.k`,
	`SELECT sum(i), avg(i) FROM ivd.k WHERE id < 12`,
	`SELECT id % 3, sum(i), avg(i), sum(i) FILTER (WHERE id > 2), avg(i * 1.5) FROM ivd.n WHERE id < 12 GROUP BY 1 ORDER BY 1`,
	`SELECT sum(i), avg(i) FROM ivd.k WHERE id > 100`,
	`SELECT i / 0 FROM ivd.k WHERE id = 1`,
	`SELECT i * 2 FROM ivd.k WHERE id = 12`,
	`SELECT sum(i) FROM ivd.n WHERE id IN (12, 12)`,
	`SELECT id, i * 0.3, 2.5 * i, i / 3.7, i / 7 FROM ivd.n WHERE id < 12 ORDER BY id`,
	`SELECT id, justify_hours(i), justify_days(i), justify_interval(i) FROM ivd.k ORDER BY id`,
	`SELECT id, extract(epoch FROM i), extract(year FROM i), extract(month FROM i), extract(day FROM i),
		extract(hour FROM i), extract(minute FROM i), extract(second FROM i), extract(microseconds FROM i) FROM ivd.k ORDER BY id`,
	`SET intervalstyle = iso_8601`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`SET intervalstyle = sql_standard`,
	`SELECT id, i FROM ivd.n ORDER BY id`,
	`SELECT id, i + '-1 2:03:04', i = interval '-1 2:03:04' FROM ivd.k ORDER BY id`,
	`SET intervalstyle = postgres_verbose`,
	`SELECT id, i FROM ivd.k ORDER BY id`,
	`RESET intervalstyle`,
	`UPDATE ivd.k SET i = i * 2 WHERE id = 1`,
	`UPDATE ivd.n SET i = i + '1 day' WHERE i < '0'`,
	`INSERT INTO ivd.k (id, i) VALUES (2, '3 hours'), (13, 'PT0.5S') ON CONFLICT (id) DO UPDATE SET i = EXCLUDED.i + ivd.k.i`,
	`MERGE INTO ivd.k t USING (VALUES (3, interval '1 sec'), (14, interval '-1 mon')) AS s(id, i) ON t.id = s.id
		WHEN MATCHED THEN UPDATE SET i = t.i - s.i WHEN NOT MATCHED THEN INSERT (id, i) VALUES (s.id, s.i)`,
	`DELETE FROM ivd.k WHERE i > '1 day' AND id > 8`,
	`DELETE FROM ivd.n WHERE i > '1 day'`,
	`SELECT id, i, d, ts, tz FROM ivd.k ORDER BY id`,
	`SELECT id, note, i FROM ivd.n ORDER BY id`,
	`SELECT pg_typeof(i)::text, count(*) FROM ivd.k GROUP BY 1`,
	`INSERT INTO ivd.n (id, i) VALUES (20, '1 fortnight')`,
	`SELECT id, i FROM ivd.n WHERE i = 'soon'`,
}

// TestIntervalDifferential runs intervalScript on lakesoul and on
// PostgreSQL (a scratch database of the catalog cluster) and compares each
// statement's command tag and rows as text, or its SQLSTATE.
func TestIntervalDifferential(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "intervalref")
	mustExec(t, ctx, ref, "SET TimeZone = 'UTC'")
	for _, q := range intervalScript {
		got, want := statementOutcome(ctx, lake, q), statementOutcome(ctx, ref, q)
		if got != want {
			t.Errorf("%s:\nlakesoul: %s\npostgres: %s", q, got, want)
		}
	}
}

// TestIntervalCopyAndBinary moves interval columns through every wire
// form, on lakesoul and on PostgreSQL side by side: binary parameters and
// results (pgx sends and reads interval_send's form), COPY FROM in text,
// CSV and binary, and COPY TO in each format — the bytes must be
// PostgreSQL's — read back by COPY FROM in the same format.
func TestIntervalCopyAndBinary(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "intervalcopyref")
	mustExec(t, ctx, ref, "SET TimeZone = 'UTC'")
	both := func(q string) {
		t.Helper()
		mustExec(t, ctx, lake, q)
		mustExec(t, ctx, ref, q)
	}
	both("CREATE SCHEMA ivc")
	both("CREATE TABLE ivc.t (id int, i interval, PRIMARY KEY (id))")
	both("CREATE TABLE ivc.a (id int, i interval)")

	// Binary parameters, one per field and sign, and the largest fields.
	params := []pgtype.Interval{
		{Months: 14, Days: 3, Microseconds: 14706000001, Valid: true},
		{Months: -1, Days: 40, Microseconds: -1, Valid: true},
		{Months: math.MaxInt32, Days: math.MinInt32, Microseconds: 9223372036854775, Valid: true},
		{},
	}
	for _, c := range []*pgx.Conn{lake, ref} {
		for n, p := range params {
			if _, err := c.Exec(ctx, "INSERT INTO ivc.t VALUES ($1, $2)", n+1, p); err != nil {
				t.Fatalf("insert %v: %v", p, err)
			}
		}
	}
	// Text parameters of unspecified type, read as PostgreSQL reads them.
	for _, c := range []*pgx.Conn{lake, ref} {
		for n, text := range []string{"P1Y-2M3DT-4H5M", "@ 2 days 3 hours ago", "-1 2:03:04"} {
			res := c.PgConn().ExecParams(ctx, "INSERT INTO ivc.t VALUES ($1, $2)",
				[][]byte{[]byte(fmt.Sprint(5 + n)), []byte(text)}, nil, nil, nil).Read()
			if res.Err != nil {
				t.Fatalf("text parameter %q: %v", text, res.Err)
			}
		}
	}
	rows, err := lake.Query(ctx, "SELECT i FROM ivc.t WHERE id < 5 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.Interval])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, params) {
		t.Errorf("binary round trip:\n got %v\nwant %v", got, params)
	}
	// An interval whose time part exceeds the in-memory form is refused,
	// never wrapped.
	if _, err := lake.Exec(ctx, "INSERT INTO ivc.t VALUES (9, $1)",
		pgtype.Interval{Microseconds: math.MaxInt64, Valid: true}); pgCode(err) != "22008" {
		t.Errorf("time part beyond the in-memory range: %v, want 22008", err)
	}

	copyOut := func(c *pgx.Conn, q string) string {
		t.Helper()
		var out bytes.Buffer
		if _, err := c.PgConn().CopyTo(ctx, &out, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out.String()
	}
	copyIn := func(c *pgx.Conn, q, data string) {
		t.Helper()
		if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	text := "10\t1 year 2 mons 3 days 04:05:06.000007\n11\tP1Y-2M3DT-4H5M\n12\t@ 2 days 3 hours ago\n13\t\\N\n14\t-1 days +02:00\n"
	csv := "20,\"1 day, 2 hours\"\n21,-00:00:00.5\n22,\n"
	for _, c := range []*pgx.Conn{lake, ref} {
		copyIn(c, "COPY ivc.a FROM STDIN", text)
		copyIn(c, "COPY ivc.a FROM STDIN (FORMAT csv)", csv)
	}
	for _, format := range []string{"text", "csv", "binary"} {
		q := "COPY (SELECT id, i FROM ivc.t UNION ALL SELECT id, i FROM ivc.a ORDER BY id) TO STDOUT (FORMAT " + format + ")"
		want := copyOut(ref, q)
		if got := copyOut(lake, q); got != want {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
		// What COPY TO wrote reads back in the same format.
		for _, c := range []*pgx.Conn{lake, ref} {
			mustExec(t, ctx, c, "CREATE TABLE ivc.back_"+format+" (id int, i interval)")
			copyIn(c, "COPY ivc.back_"+format+" FROM STDIN (FORMAT "+format+")", want)
		}
		q = "COPY (SELECT id, i FROM ivc.back_" + format + " ORDER BY id) TO STDOUT"
		if got, want := copyOut(lake, q), copyOut(ref, q); got != want {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}
}

// TestParseIntervalMatchesPostgreSQL compares pgwire.ParseInterval (the
// interval input of parameters and COPY) with PostgreSQL's interval_in
// over a generated corpus: every unit spelling with whole, fractional,
// signed and huge numbers, time fields, SQL-standard and ISO 8601 forms,
// combinations of two fields, and malformed text — under IntervalStyle
// postgres and sql_standard. Values and SQLSTATEs must be PostgreSQL's.
func TestParseIntervalMatchesPostgreSQL(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	ref := srv.catalogConn(t)
	numbers := []string{"1", "-1", "+2", "0", "1.5", "-0.25", ".5", "2.", "123456789", "2147483648", "99999999999999999999", "1e3"}
	units := []string{"microsecond", "microseconds", "us", "usec", "millisecond", "ms", "msecs", "second", "s", "sec", "secs",
		"minute", "m", "min", "mins", "hour", "h", "hr", "hours", "day", "d", "days", "week", "w", "weeks", "month", "mon",
		"mons", "months", "year", "y", "yr", "years", "decade", "dec", "century", "c", "millennium", "mil", "quarter", "fortnight"}
	var corpus []string
	for _, n := range numbers {
		corpus = append(corpus, n)
		for _, u := range units {
			corpus = append(corpus, n+" "+u, n+u, "@ "+n+" "+strings.ToUpper(u)+" ago")
		}
	}
	times := []string{"01:02", "1:02:03", "-01:02:03.5", "+04:05", "25:00", "00:60", "00:59:60", "00:59:61", "12:30.5",
		"1:2:3.0000005", "2562047788:00:54.775807", "-2562047788:00:54.775808", "99999999999:00"}
	corpus = append(corpus, times...)
	for _, a := range []string{"1 day", "-1 days", "1 year 2 mons", "3", "1-2", "-1-2", "+1-2"} {
		for _, b := range times[:5] {
			corpus = append(corpus, a+" "+b)
		}
	}
	corpus = append(corpus, "1-2", "-1-2", "1-12", "1--2", "1-+2", "1-", "2147483647-11", "1 2", "-1 2:03:04", "-1 -2:03:04",
		"1 day 2 days", "1 hour 01:00", "day", "1 day day", "ago 1 day", "1 ago", "1 day ago ago", "1 day at", "1 day on",
		"", " ", "@", "infinity", "-infinity", "now", "1 day, 2 hours", "1\tday", "1 DAY", "1.5.5", "1/2", "abc", "1 d2", "1 mon2", "1 x2", "2 h+1", "1 day -x",
		"178000000 years", "-178000000 years", "178956971 years", "2147483647 months 1 year", "-2147483648 days ago",
		"1.999999999 seconds", "0.0000005 seconds", "-0.0000005 seconds", "1.5 weeks", "1.1 months", "0.1 years", "1.01 years",
		"P1Y2M3DT4H5M6S", "P1Y", "PT1H", "P1.5Y", "P-1Y-2M", "PT-1.5S", "P1W", "P0.5D", "P", "PT", "P1", "P1Y2Y",
		"P0001-02-03T04:05:06", "P00010203T040506", "P1-2", "P1-2-3", "P1-2-3T4", "PT1:2", "PT1:2:3.5", "PT010203",
		"P1YT", "P1DT1H1M1.000001S", "p1y", "P1e2D", "P1e20D", "PT.5S", "P-.5D")
	for _, style := range []string{"postgres", "sql_standard"} {
		mustExec(t, ctx, ref, "SET intervalstyle = "+style)
		for _, text := range corpus {
			var want pgtype.Interval
			wantErr := ref.QueryRow(ctx, "SELECT $1::text::interval", text).Scan(&want)
			got, gotErr := pgwire.ParseInterval(text, style)
			switch {
			case wantErr != nil || gotErr != nil:
				if pgCode(wantErr) == "" || pgCode(wantErr) != sqlerr.Code(gotErr) {
					t.Errorf("%s %q: got %v, %v; postgres %v", style, text, got, gotErr, wantErr)
				}
			case got != want:
				t.Errorf("%s %q: got %+v, postgres %+v", style, text, got, want)
			}
		}
	}
	mustExec(t, ctx, ref, "RESET intervalstyle")
	t.Logf("%d texts in each style", len(corpus))
}
