package tests

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"testing/fstest"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"
)

// TestGoose runs goose's migrations as an application does at each start:
// Up (its version table made first, a SERIAL key and a default now()), Up
// again at a second start (nothing to do), Status, a Go migration in a
// transaction with untyped parameters, Down of it and Up again, down past a
// migration that adds a column (its Down drops it) and Up again; the schema
// and rows are what the migrations made.
func TestGoose(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	db, err := sql.Open("pgx", fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable search_path=goose_app",
		srv.port, adminRole, pw, database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := testCtx(t)
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA goose_app"); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"00001_users.sql": {Data: []byte(`-- +goose Up
CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX users_email ON users (email);
-- +goose Down
DROP TABLE users;
`)},
		"00002_seed.sql": {Data: []byte(`-- +goose Up
-- +goose StatementBegin
INSERT INTO users (email) VALUES ('a@x'), ('b@x');
-- +goose StatementEnd
-- +goose Down
DELETE FROM users;
`)},
		"00003_logins.sql": {Data: []byte(`-- +goose Up
ALTER TABLE users ADD COLUMN logins integer NOT NULL DEFAULT 0;
-- +goose Down
ALTER TABLE users DROP COLUMN logins;
`)},
	}
	provider := func() *goose.Provider {
		p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
			goose.WithGoMigrations(goose.NewGoMigration(4,
				&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, "UPDATE users SET logins = logins + $1 WHERE email = $2", 3, "a@x")
					return err
				}},
				&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, "UPDATE users SET logins = 0")
					return err
				}})))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	res, err := provider().Up(ctx)
	if err != nil {
		t.Fatalf("first start, Up: %v", err)
	}
	if len(res) != 4 {
		t.Errorf("first start applied %d migrations, want 4", len(res))
	}
	p := provider() // a second start
	if res, err = p.Up(ctx); err != nil || len(res) != 0 {
		t.Fatalf("second start, Up: %d applied, %v; want none", len(res), err)
	}
	if v, err := p.GetDBVersion(ctx); err != nil || v != 4 {
		t.Errorf("version %d %v, want 4", v, err)
	}
	status, err := p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if s.State != goose.StateApplied {
			t.Errorf("migration %d: %s", s.Source.Version, s.State)
		}
	}
	// Down of the Go migration and Up again; then down to 2 (00003's Down
	// drops logins) and Up again (its Up adds logins back: a new column,
	// every row 0 before the Go migration runs again).
	if _, err := p.Down(ctx); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if v, _ := p.GetDBVersion(ctx); v != 3 {
		t.Errorf("version after Down %d, want 3", v)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up again: %v", err)
	}
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("DownTo 2: %v", err)
	}
	if v, _ := p.GetDBVersion(ctx); v != 2 {
		t.Errorf("version after DownTo 2 %d, want 2", v)
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatalf("UpTo 3 after DownTo 2: %v", err)
	}
	var sum int
	if err := db.QueryRowContext(ctx, "SELECT sum(logins) FROM users").Scan(&sum); err != nil || sum != 0 {
		t.Errorf("logins added again: sum %d %v, want 0 (no dropped values)", sum, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up after DownTo 2: %v", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT email, logins FROM users ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var email string
		var logins int
		if err := rows.Scan(&email, &logins); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d", email, logins))
	}
	if fmt.Sprint(got) != "[a@x:3 b@x:0]" {
		t.Errorf("rows %v, want [a@x:3 b@x:0]", got)
	}
}
