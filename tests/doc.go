// Package tests holds LakeSoul-Go's end-to-end tests: they build the
// lakesoul binary, run `lakesoul serve` as a subprocess with a private
// PostgreSQL catalog, and talk to it only as real clients do (psql and pgx
// over the PostgreSQL wire protocol).
//
// The tests need the PostgreSQL server binaries (initdb, postgres) and, for
// the psql tests, psql. Without them the tests are skipped, or fail when
// LAKESOUL_REQUIRE_PG=1 (set it in CI).
package tests
