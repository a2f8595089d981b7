package tests

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestLakeSoulPythonReadsIntervals reads tables with interval columns (a
// keyed one after an upsert, one without a key) with LakeSoul's Python
// package: the column is a 16-byte fixed-size binary holding
// interval_send's form (README, "LakeSoul compatibility"), and decoding
// those bytes gives exactly the months, days and microseconds the server
// returns in binary.
func TestLakeSoulPythonReadsIntervals(t *testing.T) {
	py := enginesPython(t, "lakesoul.catalog", "pyarrow")
	e := startLakeEnv(t, py)
	ctx := testCtx(t)
	c := e.admin
	mustExec(t, ctx, c,
		"CREATE SCHEMA engiv",
		`CREATE TABLE engiv.k (id bigint PRIMARY KEY, i interval) WITH (hash_bucket_num = 2)`,
		`INSERT INTO engiv.k VALUES (1, '1 year 2 mons 3 days 04:05:06.000007'), (2, '-1 days +02:00'), (3, NULL),
			(4, '@ 178000000 years ago'), (5, '00:00:00.000001')`,
		`INSERT INTO engiv.k VALUES (2, 'P1M-2DT3S')`,
		`CREATE TABLE engiv.n (id bigint, i interval)`,
		`INSERT INTO engiv.n SELECT id, i * 2 FROM engiv.k WHERE id <> 4`)
	for _, table := range []string{"k", "n"} {
		rows, err := c.Query(ctx, "SELECT id, i FROM engiv."+table+" ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var id int64
			var iv pgtype.Interval
			if err := rows.Scan(&id, &iv); err != nil {
				t.Fatal(err)
			}
			want = append(want, intervalRow(id, iv))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, line := range e.lakesoulRead(t, "engiv", table, nil) {
			id, raw, _ := strings.Cut(line, "|")
			if raw == "NULL" {
				got = append(got, id+"|NULL")
				continue
			}
			b, err := hex.DecodeString(strings.TrimPrefix(raw, `\x`))
			if err != nil || len(b) != 16 {
				t.Fatalf("%s: LakeSoul read %q, want 16 bytes", table, line)
			}
			var n int64
			fmt.Sscan(id, &n)
			got = append(got, intervalRow(n, pgtype.Interval{Microseconds: int64(binary.BigEndian.Uint64(b)),
				Days: int32(binary.BigEndian.Uint32(b[8:])), Months: int32(binary.BigEndian.Uint32(b[12:])), Valid: true}))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("engiv.%s: LakeSoul's Python reader:\n%s\nSELECT:\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func intervalRow(id int64, iv pgtype.Interval) string {
	if !iv.Valid {
		return fmt.Sprintf("%d|NULL", id)
	}
	return fmt.Sprintf("%d|%d mons %d days %d us", id, iv.Months, iv.Days, iv.Microseconds)
}

// TestFlightIntervals reads interval columns over Flight SQL, through a
// query and through a plain scan's unit tickets: the column is Arrow's
// month_day_nano interval with the values pgwire returns in binary.
func TestFlightIntervals(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	admin := s.connect(t)
	mustExec(t, ctx, admin, "CREATE SCHEMA fiv",
		`CREATE TABLE fiv.k (id bigint PRIMARY KEY, i interval) WITH (hash_bucket_num = 2)`,
		`INSERT INTO fiv.k VALUES (1, '1 year 2 mons 3 days 04:05:06.000007'), (2, '-1 days +02:00'), (3, NULL)`)
	cl, actx, err := flightClient(t, ctx, addr, "lakesoul", sharedPassword)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|14 mons 3 days 14706000007 us", "2|0 mons -1 days 7200000000 us", "3|NULL"}
	for _, q := range []string{"SELECT id, i FROM fiv.k ORDER BY id", "SELECT * FROM fiv.k"} {
		info, err := cl.Execute(actx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, ep := range info.Endpoint {
			rdr, err := cl.DoGet(actx, ep.Ticket)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for rdr.Next() {
				rec := rdr.RecordBatch()
				ids := rec.Column(0).(*array.Int64)
				ivs, ok := rec.Column(1).(*array.MonthDayNanoInterval)
				if !ok {
					t.Fatalf("%s: column i is %s, want month_day_nano_interval", q, rec.Column(1).DataType())
				}
				for r := range int(rec.NumRows()) {
					if ivs.IsNull(r) {
						got = append(got, fmt.Sprintf("%d|NULL", ids.Value(r)))
						continue
					}
					v := ivs.Value(r)
					got = append(got, intervalRow(ids.Value(r), pgtype.Interval{Months: v.Months, Days: v.Days,
						Microseconds: v.Nanoseconds / 1000, Valid: true}))
				}
			}
			if err := rdr.Err(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			rdr.Release()
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s over Flight SQL:\n%s\nwant:\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
