package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/migrations"
	"github.com/lakesoul-go/lakesoul/sqlfuncs"
)

// MigrationsTable is where golang-migrate records the applied version. It is
// not LakeSoul's own lakesoul_schema_migrations, which LakeSoul's Python tool owns.
const MigrationsTable = "lakesoul_go_migrations"

// sqlfuncsLockKey serialises concurrent servers applying sqlfuncs at start.
const sqlfuncsLockKey = 0x4c616b65536f756c // "LakeSoul"

func newMigrate(catalogURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations source: %w", err)
	}
	dbURL, err := migrateURL(catalogURL)
	if err != nil {
		return nil, err
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, dbURL)
	if err != nil {
		return nil, fmt.Errorf("open catalog for migration: %w", err)
	}
	return m, nil
}

// migrateURL turns a postgres:// URL or keyword/value DSN into the pgx5:// URL
// golang-migrate wants, with our migrations table.
func migrateURL(catalogURL string) (string, error) {
	cfg, err := pgconn.ParseConfig(catalogURL)
	if err != nil {
		return "", fmt.Errorf("catalog url: %w", err)
	}
	u := url.URL{Scheme: "pgx5", Path: "/" + cfg.Database}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		// Unix socket: host goes in the query.
		q.Set("host", cfg.Host)
		u.Host = fmt.Sprintf("localhost:%d", cfg.Port)
	} else {
		u.Host = fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	}
	q.Set("sslmode", "disable")
	if cfg.TLSConfig != nil {
		q.Set("sslmode", "require")
	}
	// Qualify the migrations table: golang-migrate otherwise uses
	// current_schema(), which changes once schema "lakesoul" exists for a
	// role named lakesoul ("$user" comes first in the default search_path).
	q.Set("x-migrations-table", `"public"."`+MigrationsTable+`"`)
	q.Set("x-migrations-table-quoted", "1")
	q.Set("search_path", "public")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// MigrateUp applies all pending migrations and then (re)creates the SQL
// functions of sqlfuncs. Safe to run concurrently from several processes.
func MigrateUp(ctx context.Context, catalogURL string) error {
	m, err := newMigrate(catalogURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return ApplyFunctions(ctx, catalogURL)
}

// MigrateDown rolls back n migrations (n <= 0: all).
func MigrateDown(catalogURL string, n int) error {
	m, err := newMigrate(catalogURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if n <= 0 {
		err = m.Down()
	} else {
		err = m.Steps(-n)
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// MigrateVersion reports the applied migration version and whether a failed
// migration left the catalog dirty.
func MigrateVersion(catalogURL string) (version uint, dirty bool, err error) {
	m, err := newMigrate(catalogURL)
	if err != nil {
		return 0, false, err
	}
	defer m.Close()
	version, dirty, err = m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return version, dirty, err
}

// ApplyFunctions creates or replaces every function of sqlfuncs, in order, in
// one transaction under an advisory lock, after the functions made from the
// binary's lists of internal keys (properties.go).
func ApplyFunctions(ctx context.Context, catalogURL string) error {
	scripts, err := sqlfuncs.Scripts()
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, catalogURL)
	if err != nil {
		return fmt.Errorf("connect catalog: %w", err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit this is a no-op
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(sqlfuncsLockKey)); err != nil {
		return fmt.Errorf("lock sqlfuncs: %w", err)
	}
	// The internal key lists first: the scripts' functions ask them.
	if _, err := tx.Exec(ctx, internalKeyFunctions()); err != nil { // properties.go
		return fmt.Errorf("apply internal key lists: %w", err)
	}
	for _, s := range scripts {
		if _, err := tx.Exec(ctx, s.SQL); err != nil {
			return fmt.Errorf("apply %s: %w", s.Name, err)
		}
	}
	return tx.Commit(ctx)
}
