package catalog_test

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// scramKeys derives what pgwire recovers from a SCRAM login of password:
// ClientKey, and the verifier's ServerKey (read from pg_authid).
func scramKeys(t *testing.T, owner *pgx.Conn, role, password string) (clientKey, serverKey []byte) {
	t.Helper()
	var v string
	if err := owner.QueryRow(context.Background(), "SELECT rolpassword FROM pg_authid WHERE rolname = $1", role).Scan(&v); err != nil {
		t.Fatal(err)
	}
	// SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>
	rest := strings.TrimPrefix(v, "SCRAM-SHA-256$")
	params, keys, _ := strings.Cut(rest, "$")
	iterStr, saltB64, _ := strings.Cut(params, ":")
	_, serverB64, _ := strings.Cut(keys, ":")
	iter, _ := strconv.Atoi(iterStr)
	salt, _ := base64.StdEncoding.DecodeString(saltB64)
	serverKey, _ = base64.StdEncoding.DecodeString(serverB64)
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	h := hmac.New(sha256.New, salted)
	h.Write([]byte("Client Key"))
	return h.Sum(nil), serverKey
}

// TestUserLoginWithSCRAMKeys: a catalog that demands scram-sha-256 lets a
// user in with the keys a pgwire login yields (no password), and with the
// password; a wrong key or a verifier that is not the catalog's is refused;
// the session's login role is the user, so role switches stay within it.
func TestUserLoginWithSCRAMKeys(t *testing.T) {
	ctx := context.Background()
	cluster := pgtest.SCRAMCluster(t)
	dsn := cluster.ConnString("postgres")
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	owner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	if _, err := owner.Exec(ctx, "SET password_encryption = 'scram-sha-256'; CREATE ROLE keyuser LOGIN PASSWORD 'key-user-pw'"); err != nil {
		t.Fatal(err)
	}
	ck, sk := scramKeys(t, owner, "keyuser", "key-user-pw")

	who := func(cred catalog.Credential) (string, error) {
		conn, err := c.AcquireAs(ctx, "keyuser", cred)
		if err != nil {
			return "", err
		}
		defer conn.Release()
		var cu, su string
		err = conn.QueryRow(ctx, "SELECT current_user, session_user").Scan(&cu, &su)
		return cu + "/" + su, err
	}
	if got, err := who(catalog.Credential{SCRAMClientKey: ck, SCRAMServerKey: sk}); err != nil || got != "keyuser/keyuser" {
		t.Fatalf("key login: %q, %v", got, err)
	}
	if got, err := who(catalog.Credential{Password: "key-user-pw"}); err != nil || got != "keyuser/keyuser" {
		t.Fatalf("password login: %q, %v", got, err)
	}
	bad := append([]byte(nil), ck...)
	bad[0] ^= 1
	if _, err := who(catalog.Credential{SCRAMClientKey: bad, SCRAMServerKey: sk}); pgCode(err) != "28P01" {
		t.Fatalf("wrong ClientKey: %v, want 28P01", err)
	}
	badServer := append([]byte(nil), sk...)
	badServer[0] ^= 1
	if _, err := who(catalog.Credential{SCRAMClientKey: ck, SCRAMServerKey: badServer}); err == nil ||
		!strings.Contains(err.Error(), "server signature") {
		t.Fatalf("catalog with another verifier: %v, want a signature mismatch", err)
	}
	if _, err := who(catalog.Credential{}); pgCode(err) != "28P01" {
		t.Fatalf("no secret: %v, want 28P01", err)
	}

	// Role switches are checked against the login: RESET ROLE, or setting
	// role 'none' from a function, gives back keyuser, not the owner.
	conn, err := c.AcquireAs(ctx, "keyuser", catalog.Credential{SCRAMClientKey: ck, SCRAMServerKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	var cu string
	if err := conn.QueryRow(ctx, "SELECT set_config('role', 'none', false), current_user").Scan(new(string), &cu); err != nil || cu != "keyuser" {
		t.Fatalf("after role none: %q, %v", cu, err)
	}
	if _, err := conn.Exec(ctx, "SELECT rolpassword FROM pg_authid"); pgCode(err) != "42501" {
		t.Fatalf("pg_authid from a user session: %v, want 42501", err)
	}
	if _, err := conn.Exec(ctx, "SET ROLE "+cluster.SuperUser()); pgCode(err) != "42501" {
		t.Fatalf("SET ROLE superuser: %v, want 42501", err)
	}
	// Session state does not outlive the connection's use.
	if _, err := conn.Exec(ctx, "SELECT set_config('lakesoul_test.leak', 'yes', false)"); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	for range 3 { // the pool may hand out another connection first
		conn, err := c.AcquireAs(ctx, "keyuser", catalog.Credential{SCRAMClientKey: ck, SCRAMServerKey: sk})
		if err != nil {
			t.Fatal(err)
		}
		var leak *string
		err = conn.QueryRow(ctx, "SELECT current_setting('lakesoul_test.leak', true)").Scan(&leak)
		conn.Release()
		if err != nil {
			t.Fatal(err)
		}
		if leak != nil && *leak != "" {
			t.Fatalf("a setting leaked into a reused connection: %q", *leak)
		}
	}
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestUserMessageLimit: a row beyond the user connections' message limit
// fails its statement with 54000 before the server holds it, and the pool
// serves the user's next statement.
func TestUserMessageLimit(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	role := fmt.Sprintf("msguser_%d", time.Now().UnixNano())
	if _, err := c.Pool().Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	defer c.Pool().Exec(context.Background(), "DROP ROLE "+role) //nolint:errcheck
	c.SetUserMessageLimit(1 << 20)
	run := func(q string) (int, error) {
		conn, err := c.AcquireAs(ctx, role, catalog.Credential{})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var n int
		err = conn.QueryRow(ctx, q).Scan(&n)
		return n, err
	}
	if n, err := run("SELECT length(repeat('a', 2000000))"); err != nil || n != 2000000 {
		t.Fatalf("a small row computed from a large value: %d, %v", n, err)
	}
	var s string
	conn, err := c.AcquireAs(ctx, role, catalog.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	err = conn.QueryRow(ctx, "SELECT repeat('a', 2000000)").Scan(&s)
	conn.Release()
	if code := sqlerr.Code(err); code != sqlerr.ProgramLimitExceeded {
		t.Fatalf("a row of 2 MB over a 1 MiB limit: %v (SQLSTATE %s), want 54000", err, code)
	}
	if n, err := run("SELECT 7"); err != nil || n != 7 {
		t.Fatalf("the next statement: %d, %v", n, err)
	}
}
