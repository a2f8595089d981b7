package cdc_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/cdc"
	"github.com/lakesoul-go/lakesoul/internal/mariadbtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// mysqlRows reads a MariaDB query's rows as sorted "col=value …" strings.
func mysqlRows(t *testing.T, my *mariadbtest.Server, q string) []string {
	t.Helper()
	names, rows := my.Query(t, q)
	var out []string
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = names[i] + "=" + v
		}
		out = append(out, strings.Join(cells, " "))
	}
	sort.Strings(out)
	return out
}

// waitMySQL waits until the subscription's position is at the source's
// current binary log position.
func (h *harness) waitMySQL(my *mariadbtest.Server, sub string) {
	h.t.Helper()
	rows := mysqlRows(h.t, my, "SHOW MASTER STATUS")
	var file, pos string
	for _, cell := range strings.Fields(rows[0]) {
		if v, ok := strings.CutPrefix(cell, "File="); ok {
			file = v
		}
		if v, ok := strings.CutPrefix(cell, "Position="); ok {
			pos = v
		}
	}
	want := file + ":" + pos
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := h.cat.SubscriptionByName(context.Background(), sub)
		if err != nil {
			h.t.Fatal(err)
		}
		if s.Position != "" && positionAtLeast(s.Position, want) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("subscription %s at %q, not at %s; %s", sub, s.Position, want, h.status(sub))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func positionAtLeast(got, want string) bool {
	gf, gp, _ := strings.Cut(got, ":")
	wf, wp, _ := strings.Cut(want, ":")
	if gf != wf {
		return gf > wf
	}
	var g, w int
	fmt.Sscan(gp, &g)
	fmt.Sscan(wp, &w)
	return g >= w
}

// TestMySQLSyncEndToEnd: a MariaDB database copied and followed: inserts,
// updates, deletes, key updates, TRUNCATE, ALTER TABLE (add, drop, widen),
// a new table, a rename that stops one table; a restarted service resumes
// from the stored position.
func TestMySQLSyncEndToEnd(t *testing.T) {
	my := mariadbtest.Start(t)
	h := newHarness(t)
	ctx := context.Background()
	my.Exec(t,
		"CREATE DATABASE shop",
		`CREATE TABLE shop.accounts (id int PRIMARY KEY, owner varchar(20), balance bigint, price decimal(10,2),
			born date, seen datetime(6), ts timestamp(3) NULL, kind enum('a','b''c'), flags set('x','y'),
			bin varbinary(10), u int unsigned, big bigint unsigned, f double, small tinyint)`,
		"CREATE TABLE shop.events (ev varchar(10), n int)",
		`INSERT INTO shop.accounts VALUES (1, 'one', 100, 1.50, '2020-01-02', '2026-01-02 03:04:05.123456', '2026-01-02 03:04:05.5',
			'b''c', 'x,y', 0x00ff, 4294967295, 18446744073709551615, 1.25, -5),
			(2, 'two', 200, NULL, NULL, NULL, NULL, 'a', '', NULL, 0, 0, -0.5, 127)`,
		"INSERT INTO shop.events VALUES ('a', 1)",
	)
	accounts := `SELECT id, owner, balance, TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM price)) AS price, born, DATE_FORMAT(seen, '%Y-%m-%dT%H:%i:%s.%f') AS seen, kind, flags,
		LOWER(HEX(bin)) AS bin, u, big, f, small FROM shop.accounts`
	lakeAccounts := func() []string {
		var out []string
		for _, r := range h.lake("shop", "accounts") {
			var cells []string
			for _, c := range strings.Fields(r) {
				switch {
				case strings.HasPrefix(c, "ts="):
					continue
				case strings.HasPrefix(c, "bin=") && c != "bin=NULL":
					c = "bin=" + hexOfBase64(t, strings.TrimPrefix(c, "bin="))
				case strings.HasPrefix(c, "seen=") && c != "seen=NULL":
					c = strings.TrimSuffix(c, "Z")
					if !strings.Contains(c, ".") {
						c += ".000000"
					}
				}
				cells = append(cells, c)
			}
			out = append(out, strings.Join(cells, " "))
		}
		sort.Strings(out)
		return out
	}
	if err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "shop_sync", Connection: my.URL(), Publications: []string{"shop"},
		Options: map[string]string{"commit_interval": "100ms"}}); err != nil {
		t.Fatal(err)
	}
	svc := cdc.Start(ctx, h.env, 1)
	h.waitMySQL(my, "shop_sync")
	h.same("after the copy", lakeAccounts(), mysqlRows(t, my, accounts))
	h.same("append table after the copy", h.lake("shop", "events"), mysqlRows(t, my, "SELECT ev, n FROM shop.events"))

	my.Exec(t,
		"UPDATE shop.accounts SET balance = balance + 1, kind = 'a', flags = 'y' WHERE id = 1",
		"INSERT INTO shop.accounts (id, owner, balance) VALUES (3, 'three', 300), (4, 'four', 400)",
		"DELETE FROM shop.accounts WHERE id = 2",
		"UPDATE shop.accounts SET id = 40 WHERE id = 4",
		"INSERT INTO shop.events VALUES ('b', 2)",
		"START TRANSACTION", "TRUNCATE shop.events", "INSERT INTO shop.events VALUES ('c', 3)", "COMMIT",
	)
	h.waitMySQL(my, "shop_sync")
	h.same("after DML", lakeAccounts(), mysqlRows(t, my, accounts))
	h.same("append table after TRUNCATE", h.lake("shop", "events"), mysqlRows(t, my, "SELECT ev, n FROM shop.events"))

	// A restarted service resumes at the stored position.
	svc.Close()
	my.Exec(t, "INSERT INTO shop.events VALUES ('d', 4)", "UPDATE shop.accounts SET owner = 'ONE' WHERE id = 1")
	svc = cdc.Start(ctx, h.env, 1)
	defer svc.Close()
	h.waitMySQL(my, "shop_sync")
	h.same("after a restart", lakeAccounts(), mysqlRows(t, my, accounts))
	h.same("append table after a restart", h.lake("shop", "events"), mysqlRows(t, my, "SELECT ev, n FROM shop.events"))

	// Schema changes.
	my.Exec(t,
		"ALTER TABLE shop.accounts ADD COLUMN region varchar(5) AFTER owner",
		"ALTER TABLE shop.accounts MODIFY owner varchar(40), MODIFY price decimal(14,2), DROP COLUMN small",
		"ALTER TABLE shop.events MODIFY n bigint",
		"INSERT INTO shop.accounts (id, owner, region, balance, price) VALUES (5, 'a much longer owner name', 'eu', 5, 123456789.12)",
		"INSERT INTO shop.events VALUES ('e', 9000000000)",
		"CREATE TABLE shop.items (sku varchar(10) PRIMARY KEY, qty int)",
		"INSERT INTO shop.items VALUES ('a', 1), ('b', 2)",
		"UPDATE shop.items SET qty = 3 WHERE sku = 'a'",
	)
	h.waitMySQL(my, "shop_sync")
	accounts2 := `SELECT id, owner, balance, TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM price)) AS price, born, DATE_FORMAT(seen, '%Y-%m-%dT%H:%i:%s.%f') AS seen, kind, flags,
		LOWER(HEX(bin)) AS bin, u, big, f, region FROM shop.accounts`
	h.same("after ALTER TABLE", lakeAccounts(), mysqlRows(t, my, accounts2))
	h.same("events after MODIFY", h.lake("shop", "events"), mysqlRows(t, my, "SELECT ev, n FROM shop.events"))
	h.same("a new table", h.lake("shop", "items"), mysqlRows(t, my, "SELECT sku, qty FROM shop.items"))

	// A rename stops that table; the others go on.
	my.Exec(t, "ALTER TABLE shop.items CHANGE qty quantity int", "INSERT INTO shop.items VALUES ('c', 1)",
		"INSERT INTO shop.events VALUES ('f', 6)")
	h.waitMySQL(my, "shop_sync")
	h.same("events go on", h.lake("shop", "events"), mysqlRows(t, my, "SELECT ev, n FROM shop.events"))
	if st := h.status("shop_sync"); !strings.Contains(st, "renamed") {
		t.Errorf("status %s, want the rename in last_error", st)
	}
}

// TestMySQLCreateErrors: bad MySQL sources fail CREATE SUBSCRIPTION with
// their SQLSTATE and leave nothing.
func TestMySQLCreateErrors(t *testing.T) {
	my := mariadbtest.Start(t)
	h := newHarness(t)
	ctx := context.Background()
	my.Exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.t (id int PRIMARY KEY)",
		"CREATE USER 'norepl'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO 'norepl'@'%'")
	cases := []struct{ name, conn, db, code string }{
		{"unreachable", "mysql://cdc:x@127.0.0.1:1", "shop", sqlerr.UnableToConnect},
		{"wrong password", fmt.Sprintf("mysql://cdc:wrong@127.0.0.1:%d", my.Port), "shop", sqlerr.UnableToConnect},
		{"no replication rights", fmt.Sprintf("mysql://norepl:pw@127.0.0.1:%d", my.Port), "shop", sqlerr.InsufficientPrivilege},
		{"unknown database", my.URL(), "nope", sqlerr.UndefinedObject},
	}
	for _, c := range cases {
		err := cdc.Create(ctx, h.env, cdc.CreateSpec{Name: "m", Connection: c.conn, Publications: []string{c.db}})
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", c.name, got, err, c.code)
		}
	}
	if _, err := h.cat.SubscriptionByName(ctx, "m"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Errorf("a failed CREATE SUBSCRIPTION left a subscription: %v", err)
	}
}

func hexOfBase64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("binary value %q: %v", s, err)
	}
	return hex.EncodeToString(b)
}
