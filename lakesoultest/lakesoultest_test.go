package lakesoultest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/lakesoultest"
)

// TestStart: a test gets a working server from one call: its connection
// string logs in as the admin, and lake tables can be created, written and
// read over pgwire.
func TestStart(t *testing.T) {
	dsn := lakesoultest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE SCHEMA s",
		"CREATE TABLE s.t (id bigint, v text, PRIMARY KEY (id))",
		"INSERT INTO s.t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO s.t VALUES (1, 'c')",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var got string
	if err := conn.QueryRow(ctx, "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM s.t").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1=c,2=b" {
		t.Errorf("rows = %q, want 1=c,2=b", got)
	}
}
