package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// TestPgxAuth checks SCRAM-SHA-256 authentication: the server asks for
// SASL, the right password works, a wrong one fails with 28P01 while other
// sessions keep being served.
func TestPgxAuth(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)

	// The server's first answer to a startup message is an
	// AuthenticationSASL offering SCRAM-SHA-256 (no cleartext or MD5).
	nc, err := (&net.Dialer{Timeout: 30 * time.Second}).DialContext(ctx, "tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Minute))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": adminRole, "database": database}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if sasl, ok := msg.(*pgproto3.AuthenticationSASL); !ok {
		t.Errorf("first message after startup: %T %+v, want AuthenticationSASL", msg, msg)
	} else if !slices.Contains(sasl.AuthMechanisms, "SCRAM-SHA-256") {
		t.Errorf("SASL mechanisms %q lack SCRAM-SHA-256", sasl.AuthMechanisms)
	}
	nc.Close()

	// A session that stays open across the failed attempts.
	other := srv.connect(t)

	for _, tc := range []struct{ user, password string }{
		{adminRole, "wrong-password"},
		{adminRole, ""},
		{"no_such_role", "whatever"},
	} {
		c, err := pgx.Connect(ctx, srv.dsn(tc.user, tc.password, database))
		if err == nil {
			c.Close(ctx)
			t.Errorf("connect as %q with password %q succeeded", tc.user, tc.password)
			continue
		}
		if code := pgCode(err); code != "28P01" {
			t.Errorf("connect as %q with password %q: SQLSTATE %q (%v), want 28P01", tc.user, tc.password, code, err)
		}
	}

	// The server still serves: the open session and a new one.
	var one int
	if err := other.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("open session after failed logins: %v, %d", err, one)
	}
	c := srv.connect(t)
	var user string
	if err := c.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != adminRole {
		t.Errorf("SELECT current_user = %q, %v; want %q", user, err, adminRole)
	}
}

// TestPgxExtended covers the extended protocol: parameters in queries and
// inserts, parameter types, binary results, prepared statements seeing
// newer snapshots, and batches. The subtests use their own tables so that
// one failing does not hide the others' results.
func TestPgxExtended(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)

	// Written with literals, so that the reading subtests do not depend on
	// parameterised inserts working.
	mustExec(t, ctx, c,
		"CREATE SCHEMA px",
		"CREATE TABLE px.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d)",
		"INSERT INTO px.t VALUES (1, 'one', 1.25, '2026-01-01'), (2, 'O''Brien é✓', -0.5, '1999-12-31'), "+
			"(3, NULL, 1e300, '2026-01-01'), (4, 'four', 4.0, '2026-01-02'), (5, 'five', 5.0, '2026-01-02')",
		"INSERT INTO px.t (id, v, d) VALUES (4, 44.0, '2026-01-02')")
	str := func(s string) *string { return &s }
	base := []pxRow{
		{1, str("one"), 1.25, date(2026, 1, 1)},
		{2, str("O'Brien é✓"), -0.5, date(1999, 12, 31)},
		{3, nil, 1e300, date(2026, 1, 1)},
		{4, str("four"), 44, date(2026, 1, 2)},
		{5, str("five"), 5, date(2026, 1, 2)},
	}

	// Every row read back by a $1 key parameter, in each of pgx's query
	// modes: prepared and described (binary results), described then
	// executed, executed with parameter types taken from the Go values, and
	// the simple protocol (client-side interpolation).
	t.Run("QueryParams", func(t *testing.T) {
		for _, mode := range pgxModes {
			checkPxRows(t, ctx, c, mode, base)
			// A date parameter on the partition column, a float on a
			// non-key column, a text on a non-key column. (Untyped array
			// parameters such as `id = ANY($1)` need PostgreSQL's parameter
			// type inference; they are tracked with the wire-compatibility issue.)
			for _, q := range []struct {
				sql  string
				args []any
				want []string
			}{
				{"SELECT id FROM px.t WHERE d = $1 ORDER BY id", []any{date(2026, 1, 1)}, []string{"1", "3"}},
				{"SELECT id, k FROM px.t WHERE v > $1 AND d = $2 ORDER BY id", []any{2.0, date(2026, 1, 2)}, []string{"4|four", "5|five"}},
				{"SELECT id FROM px.t WHERE k = $1", []any{"O'Brien é✓"}, []string{"2"}},
				{"SELECT id FROM px.t WHERE k IS NOT DISTINCT FROM $1", []any{nil}, []string{"3"}},
				{"SELECT id + $1::bigint FROM px.t WHERE id = 1", []any{int64(41)}, []string{"42"}},
			} {
				got, err := tryQueryStrings(ctx, c, q.sql, append([]any{mode}, q.args...)...)
				if err != nil {
					t.Errorf("%v: %s %v: %v", mode, q.sql, q.args, err)
					continue
				}
				wantRows(t, fmt.Sprintf("%v: %s %v", mode, q.sql, q.args), got, q.want)
			}
		}
	})

	// INSERT with $1..$n into a lake table, then read back.
	t.Run("InsertParams", func(t *testing.T) {
		mustExec(t, ctx, c, "CREATE TABLE px.ins (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d)")
		ins := "INSERT INTO px.ins (id, k, v, d) VALUES ($1, $2, $3, $4)"
		var want []pxRow
		for i, mode := range pgxModes {
			id := int64(10 * (i + 1))
			r := pxRow{id, str(fmt.Sprintf("k%d 'é'", id)), float64(id) + 0.5, date(2026, 3, i+1)}
			tag, err := c.Exec(ctx, ins, mode, r.id, r.k, r.v, r.d)
			if err != nil {
				t.Errorf("%v: %s: %v", mode, ins, err)
				continue
			}
			if tag.String() != "INSERT 0 1" {
				t.Errorf("%v: insert: tag %q, want INSERT 0 1", mode, tag)
			}
			want = append(want, r)
			// Two rows at once, one with a NULL, then a partial upsert of
			// the first by parameters: k keeps its value.
			tag, err = c.Exec(ctx, "INSERT INTO px.ins VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)", mode,
				id+1, "two", 2.0, date(2026, 3, i+1), id+2, nil, 3.0, date(2026, 3, i+1))
			if err != nil {
				t.Errorf("%v: two-row insert: %v", mode, err)
				continue
			}
			if tag.String() != "INSERT 0 2" {
				t.Errorf("%v: two-row insert: tag %q, want INSERT 0 2", mode, tag)
			}
			if _, err := c.Exec(ctx, "INSERT INTO px.ins (id, v, d) VALUES ($1, $2, $3)", mode, id+1, 22.0, date(2026, 3, i+1)); err != nil {
				t.Errorf("%v: partial upsert: %v", mode, err)
				continue
			}
			want = append(want, pxRow{id + 1, str("two"), 22, date(2026, 3, i+1)}, pxRow{id + 2, nil, 3, date(2026, 3, i+1)})
		}
		got := queryStrings(t, ctx, c, "SELECT id, k, v, d FROM px.ins ORDER BY id")
		var wantS []string
		for _, r := range want {
			wantS = append(wantS, fmt.Sprintf("%d|%v|%s|%s", r.id, formatValue(deref(r.k)), formatValue(r.v), formatValue(r.d)))
		}
		wantRows(t, "px.ins after parameterised inserts", got, wantS)

		// The same in a batch.
		b := &pgx.Batch{}
		b.Queue("INSERT INTO px.ins (id, k, v, d) VALUES ($1, $2, $3, $4)", int64(1000), "batch", 1.0, date(2026, 4, 1))
		b.Queue("SELECT k FROM px.ins WHERE id = $1", int64(1000))
		br := c.SendBatch(ctx, b)
		if tag, err := br.Exec(); err != nil || tag.String() != "INSERT 0 1" {
			t.Errorf("batch: parameterised insert: %q, %v", tag, err)
		}
		var k string
		if err := br.QueryRow().Scan(&k); err != nil || k != "batch" {
			t.Errorf("batch: read back: %q, %v; want batch", k, err)
		}
		if err := br.Close(); err != nil {
			t.Errorf("batch: %v", err)
		}
	})

	// How parameters of each declared type (0 = let the server infer) are
	// read, compared with what PostgreSQL answers; on a query the catalog
	// answers and on one over a lake table.
	t.Run("ParamTypes", func(t *testing.T) {
		mustExec(t, ctx, c, "SET TimeZone = 'UTC'")
		const ts = "2026-01-01 00:00:00Z"
		for _, tc := range []struct {
			sql   string
			value string
			oid   uint32
			want  []string
		}{
			{"SELECT $1::date", ts, 0, []string{"2026-01-01"}},
			{"SELECT $1::date", ts, 25, []string{"2026-01-01"}},
			{"SELECT $1::date", ts, 1114, []string{"2026-01-01"}},
			{"SELECT $1::date", ts, 1184, []string{"2026-01-01"}},
			{"SELECT $1::text", ts, 1114, []string{"2026-01-01 00:00:00"}},
			{"SELECT $1::text", ts, 1184, []string{"2026-01-01 00:00:00+00"}},
			{"SELECT $1::bigint + 1", "41", 20, []string{"42"}},
			{"SELECT id FROM px.t WHERE d = $1::date ORDER BY id", ts, 0, []string{"1", "3"}},
			{"SELECT id FROM px.t WHERE d = $1::date ORDER BY id", ts, 1114, []string{"1", "3"}},
			{"SELECT id FROM px.t WHERE d = $1::date ORDER BY id", ts, 1184, []string{"1", "3"}},
			{"SELECT id FROM px.t WHERE d = $1 ORDER BY id", "2026-01-01", 1082, []string{"1", "3"}},
			{"SELECT $1::text FROM px.t WHERE id = 1", ts, 1184, []string{"2026-01-01 00:00:00+00"}},
			{"SELECT $1::text FROM px.t WHERE id = 1", ts, 1114, []string{"2026-01-01 00:00:00"}},
			{"SELECT id FROM px.t WHERE v = $1", "-0.5", 701, []string{"2"}},
			{"SELECT id FROM px.t WHERE id = $1", "5", 20, []string{"5"}},
			{"SELECT id FROM px.t WHERE id = $1", "5", 0, []string{"5"}},
		} {
			res := c.PgConn().ExecParams(ctx, tc.sql, [][]byte{[]byte(tc.value)}, []uint32{tc.oid}, nil, nil).Read()
			what := fmt.Sprintf("%s with $1 = %q of type %d", tc.sql, tc.value, tc.oid)
			if res.Err != nil {
				t.Errorf("%s: %v", what, res.Err)
				continue
			}
			var got []string
			for _, r := range res.Rows {
				got = append(got, string(r[0]))
			}
			wantRows(t, what, got, tc.want)
		}
	})

	// Binary results, decoded here by hand: int8, float8, text, date.
	t.Run("BinaryResults", func(t *testing.T) {
		res := c.PgConn().ExecParams(ctx, "SELECT id, v, k, d FROM px.t WHERE id = $1",
			[][]byte{[]byte("2")}, []uint32{20}, []int16{0}, []int16{1, 1, 1, 1}).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if len(res.Rows) != 1 || len(res.FieldDescriptions) != 4 {
			t.Fatalf("binary select: %d rows, %d fields; want 1, 4", len(res.Rows), len(res.FieldDescriptions))
		}
		for i, wantOID := range []uint32{20, 701, 25, 1082} {
			fd := res.FieldDescriptions[i]
			if fd.DataTypeOID != wantOID || fd.Format != 1 {
				t.Errorf("column %s: type %d format %d, want type %d format 1", fd.Name, fd.DataTypeOID, fd.Format, wantOID)
			}
		}
		r := res.Rows[0]
		if len(r[0]) != 8 || int64(binary.BigEndian.Uint64(r[0])) != 2 {
			t.Errorf("binary int8: %x, want 0000000000000002", r[0])
		}
		if len(r[1]) != 8 || math.Float64frombits(binary.BigEndian.Uint64(r[1])) != -0.5 {
			t.Errorf("binary float8: %x, want bfe0000000000000 (-0.5)", r[1])
		}
		if string(r[2]) != "O'Brien é✓" {
			t.Errorf("binary text: %q", r[2])
		}
		// date: days since 2000-01-01; 1999-12-31 is -1.
		if len(r[3]) != 4 || int32(binary.BigEndian.Uint32(r[3])) != -1 {
			t.Errorf("binary date: %x, want ffffffff (-1)", r[3])
		}
		// A NULL and a large double, binary too.
		res = c.PgConn().ExecParams(ctx, "SELECT k, v FROM px.t WHERE id = 3", nil, nil, nil, []int16{1, 1}).Read()
		if res.Err != nil || len(res.Rows) != 1 {
			t.Fatalf("binary select id 3: %v, %d rows", res.Err, len(res.Rows))
		}
		if res.Rows[0][0] != nil {
			t.Errorf("binary NULL text: %x, want NULL", res.Rows[0][0])
		}
		if v := res.Rows[0][1]; len(v) != 8 || math.Float64frombits(binary.BigEndian.Uint64(v)) != 1e300 {
			t.Errorf("binary float8: %x, want 1e300", v)
		}
	})

	// A prepared statement executed twice sees the newer snapshot the
	// second time.
	t.Run("PreparedSnapshot", func(t *testing.T) {
		mustExec(t, ctx, c,
			"CREATE TABLE px.snap (id bigint PRIMARY KEY, v double precision)",
			"INSERT INTO px.snap VALUES (1, 1.0), (2, 2.0)")
		if _, err := c.Prepare(ctx, "snap_stats", "SELECT count(*), max(id), sum(v) FROM px.snap WHERE id >= $1"); err != nil {
			t.Fatal(err)
		}
		// Writes go through another session, so nothing session-local can
		// explain what the statement sees.
		other := srv.connect(t)
		for i, step := range []struct {
			write  string
			n, max int64
			sum    float64
		}{
			{"", 2, 2, 3},
			{"INSERT INTO px.snap VALUES (3, 30.0)", 3, 3, 33},
			{"INSERT INTO px.snap VALUES (1, 100.0)", 3, 3, 132}, // upsert
		} {
			if step.write != "" {
				mustExec(t, ctx, other, step.write)
			}
			var n, maxID int64
			var sum float64
			if err := c.QueryRow(ctx, "snap_stats", int64(0)).Scan(&n, &maxID, &sum); err != nil {
				t.Fatal(err)
			}
			if n != step.n || maxID != step.max || sum != step.sum {
				t.Errorf("execution %d (after %q): count %d max %d sum %v; want %d %d %v",
					i+1, step.write, n, maxID, sum, step.n, step.max, step.sum)
			}
		}
		// pgx's statement cache reuses its own prepared statement too.
		for want := int64(3); want <= 4; want++ {
			if n := countRows(t, ctx, c, "px.snap"); n != want {
				t.Errorf("cached count(*): %d, want %d", n, want)
			}
			mustExec(t, ctx, other, "INSERT INTO px.snap VALUES (4, 4.0)")
		}
	})

	// A batch of several statements, run in order, each seeing the
	// previous ones' writes.
	t.Run("Batch", func(t *testing.T) {
		mustExec(t, ctx, c, "CREATE TABLE px.batch (id bigint PRIMARY KEY, k text)")
		b := &pgx.Batch{}
		b.Queue("INSERT INTO px.batch VALUES (1, 'a'), (2, 'b')")
		b.Queue("SELECT count(*) FROM px.batch WHERE id >= $1", int64(1))
		b.Queue("INSERT INTO px.batch VALUES (2, 'bb'), (3, 'c')")
		b.Queue("SELECT k FROM px.batch WHERE id = $1", int64(2))
		b.Queue("SELECT id, k FROM px.batch ORDER BY id")
		b.Queue("SELECT count(*) FROM px.t")
		br := c.SendBatch(ctx, b)
		if tag, err := br.Exec(); err != nil || tag.String() != "INSERT 0 2" {
			t.Errorf("batch insert 1: %q, %v", tag, err)
		}
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil || n != 2 {
			t.Errorf("batch count: %d, %v; want 2", n, err)
		}
		if tag, err := br.Exec(); err != nil || tag.String() != "INSERT 0 2" {
			t.Errorf("batch insert 2: %q, %v", tag, err)
		}
		var k string
		if err := br.QueryRow().Scan(&k); err != nil || k != "bb" {
			t.Errorf("batch select k: %q, %v; want bb", k, err)
		}
		rows, err := br.Query()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id int64
			var k string
			if err := rows.Scan(&id, &k); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d|%s", id, k))
		}
		if err := rows.Err(); err != nil {
			t.Error(err)
		}
		rows.Close()
		wantRows(t, "batch select all", got, []string{"1|a", "2|bb", "3|c"})
		if err := br.QueryRow().Scan(&n); err != nil || n != 5 {
			t.Errorf("batch count px.t: %d, %v; want 5", n, err)
		}
		if err := br.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// pgxModes are pgx's ways of running a query.
var pgxModes = []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}

type pxRow struct {
	id int64
	k  *string
	v  float64
	d  time.Time
}

// checkPxRows reads each row of px.t by its key in mode and compares.
func checkPxRows(t *testing.T, ctx context.Context, c *pgx.Conn, mode pgx.QueryExecMode, rows []pxRow) {
	t.Helper()
	for _, want := range rows {
		var got pxRow
		err := c.QueryRow(ctx, "SELECT id, k, v, d FROM px.t WHERE id = $1", mode, want.id).
			Scan(&got.id, &got.k, &got.v, &got.d)
		if err != nil {
			t.Errorf("%v: select id %d: %v", mode, want.id, err)
			continue
		}
		if got.id != want.id || (got.k == nil) != (want.k == nil) || (got.k != nil && *got.k != *want.k) ||
			got.v != want.v || !got.d.Equal(want.d) {
			t.Errorf("%v: id %d: got (%d, %v, %v, %v), want (%d, %v, %v, %v)", mode, want.id,
				got.id, deref(got.k), got.v, got.d, want.id, deref(want.k), want.v, want.d)
		}
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
