// Package pgcatalog answers clients' catalog queries (psql's \d family,
// pgjdbc's DatabaseMetaData, …) with lake namespaces and tables.
//
// Lake tables are not PostgreSQL relations: they are rows of LakeSoul's
// public.table_info in the catalog database. Catalog queries nevertheless run
// on that real PostgreSQL, so every function, operator, cast and collation
// behaves exactly as clients expect, after Rewrite has pointed them at
// emulation objects in schema lakesoul_pg (migration
// 000003_pg_catalog_emulation):
//
//   - a relation pg_catalog.X (or unqualified X starting with "pg_") for which
//     the view lakesoul_pg.X exists becomes lakesoul_pg.X;
//   - a relation information_schema.X becomes lakesoul_pg.info_X when that view
//     exists;
//   - calls of the built-in functions that take relation OIDs
//     (pg_table_is_visible, pg_get_indexdef, …) become calls of the
//     lakesoul_pg functions of the same name, which know lake OIDs and defer to
//     the built-in for every other OID;
//   - version() and current_setting('server_version'|'server_version_num')
//     become literals of the version the server claims (ServerVersion), which
//     is also what the session reports in ParameterStatus.
//
// The views show the real rows of namespaces pg_catalog and information_schema
// (so \d pg_class still works) plus the lake objects, and hide everything else
// of the catalog database. References to catalogs that are not emulated stay
// on the real objects and simply show no lake rows.
//
// The catalog session a rewritten query runs on should carry the client's lake
// search path in the setting lakesoul.search_path (a comma list of namespaces,
// in PostgreSQL names, "public" when unset; see SchemaName): pg_table_is_visible, current_schema and
// current_schemas answer from it. The session's role decides what it may see:
// the views read LakeSoul's tables as that role (security_invoker), so its
// privileges and row-level security apply.
//
// Invariant: the names in this package (emulatedRelations, emulatedFunctions)
// and the objects the migration creates agree; the tests check it against a
// migrated database.
package pgcatalog
