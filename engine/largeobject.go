package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Large objects.
//
// PostgreSQL keeps large objects in pg_largeobject of its database; this
// server has no such store: a lo_* call that reached the catalog
// PostgreSQL ran in a read-only transaction that is rolled back, so
// lo_create answered an OID of an object that never existed. Every
// large-object function (isLargeObjectFunc: PostgreSQL's lo_* family,
// loread and lowrite) is refused at Parse with 0A000 in every statement
// kind; reading pg_largeobject_metadata (vacuumlo, pg_dump) still answers
// that there are none.

// isLargeObjectFunc reports whether fc calls one of PostgreSQL's
// large-object functions.
func isLargeObjectFunc(fc *pg_query.FuncCall) bool {
	parts, ok := funcNameParts(fc)
	if !ok || len(parts) > 2 || len(parts) == 2 && parts[0] != "pg_catalog" {
		return false
	}
	name := strings.ToLower(parts[len(parts)-1])
	return strings.HasPrefix(name, "lo_") || name == "loread" || name == "lowrite"
}
