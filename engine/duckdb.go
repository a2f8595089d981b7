package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// openDuckDB opens the in-memory DuckDB that executes queries over lake tables,
// registers the lake scan function, and then locks DuckDB down: no file or
// network access of its own (all IO goes through Go and objstore), bounded
// memory and temp space, and no configuration changes by users.
func openDuckDB(ctx context.Context, reg *scanRegistry, cfg Config, warehouseDir string) (*sql.DB, error) {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	defer conn.Close()
	if err := registerScanFunction(conn, reg); err != nil {
		db.Close()
		return nil, err
	}
	if err := registerDuckFunctions(ctx, conn); err != nil { // duckfuncs.go
		db.Close()
		return nil, err
	}
	// GLOBAL: a plain SET is the setup connection's alone, and every
	// session has a connection of its own.
	setup := []string{
		"SET GLOBAL TimeZone = 'UTC'",
		// PostgreSQL divides integers by integers to an integer (7/2 = 3).
		"SET GLOBAL integer_division = true",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		// A large result's memory goes back to the system once the query is
		// done, instead of staying resident in the allocator's caches.
		"SET allocator_background_threads = true",
	}
	if warehouseDir != "" {
		// The one place DuckDB may read files itself: native scans of
		// append tables (nativescan.go). User SQL cannot name files: the
		// engine rejects table functions other than its own.
		setup = append(setup, fmt.Sprintf("SET allowed_directories = ['%s/']", strings.ReplaceAll(warehouseDir, "'", "''")))
	}
	// One budget for every session's queries: an operator beyond it spills
	// to the temp directory, and a query beyond both fails with 53200.
	if cfg.MemoryLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET memory_limit = '%dB'", cfg.MemoryLimit))
	}
	if cfg.TempDir != "" {
		setup = append(setup, fmt.Sprintf("SET temp_directory = '%s'", strings.ReplaceAll(cfg.TempDir, "'", "''")))
	}
	if cfg.TempLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET max_temp_directory_size = '%dB'", cfg.TempLimit))
	}
	setup = append(setup, "SET enable_external_access = false")
	if cfg.DuckDBThreads > 0 {
		setup = append(setup, fmt.Sprintf("SET threads = %d", cfg.DuckDBThreads))
	}
	setup = append(setup, "SET lock_configuration = true")
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("duckdb setup %q: %w", s, err)
		}
	}
	bulk, err := newBulkBridge(ctx, db)
	if err != nil {
		cfg.Logger.Warn("lakesoul_scan: rows go to DuckDB value by value", "err", err)
	}
	reg.bulk = bulk
	return db, nil
}

func init() { sqlerr.RegisterMapper(mapDuckDBError) }
