package tests

import (
	"encoding/hex"
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

	// Binary COPY TO frames its messages as PostgreSQL does: the file
	// header in the first row's CopyData, or with no rows in the
	// trailer's (the ADBC PostgreSQL driver reads rows right after the
	// header of the message that holds it).
	header := "5047434f50590aff0d0a000000000000000000"
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"COPY (SELECT id::int8 FROM cpr.t ORDER BY id) TO STDOUT (FORMAT binary)",
			[]string{header + "0001000000080000000000000001", "0001000000080000000000000002", "ffff"}},
		{"COPY (SELECT id::int8 FROM cpr.t WHERE false) TO STDOUT (FORMAT binary)", []string{header + "ffff"}},
	} {
		send(&pgproto3.Query{String: tc.query})
		var frames []string
		for { // (a message's Data is reused by the next Receive)
			m, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := m.(*pgproto3.CopyData); ok {
				frames = append(frames, hex.EncodeToString(d.Data))
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		if !reflect.DeepEqual(frames, tc.want) {
			t.Errorf("%s: CopyData messages\n%q, want\n%q", tc.query, frames, tc.want)
		}
	}
	send(&pgproto3.Terminate{})
}

func sameType(a, b pgproto3.BackendMessage) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }
