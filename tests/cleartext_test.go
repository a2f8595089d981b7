package tests

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestCleartextPasswordTLS starts a server with --password-auth cleartext-tls:
// pgx and psql over TLS are asked for a cleartext password (checked against
// the role's SCRAM verifier), connections without TLS still get SCRAM, and a
// wrong password or an unknown role is FATAL 28P01 either way. The flag
// without TLS is refused at start.
func TestCleartextPasswordTLS(t *testing.T) {
	t.Parallel()
	requirePG(t)
	base := testBaseDir(t)
	ctx := testCtx(t)

	// Without --tls-cert/--tls-key the option makes no sense: refused before
	// anything starts; an unknown method is refused too.
	for _, args := range [][]string{{"--password-auth", "cleartext-tls"}, {"--password-auth", "md5"}} {
		cmd := exec.CommandContext(ctx, lakesoulBin, append([]string{"serve", "--data-dir", filepath.Join(base, "refused"),
			"--listen", "127.0.0.1:0"}, args...)...)
		cmd.Env = serverEnv()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--password-auth") {
			t.Errorf("serve %q: %v\n%s", args, err, out)
		}
	}

	const password = "clear-Secret1"
	certFile, keyFile := writeSelfSigned(t, base)
	srv, err := startServer(filepath.Join(base, "data"), password,
		"--tls-cert", certFile, "--tls-key", keyFile, "--password-auth", "cleartext-tls")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stopT(t)
	dsn := func(user, pw, sslmode string) string {
		return strings.Replace(srv.dsn(user, pw, database), "sslmode=disable", "sslmode="+sslmode, 1)
	}
	// authLines counts the server's log lines of successful authentications
	// with method ("password" or "SCRAM-SHA-256").
	authLines := func(method string) int {
		b, err := os.ReadFile(srv.logPath)
		if err != nil {
			t.Fatal(err)
		}
		return countAuthLines(string(b), method)
	}

	// pgx over TLS: the server asks for AuthenticationCleartextPassword.
	c, trace, err := connectTracedE2E(ctx, dsn(adminRole, password, "require"))
	if err != nil {
		t.Fatalf("pgx over TLS: %v", err)
	}
	defer c.Close(ctx)
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("connection is %T, not TLS", c.PgConn().Conn())
	}
	if tr := trace.String(); !strings.Contains(tr, "AuthenticationCleartextPassword") || strings.Contains(tr, "AuthenticationSASL") {
		t.Errorf("pgx over TLS did not authenticate with a cleartext password:\n%s", tr)
	}
	wantRows(t, "query over TLS", queryStrings(t, ctx, c, "SELECT 1 + 1"), []string{"2"})

	// pgx without TLS: SCRAM.
	c2, trace, err := connectTracedE2E(ctx, dsn(adminRole, password, "disable"))
	if err != nil {
		t.Fatalf("pgx without TLS: %v", err)
	}
	c2.Close(ctx)
	if tr := trace.String(); !strings.Contains(tr, "AuthenticationSASL") || strings.Contains(tr, "AuthenticationCleartextPassword") {
		t.Errorf("pgx without TLS did not use SCRAM:\n%s", tr)
	}

	// Wrong password and unknown role, over TLS and without: FATAL 28P01.
	for _, tc := range []struct{ user, pw, sslmode string }{
		{adminRole, "wrong", "require"},
		{"nobody", password, "require"},
		{adminRole, "wrong", "disable"},
		{"nobody", password, "disable"},
	} {
		_, _, err := connectTracedE2E(ctx, dsn(tc.user, tc.pw, tc.sslmode))
		var pe *pgconn.PgError
		want := `password authentication failed for user "` + tc.user + `"`
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Severity != "FATAL" || pe.Message != want {
			t.Errorf("%s/%s sslmode=%s: %v, want FATAL 28P01 %q", tc.user, tc.pw, tc.sslmode, err, want)
		}
	}

	// psql (libpq 15 answers AuthenticationCleartextPassword with PGPASSWORD).
	p := &psqlClient{t: t, path: psqlPath(t), srv: srv}
	before := authLines("password")
	out2, errOut, err := p.run(ctx, []string{"-A", "-t", "-d", "sslmode=require dbname=" + database}, `SELECT 'clear ok'`)
	if err != nil || strings.TrimSpace(out2) != "clear ok" {
		t.Errorf("psql sslmode=require: %v %s %s", err, out2, errOut)
	}
	if after := authLines("password"); after != before+1 {
		t.Errorf("psql over TLS: %d cleartext password authentications logged, want 1", after-before)
	}
	before = authLines("SCRAM-SHA-256")
	out2, errOut, err = p.run(ctx, []string{"-A", "-t", "-d", "sslmode=disable dbname=" + database}, `SELECT 'scram ok'`)
	if err != nil || strings.TrimSpace(out2) != "scram ok" {
		t.Errorf("psql sslmode=disable: %v %s %s", err, out2, errOut)
	}
	if after := authLines("SCRAM-SHA-256"); after != before+1 {
		t.Errorf("psql without TLS: %d SCRAM authentications logged, want 1", after-before)
	}
	_, errOut, err = p.run(ctx, []string{"-A", "-t", "-d", "sslmode=require password=wrong dbname=" + database}, `SELECT 1`)
	if err == nil || !strings.Contains(errOut, `password authentication failed for user "lakesoul"`) {
		t.Errorf("psql with a wrong password over TLS: %v %s", err, errOut)
	}
}

// countAuthLines counts the log lines of successful authentications with method.
func countAuthLines(log, method string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `msg="pgwire: authenticated" `) && strings.HasSuffix(line, " method="+method) {
			n++
		}
	}
	return n
}

// connectTracedE2E connects with pgx and also returns the names of the
// protocol messages exchanged (pgproto3's trace).
func connectTracedE2E(ctx context.Context, dsn string) (*pgx.Conn, *bytes.Buffer, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	var trace bytes.Buffer
	cfg.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		fe := pgproto3.NewFrontend(r, w)
		fe.Trace(&trace, pgproto3.TracerOptions{SuppressTimestamps: true})
		return fe
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	return c, &trace, err
}
