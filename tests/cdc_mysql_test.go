package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"vitess.io/vitess/go/mysql"

	"github.com/lakesoul-go/lakesoul/internal/mariadbtest"
)

// mysqlStrings runs a query on MariaDB and returns its rows as "a|b" strings.
func mysqlStrings(t *testing.T, my *mariadbtest.Server, q string) []string {
	t.Helper()
	_, rows := my.Query(t, q)
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = strings.Join(row, "|")
	}
	return out
}

// TestCDCMySQL: CREATE SUBSCRIPTION … CONNECTION 'mysql://…' over pgwire
// copies a MariaDB database and follows a stream of transfers; the server
// is killed with SIGKILL mid-stream and restarted: it resumes at the stored
// binary log position. A reader polling the lake always sees the source's
// invariants (the total, each account equal to its ledger, no ledger
// entry twice), and at the end the lake equals the source.
func TestCDCMySQL(t *testing.T) {
	requirePG(t)
	my := mariadbtest.Start(t)
	ctx := testCtx(t)
	const accounts, start = 100, 1000
	my.Exec(t,
		"CREATE DATABASE bank",
		"CREATE TABLE bank.accounts (id int PRIMARY KEY, balance bigint NOT NULL, owner varchar(20))",
		"CREATE TABLE bank.ledger (transfer int NOT NULL, from_id int NOT NULL, to_id int NOT NULL, amount bigint NOT NULL)",
	)
	for i := 1; i <= accounts; i++ {
		my.Exec(t, fmt.Sprintf("INSERT INTO bank.accounts VALUES (%d, %d, 'o%d')", i, start, i))
	}
	catURL := externalCatalog(t)
	base := testBaseDir(t)
	s, err := startServer(filepath.Join(base, "data"), "cdc-Secret1", "--catalog-url", catURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.stopT(t) }()
	c := s.connect(t)
	mustExec(t, ctx, c, "CREATE SUBSCRIPTION shop CONNECTION '"+my.URL()+"' PUBLICATION bank WITH (commit_interval = '100ms')")
	binlogPos := func() string {
		row := mysqlStrings(t, my, "SHOW MASTER STATUS")[0]
		f := strings.Split(row, "|")
		return f[0] + ":" + f[1]
	}
	waitPos := func(conn func() []string, want string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got := conn()
			if len(got) == 1 && got[0] != "" && atLeast(got[0], want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("subscription at %v, want %s", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	lakePos := func(lc func() (string, error)) func() []string {
		return func() []string {
			p, err := lc()
			if err != nil {
				return nil
			}
			return []string{p}
		}
	}
	reader := c
	posOf := lakePos(func() (string, error) {
		var p *string
		err := reader.QueryRow(ctx, "SELECT position FROM lakesoul.subscriptions WHERE name = 'shop'").Scan(&p)
		if p == nil {
			return "", err
		}
		return *p, err
	})
	waitPos(posOf, binlogPos())
	wantRows(t, "accounts after the copy", queryStrings(t, ctx, c, "SELECT id, balance, owner FROM bank.accounts ORDER BY id"),
		mysqlStrings(t, my, "SELECT id, balance, owner FROM bank.accounts ORDER BY id"))

	conn, err := mysql.Connect(ctx, my.Params())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	load := startBankLoad(accounts, 2, func(i, from, to, amount int) error {
		for _, q := range []string{"START TRANSACTION",
			fmt.Sprintf("UPDATE bank.accounts SET balance = balance - %d WHERE id = %d", amount, from),
			fmt.Sprintf("UPDATE bank.accounts SET balance = balance + %d WHERE id = %d", amount, to),
			fmt.Sprintf("INSERT INTO bank.ledger VALUES (%d, %d, %d, %d)", i, from, to, amount),
			"COMMIT"} {
			if _, err := conn.ExecuteFetch(q, 0, false); err != nil {
				return err
			}
		}
		return nil
	})
	var checks int
	check := func() {
		t.Helper()
		checkBank(t, ctx, reader, accounts, start, checks)
		checks++
	}
	load.waitFor(t, 300, check)
	// SIGKILL mid-stream, restart on the same data dir: the sync resumes.
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.exited
	before := load.transfers.Load()
	load.waitFor(t, before+200, nil)
	if s, err = startServer(filepath.Join(base, "data"), "cdc-Secret1", "--catalog-url", catURL); err != nil {
		t.Fatal(err)
	}
	reader = s.connect(t)
	load.waitFor(t, before+500, check)
	if err := load.finish(); err != nil {
		t.Fatal(err)
	}
	waitPos(posOf, binlogPos())
	check()
	t.Logf("%d transfers, %d consistent reads", load.transfers.Load(), checks)
	wantRows(t, "accounts", queryStrings(t, ctx, reader, "SELECT id, balance, owner FROM bank.accounts ORDER BY id"),
		mysqlStrings(t, my, "SELECT id, balance, owner FROM bank.accounts ORDER BY id"))
	wantRows(t, "ledger", queryStrings(t, ctx, reader, "SELECT transfer, from_id, to_id, amount FROM bank.ledger ORDER BY transfer"),
		mysqlStrings(t, my, "SELECT transfer, from_id, to_id, amount FROM bank.ledger ORDER BY transfer"))
	mustExec(t, ctx, reader, "DROP SUBSCRIPTION shop")
}

// atLeast compares binary log positions file:offset.
func atLeast(got, want string) bool {
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
