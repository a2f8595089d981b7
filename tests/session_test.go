package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCursors covers DECLARE/FETCH/MOVE/CLOSE with pgx (simple protocol
// text) and psql's FETCH_COUNT, which pages a query through a cursor.
func TestCursors(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA cur",
		"CREATE TABLE cur.t (id int PRIMARY KEY, v text)",
		"INSERT INTO cur.t SELECT i, 'v' || i FROM generate_series(1, 25) AS s(i)")

	if _, err := c.Exec(ctx, "DECLARE c1 CURSOR FOR SELECT id FROM cur.t"); pgCode(err) != "25P01" {
		t.Errorf("DECLARE outside a block: %v, want 25P01", err)
	}
	mustExec(t, ctx, c, "BEGIN", "DECLARE c1 NO SCROLL CURSOR FOR SELECT id, v FROM cur.t ORDER BY id")
	wantRows(t, "FETCH 3", queryStrings(t, ctx, c, "FETCH 3 FROM c1"), []string{"1|v1", "2|v2", "3|v3"})
	tag, err := c.Exec(ctx, "MOVE FORWARD 10 IN c1")
	if err != nil || tag.String() != "MOVE 10" {
		t.Errorf("MOVE: %q %v", tag, err)
	}
	wantRows(t, "FETCH NEXT", queryStrings(t, ctx, c, "FETCH NEXT FROM c1"), []string{"14|v14"})
	got := queryStrings(t, ctx, c, "FETCH ALL FROM c1")
	if len(got) != 11 || got[10] != "25|v25" {
		t.Errorf("FETCH ALL: %q", got)
	}
	wantRows(t, "FETCH at end", queryStrings(t, ctx, c, "FETCH 5 FROM c1"), nil)
	if _, err := c.Exec(ctx, "FETCH BACKWARD 1 FROM c1"); pgCode(err) != "55000" {
		t.Errorf("FETCH BACKWARD of a NO SCROLL cursor: %v, want 55000", err)
	}
	mustExec(t, ctx, c, "ROLLBACK", "BEGIN", "DECLARE c2 CURSOR FOR SELECT count(*) FROM cur.t")
	mustExec(t, ctx, c, "CLOSE c2")
	if _, err := c.Exec(ctx, "FETCH 1 FROM c2"); pgCode(err) != "34000" {
		t.Errorf("FETCH from a closed cursor: %v, want 34000", err)
	}
	mustExec(t, ctx, c, "ROLLBACK")
	// WITH HOLD survives the end of the transaction; plain cursors do not.
	mustExec(t, ctx, c, "DECLARE h CURSOR WITH HOLD FOR SELECT id FROM cur.t WHERE id <= 2 ORDER BY id")
	wantRows(t, "hold", queryStrings(t, ctx, c, "FETCH ALL FROM h"), []string{"1", "2"})
	mustExec(t, ctx, c, "CLOSE ALL")

	// psql pages the result through a cursor with FETCH_COUNT.
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	out, errOut, err := p.run(ctx, []string{"-A", "-t", "-v", "FETCH_COUNT=4"}, "SELECT id FROM cur.t ORDER BY id")
	if err != nil || len(strings.Fields(out)) != 25 {
		t.Errorf("psql FETCH_COUNT: %v\n%s\n%s", err, out, errOut)
	}
}

// TestSettingsAndTimeout covers SET/SHOW/RESET of the settings clients
// send, ParameterStatus, TimeZone in timestamptz output, and
// statement_timeout (57014) for DuckDB and catalog queries.
func TestSettingsAndTimeout(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	if v := c.PgConn().ParameterStatus("server_version"); !strings.HasPrefix(v, "16.") {
		t.Errorf("server_version %q, want 16.x", v)
	}
	mustExec(t, ctx, c, "SET extra_float_digits = 3", "SET application_name = 'lake-test'",
		"SET DateStyle = 'ISO, DMY'", "SET search_path = public, \"$user\"", "SET client_min_messages TO warning",
		"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")
	if v := c.PgConn().ParameterStatus("application_name"); v != "lake-test" {
		t.Errorf("ParameterStatus application_name = %q", v)
	}
	wantRows(t, "SHOW", queryStrings(t, ctx, c, "SHOW DateStyle"), []string{"ISO, DMY"})
	mustExec(t, ctx, c, "RESET application_name")
	wantRows(t, "RESET", queryStrings(t, ctx, c, "SHOW application_name"), []string{""})
	if _, err := c.Exec(ctx, "SET TimeZone = 'No/Such_Zone'"); pgCode(err) != "22023" {
		t.Errorf("bad TimeZone: %v, want 22023", err)
	}
	if _, err := c.Exec(ctx, "SET DateStyle = 'German'"); pgCode(err) != "0A000" {
		t.Errorf("DateStyle German: %v, want 0A000", err)
	}
	if _, err := c.Exec(ctx, "SET client_encoding = 'LATIN1'"); pgCode(err) != "0A000" {
		t.Errorf("client_encoding LATIN1: %v, want 0A000", err)
	}
	if rows := queryStrings(t, ctx, c, "SHOW ALL"); len(rows) < 10 {
		t.Errorf("SHOW ALL: %d rows", len(rows))
	}

	// TimeZone decides timestamptz text output.
	mustExec(t, ctx, c, "CREATE SCHEMA tz", "CREATE TABLE tz.t (id int, ts timestamptz)",
		"INSERT INTO tz.t VALUES (1, '2026-06-01 12:00:00+00')", "SET TIME ZONE 'Asia/Tokyo'")
	var s string
	if err := c.QueryRow(ctx, "SELECT ts FROM tz.t", pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil || s != "2026-06-01 21:00:00+09" {
		t.Errorf("timestamptz in Asia/Tokyo: %q %v", s, err)
	}

	// statement_timeout cancels a long DuckDB query and a long catalog query;
	// the session stays usable.
	mustExec(t, ctx, c, "CREATE TABLE tz.big (i int)", "INSERT INTO tz.big SELECT i FROM generate_series(1, 3000) AS s(i)",
		"SET statement_timeout = '300ms'")
	_, err := c.Exec(ctx, "SELECT count(*) FROM tz.big a, tz.big b, tz.big c WHERE a.i + b.i + c.i = -1")
	if pgCode(err) != "57014" || !strings.Contains(err.Error(), "statement timeout") {
		t.Errorf("lake query under statement_timeout: %v, want 57014", err)
	}
	if _, err := c.Exec(ctx, "SELECT pg_sleep(5)"); pgCode(err) != "57014" {
		t.Errorf("catalog query under statement_timeout: %v, want 57014", err)
	}
	mustExec(t, ctx, c, "SET statement_timeout = 0")
	wantRows(t, "after timeouts", queryStrings(t, ctx, c, "SELECT count(*) FROM tz.big"), []string{"3000"})
}

// TestTLSFlags starts a server with --tls-cert/--tls-key and connects over
// TLS with pgx (sslmode=require) and psql; without TLS a client that
// requires it is refused by the server's 'N'.
func TestTLSFlags(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	certFile, keyFile := writeSelfSigned(t, base)
	srv, err := startServer(filepath.Join(base, "data"), "tls-Secret1", "--tls-cert", certFile, "--tls-key", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	ctx := testCtx(t)
	cfg, err := pgx.ParseConfig(strings.Replace(srv.dsn(adminRole, "tls-Secret1", database), "sslmode=disable", "sslmode=require", 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect over TLS: %v", err)
	}
	defer c.Close(ctx)
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("connection is %T, not TLS", c.PgConn().Conn())
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("query over TLS: %v", err)
	}
	if path := psqlPathOrEmpty(); path != "" {
		p := &psqlClient{t: t, path: path, srv: srv}
		out, errOut, err := p.run(ctx, []string{"-A", "-t", "-d", "sslmode=require dbname=" + database}, `SELECT 'ssl ok'`)
		if err != nil || strings.TrimSpace(out) != "ssl ok" {
			t.Errorf("psql sslmode=require: %v %s %s", err, out, errOut)
		}
	}
	// The shared server has no TLS: sslmode=require is refused.
	shared := sharedServer(t)
	cfg2, _ := pgx.ParseConfig(strings.Replace(shared.dsn(adminRole, sharedPassword, database), "sslmode=disable", "sslmode=require", 1))
	if c2, err := pgx.ConnectConfig(ctx, cfg2); err == nil {
		c2.Close(ctx)
		t.Error("sslmode=require against a server without TLS succeeded")
	}
}

func psqlPathOrEmpty() string {
	if fi, err := os.Stat("/usr/bin/psql"); err == nil && !fi.IsDir() {
		return "/usr/bin/psql"
	}
	return ""
}

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and its
// key as PEM files.
func writeSelfSigned(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "lakesoul-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
