package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dbSeq numbers the databases this binary creates.
var dbSeq atomic.Int64

// DSN returns the DSN of a new, empty database for this test, unique per
// call; see the package doc for which server holds it. The database is
// dropped (best effort, with its sessions) when the test ends; close pools
// first or let their own t.Cleanup, registered later, run first.
func DSN(t testing.TB) string {
	t.Helper()
	if admin := os.Getenv(EnvCatalogURL); admin != "" {
		return freshDatabase(t, admin, func(db string) string { return withDatabase(admin, db) })
	}
	c := sharedCluster(t)
	return freshDatabase(t, c.ConnString("postgres"), c.ConnString)
}

// freshDatabase creates a uniquely named database through admin and
// schedules its drop.
func freshDatabase(t testing.TB, admin string, dsnFor func(db string) string) string {
	t.Helper()
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := fmt.Sprintf("lakesoul_test_%d_%d_%s", os.Getpid(), dbSeq.Add(1), hex.EncodeToString(r[:]))
	ctx := context.Background()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42601" { // syntax_error: server older than 13
			err = adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name)
		}
		if err != nil {
			t.Logf("pgtest: drop test database %s: %v", name, err)
		}
	})
	return dsnFor(name)
}

// adminExec runs one statement on a short-lived connection.
func adminExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns dsn (a URL or keyword/value DSN) naming database db
// instead of its own. db must need no quoting.
func withDatabase(dsn, db string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.Path, u.RawPath = "/"+db, ""
			q := u.Query()
			if q.Has("dbname") {
				q.Del("dbname")
				u.RawQuery = q.Encode()
			}
			return u.String()
		}
	}
	// In a keyword/value string the last occurrence of a keyword wins.
	return dsn + " dbname=" + db
}
