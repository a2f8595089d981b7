package engine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// openDuckDB opens the in-memory DuckDB that executes queries over lake tables,
// registers the lake scan function, and then locks DuckDB down: bounded
// memory and temp space, no configuration changes by users, and no file or
// network access of its own — lake data reaches it only through
// lakesoul_scan, whose files the engine reads (objstore). DuckDB itself
// opens only its spill files in tempDir: disabling external access leaves
// exactly that directory open (DuckDB adds its temp directory to the
// allowed directories itself, and spilling needs it), and tempDir holds
// nothing but DuckDB's spill. That no user statement can name even those
// files is the function gate's part (duckgate.go).
// It returns the names of the functions the engine created.
func openDuckDB(ctx context.Context, reg *scanRegistry, cfg Config, tempDir string) (*sql.DB, map[string]bool, error) {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open duckdb: %w", err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open duckdb: %w", err)
	}
	defer conn.Close()
	builtin, err := duckFunctionNames(ctx, conn)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := registerScanFunction(conn, reg); err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := registerDuckFunctions(ctx, conn); err != nil { // duckfuncs.go
		db.Close()
		return nil, nil, err
	}
	// The engine's functions are the names registering added (duckgate.go
	// admits them; lakesoul_scan only with the session's handles).
	funcs, err := duckFunctionNames(ctx, conn)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for name := range funcs {
		if builtin[name] || name == scanFunctionName {
			delete(funcs, name)
		}
	}
	// GLOBAL: a plain SET is the setup connection's alone, and every
	// session has a connection of its own.
	setup := []string{
		"SET GLOBAL TimeZone = 'UTC'",
		// PostgreSQL divides integers by integers to an integer (7/2 = 3).
		"SET GLOBAL integer_division = true",
		// PostgreSQL sorts NULL as larger than every value: last ascending,
		// first descending (DuckDB: last either way).
		"SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		// A large result's memory goes back to the system once the query is
		// done, instead of staying resident in the allocator's caches.
		"SET allocator_background_threads = true",
		// One budget for every session's queries: an operator beyond it
		// spills to the temp directory, and a query beyond both fails
		// with 53200.
		fmt.Sprintf("SET temp_directory = %s", quoteLiteral(tempDir)),
	}
	if cfg.MemoryLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET memory_limit = '%dB'", cfg.MemoryLimit))
	}
	if cfg.TempLimit > 0 {
		setup = append(setup, fmt.Sprintf("SET max_temp_directory_size = '%dB'", cfg.TempLimit))
	}
	if cfg.DuckDBThreads > 0 {
		setup = append(setup, fmt.Sprintf("SET threads = %d", cfg.DuckDBThreads))
	}
	// No file or network access from here on (no allowed_directories or
	// allowed_paths: only DuckDB's own temp directory), and nothing of the
	// above can be changed by a statement.
	setup = append(setup, "SET enable_external_access = false", "SET lock_configuration = true")
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("duckdb setup %q: %w", s, err)
		}
	}
	bulk, err := newBulkBridge(ctx, db)
	if err != nil {
		cfg.Logger.Warn("lakesoul_scan: rows go to DuckDB value by value", "err", err)
	}
	reg.bulk = bulk
	return db, funcs, nil
}

func init() { sqlerr.RegisterMapper(mapDuckDBError) }
