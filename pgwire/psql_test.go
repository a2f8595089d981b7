package pgwire

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const psqlPath = "/usr/bin/psql"

func runPsql(t *testing.T, h *harness, sslmode string, args ...string) (string, error) {
	t.Helper()
	if _, err := os.Stat(psqlPath); err != nil {
		t.Skipf("psql not available: %v", err)
	}
	host, port, _ := net.SplitHostPort(h.addr)
	cmd := exec.Command(psqlPath, append([]string{"-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", testUser, "-d", "db"}, args...)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGSSLMODE="+sslmode, "PGAPPNAME=psql-test")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestPsql(t *testing.T) {
	h := newHarness(t)
	out, err := runPsql(t, h, "prefer", "-c", "SELECT 1")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	if !strings.Contains(out, "?column?") || !strings.Contains(out, "(1 row)") {
		t.Fatalf("psql output:\n%s", out)
	}
	// Errors reach psql with their SQLSTATE and message.
	out, err = runPsql(t, h, "disable", "-v", "VERBOSITY=verbose", "-c", "SELECT * FROM missing")
	if err == nil || !strings.Contains(out, "42P01") || !strings.Contains(out, `relation "missing" does not exist`) {
		t.Fatalf("psql error: %v\n%s", err, out)
	}
}

func TestPsqlTLS(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TLSConfig = selfSignedTLS(t) })
	out, err := runPsql(t, h, "require", "-c", "GENERATE 3")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	if !strings.Contains(out, "(3 rows)") {
		t.Fatalf("psql output:\n%s", out)
	}
}
