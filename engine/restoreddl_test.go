package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PREPARE takes the oid parameters of pg_dump's per-object catalog queries;
// a lake query cannot use them.
func TestPrepareCatalogParameterTypes(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `PREPARE rel(pg_catalog.oid) AS SELECT relname FROM pg_catalog.pg_class WHERE oid = $1`)
	expectRows(t, s, `EXECUTE rel('1259')`, "pg_class")
	wantCode(t, s, `PREPARE arr(oid[]) AS SELECT 1`, sqlerr.UndefinedObject)
}
