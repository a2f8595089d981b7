package tests

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/postgres" // postgres:// (lib/pq)
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

// golang-migrate sends each migration file as one simple Query. A file
// that fails half way leaves nothing of itself behind (issue 32, item 4):
// the statements before the failing one are rolled back with it.
func TestGolangMigrateFailingFile(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c, "CREATE SCHEMA gmig")
	src, err := iofs.New(fstest.MapFS{
		"1_accounts.up.sql": {Data: []byte("CREATE TABLE gmig.accounts (id int PRIMARY KEY, owner text);\n" +
			"INSERT INTO gmig.accounts VALUES (1, 'ann'), (2, 'bob');\n")},
		"2_broken.up.sql": {Data: []byte("ALTER TABLE gmig.accounts ADD COLUMN balance bigint;\n" +
			"CREATE TABLE gmig.ledger (id int PRIMARY KEY, account int, amount bigint);\n" +
			"INSERT INTO gmig.ledger VALUES (1, 1, 100);\n" +
			"UPDATE gmig.accounts SET owner = 'carl' WHERE id = 2;\n" +
			"INSERT INTO gmig.ledger VALUES (2, 1, 1 / 0);\n")},
	}, ".")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := srv.adminPassword()
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(adminRole, pw), Host: srv.addr, Path: "/" + database,
		RawQuery: "sslmode=disable&x-migrations-table=gmig_schema_migrations&search_path=gmig"}
	m, err := migrate.NewWithSourceInstance("iofs", src, u.String())
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer m.Close()
	err = m.Up()
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("migrate up: %v, want the second file's division by zero", err)
	}
	var dirty migrate.ErrDirty
	if v, isDirty, verr := m.Version(); verr != nil || v != 2 || !isDirty {
		t.Errorf("version after the failed file: %d dirty=%v %v, want 2 dirty", v, isDirty, verr)
	} else if errors.As(m.Up(), &dirty) == false {
		t.Errorf("a second Up does not report the dirty version")
	}
	// The first file is applied; nothing of the second is.
	wantRows(t, "accounts", queryStrings(t, ctx, c, "SELECT id, owner FROM gmig.accounts ORDER BY id"), []string{"1|ann", "2|bob"})
	if _, err := c.Exec(ctx, "SELECT balance FROM gmig.accounts"); pgCode(err) != "42703" {
		t.Errorf("column of the failed file: %v, want 42703", err)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM gmig.ledger"); pgCode(err) != "42P01" {
		t.Errorf("table of the failed file: %v, want 42P01", err)
	}
}
