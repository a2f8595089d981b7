package pgwire

import (
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// encodeMsgs concatenates the wire form of frontend messages.
func encodeMsgs(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			panic(err)
		}
	}
	return b
}

// FuzzServerMessages feeds arbitrary bytes to an authenticated connection.
// The server must not panic, and must accept and serve a new connection
// afterwards.
func FuzzServerMessages(f *testing.F) {
	f.Add(encodeMsgs(&pgproto3.Query{String: "SELECT 1"}))
	f.Add(encodeMsgs(&pgproto3.Query{String: "GENERATE 3; BEGIN; FAIL; COMMIT"}, &pgproto3.Terminate{}))
	f.Add(encodeMsgs(
		&pgproto3.Parse{Name: "s", Query: "SELECT $1::int4, $2::text", ParameterOIDs: []uint32{23}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ParameterFormatCodes: []int16{1, 0},
			Parameters: [][]byte{{0, 0, 0, 1}, []byte("x")}, ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 1},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Sync{},
	))
	f.Add(encodeMsgs(
		&pgproto3.Parse{Query: "GENERATE 5"}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 2},
		&pgproto3.Flush{}, &pgproto3.Execute{}, &pgproto3.Sync{},
	))
	f.Add(encodeMsgs(&pgproto3.Parse{Query: "SELECT * FROM missing"}, &pgproto3.Bind{}, &pgproto3.Sync{}))
	f.Add(encodeMsgs(&pgproto3.FunctionCall{Function: 7}, &pgproto3.CopyData{Data: []byte("x")}))
	f.Add([]byte{'B', 0, 0, 0, 5, 0})
	f.Add([]byte{'Q', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("\x00\x00\x00\x08\x04\xd2\x16\x2f"))

	h := newHarness(f, func(c *Config) { c.MaxMessageSize = 1 << 20 })
	h.db.fuzzSafe = true

	f.Fuzz(func(t *testing.T, data []byte) {
		r := h.raw(t)
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, r.conn)
			close(drained)
		}()
		r.conn.Write(data) // the server may have hung up already
		r.conn.(*net.TCPConn).CloseWrite()
		<-drained // the server closes the connection once it sees EOF
		r.conn.Close()
		if n := h.logs.errorCount(); n != 0 {
			t.Fatalf("server logged %d errors (panics) for input %q:\n%s", n, data, h.logs.String())
		}
		next := h.raw(t)
		got := next.query("SELECT 1")
		if len(got) != 4 || got[1] != "DataRow 1" {
			t.Fatalf("new connection after input %q: %q", data, got)
		}
		next.conn.Close()
	})
}
