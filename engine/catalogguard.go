package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Catalog queries run on the catalog PostgreSQL over a connection whose login
// role is the catalog owner (a superuser), switched to the session's role for
// the transaction. PostgreSQL checks a later role switch against the login
// role, so user SQL must never reach functions that change the role, read the
// server's files or control other sessions; and LakeSoul's internal functions
// are reached only through the SQL surface. This guard runs before a query is
// sent to the catalog.

// deniedCatalogFunctions may not be called by user SQL on the catalog.
var deniedCatalogFunctions = map[string]bool{
	"set_config": true, "pg_read_file": true, "pg_read_binary_file": true, "pg_ls_dir": true,
	"pg_stat_file": true, "pg_ls_logdir": true, "pg_ls_waldir": true, "pg_ls_tmpdir": true,
	"pg_ls_archive_statusdir": true, "lo_import": true, "lo_export": true, "lo_get": true, "lo_put": true,
	"lo_from_bytea": true, "lo_create": true, "lo_unlink": true, "lo_open": true,
	"pg_terminate_backend": true, "pg_cancel_backend": true, "pg_reload_conf": true,
	"pg_rotate_logfile": true, "pg_promote": true, "pg_create_restore_point": true, "pg_switch_wal": true,
	"pg_backup_start": true, "pg_backup_stop": true, "pg_log_backend_memory_contexts": true,
	"dblink": true, "dblink_exec": true, "dblink_connect": true, "pg_notify": true,
	"pg_advisory_lock": true, "pg_advisory_xact_lock": true, "pg_advisory_lock_shared": true,
	"pg_try_advisory_lock": true, "pg_advisory_unlock_all": true,
	"txid_current": true, "pg_current_xact_id": true,
	"pg_import_system_collations": true, "pg_replication_origin_create": true,
	"pg_create_logical_replication_slot": true, "pg_create_physical_replication_slot": true,
	"pg_drop_replication_slot": true, "nextval": true, "setval": true,
}

// allowedLakesoulFunctions are the functions of schema lakesoul that form the
// SQL surface (DESIGN §4); its other functions are internal.
var allowedLakesoulFunctions = map[string]bool{
	"history": true, "create_workspace": true, "create_user": true, "create_access_key": true,
	"revoke_access_key": true, "default_workspace": true,
}

// checkCatalogFunctions refuses calls user SQL may not make on the catalog.
func checkCatalogFunctions(stmt *pg_query.Node) error {
	var bad string
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil || bad != "" {
			return
		}
		var parts []string
		for _, p := range fc.Funcname {
			parts = append(parts, strings.ToLower(p.GetString_().GetSval()))
		}
		name := parts[len(parts)-1]
		switch {
		case deniedCatalogFunctions[name]:
			bad = strings.Join(parts, ".")
		case len(parts) == 2 && parts[0] == "lakesoul" && !allowedLakesoulFunctions[name]:
			bad = strings.Join(parts, ".")
		case strings.HasPrefix(name, "lo_") || strings.HasPrefix(name, "dblink"):
			bad = strings.Join(parts, ".")
		}
	})
	if bad != "" {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for function %s", bad)
	}
	return nil
}
