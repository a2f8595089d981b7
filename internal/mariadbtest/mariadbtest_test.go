package mariadbtest

import (
	"context"
	"testing"

	"vitess.io/vitess/go/mysql"
)

// TestStart: a server starts with the binary log in ROW format and User can
// log in over TCP.
func TestStart(t *testing.T) {
	s := Start(t)
	c, err := mysql.Connect(context.Background(), s.Params())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.ExecuteFetch("SELECT @@binlog_format, @@log_bin", 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Rows[0][0].ToString() + " " + r.Rows[0][1].ToString(); got != "ROW 1" {
		t.Fatalf("binlog_format, log_bin = %s", got)
	}
}
