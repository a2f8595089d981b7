package tests

import (
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestCopyProtocolRaw drives the COPY sub-protocol message by message: COPY
// through the extended protocol (Parse/Bind/Execute, CopyData, CopyDone,
// Sync), and an unexpected message in the middle of COPY FROM STDIN, which
// fails the COPY with 08P01, commits nothing and leaves the connection usable.
func TestCopyProtocolRaw(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cpr", "CREATE TABLE cpr.t (id int, v text)")
	hc, err := c.PgConn().Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Conn.Close()
	hc.Conn.SetDeadline(time.Now().Add(time.Minute))
	fe := hc.Frontend
	send := func(msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// expect reads messages up to and including one of type want's type.
	expect := func(want ...pgproto3.BackendMessage) []pgproto3.BackendMessage {
		t.Helper()
		var got []pgproto3.BackendMessage
		for _, w := range want {
			for {
				m, err := fe.Receive()
				if err != nil {
					t.Fatalf("receive: %v (got so far %T)", err, got)
				}
				got = append(got, m)
				if e, ok := m.(*pgproto3.ErrorResponse); ok {
					if _, wantErr := w.(*pgproto3.ErrorResponse); !wantErr {
						t.Fatalf("unexpected error %s: %s", e.Code, e.Message)
					}
				}
				if sameType(m, w) {
					break
				}
			}
		}
		return got
	}

	// Extended protocol.
	send(&pgproto3.Parse{Query: "COPY cpr.t FROM STDIN (FORMAT csv)"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{})
	got := expect(&pgproto3.ParseComplete{}, &pgproto3.BindComplete{}, &pgproto3.NoData{}, &pgproto3.CopyInResponse{})
	if r := got[len(got)-1].(*pgproto3.CopyInResponse); len(r.ColumnFormatCodes) != 2 || r.OverallFormat != 0 {
		t.Errorf("CopyInResponse %+v", r)
	}
	send(&pgproto3.CopyData{Data: []byte("1,a\n2,")}, &pgproto3.CopyData{Data: []byte("b\n")}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
	got = expect(&pgproto3.CommandComplete{}, &pgproto3.ReadyForQuery{})
	if cc := got[0].(*pgproto3.CommandComplete); string(cc.CommandTag) != "COPY 2" {
		t.Errorf("tag %q", cc.CommandTag)
	}

	// An unexpected message during COPY FROM STDIN.
	send(&pgproto3.Query{String: "COPY cpr.t FROM STDIN"})
	expect(&pgproto3.CopyInResponse{})
	send(&pgproto3.CopyData{Data: []byte("3\tc\n")}, &pgproto3.Query{String: "SELECT 1"})
	got = expect(&pgproto3.ErrorResponse{}, &pgproto3.ReadyForQuery{})
	if e := got[0].(*pgproto3.ErrorResponse); e.Code != "08P01" {
		t.Errorf("unexpected message during COPY: %s %s", e.Code, e.Message)
	}
	// A CopyDone that arrives after the failure is ignored.
	send(&pgproto3.CopyDone{}, &pgproto3.Query{String: "SELECT count(*) FROM cpr.t"})
	got = expect(&pgproto3.DataRow{}, &pgproto3.ReadyForQuery{})
	for _, m := range got {
		if d, ok := m.(*pgproto3.DataRow); ok && string(d.Values[0]) != "2" {
			t.Errorf("rows after the failed COPY: %s, want 2", d.Values[0])
		}
	}
	// Binary COPY TO: the 19-byte header comes in the first row's CopyData
	// message (psycopg 3's copy.rows() reads it so), and in the trailer's
	// when there is no row, as PostgreSQL sends them.
	for _, q := range []struct {
		sql  string
		rows int
	}{{"COPY (SELECT id FROM cpr.t ORDER BY id) TO STDOUT (FORMAT binary)", 2}, {"COPY (SELECT id FROM cpr.t WHERE false) TO STDOUT (FORMAT binary)", 0}} {
		send(&pgproto3.Query{String: q.sql})
		var data [][]byte // copied as received: the frontend reuses its messages
		for done := false; !done; {
			m, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := m.(type) {
			case *pgproto3.CopyData:
				data = append(data, append([]byte(nil), m.Data...))
			case *pgproto3.ErrorResponse:
				t.Fatalf("%s: %s", q.sql, m.Message)
			case *pgproto3.ReadyForQuery:
				done = true
			}
		}
		if len(data) != max(q.rows, 1)+min(q.rows, 1) {
			t.Fatalf("%s: %d CopyData messages, want %d rows and a trailer", q.sql, len(data), q.rows)
		}
		hdr := "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"
		if len(data[0]) <= 19 || string(data[0][:19]) != hdr {
			t.Fatalf("%s: first CopyData %q does not start with the header and hold more", q.sql, data[0])
		}
		if q.rows > 0 && string(data[0][19:21]) != "\x00\x01" {
			t.Fatalf("%s: first CopyData %q: no row after the header", q.sql, data[0])
		}
		if last := data[len(data)-1]; string(last[len(last)-2:]) != "\xff\xff" {
			t.Fatalf("%s: last CopyData %q is no trailer", q.sql, last)
		}
	}
	send(&pgproto3.Terminate{})
}

func sameType(a, b pgproto3.BackendMessage) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }
