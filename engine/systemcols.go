package engine

import (
	"fmt"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PostgreSQL's system columns (ctid, xmin, xmax, cmin, cmax, tableoid) are
// addresses and transaction stamps of heap tuples, which lake rows do not
// have: a row is a value in a Parquet file that compaction rewrites and
// merge-on-read replaces. A query naming one is 0A000 with a hint naming
// the primary key, which is what tools that edit keyless tables by ctid
// (DBeaver, pgAdmin) should use instead; and, as in PostgreSQL, no user
// column may take one of these names (42701), so the names never bind to a
// user column.
var systemColumns = map[string]bool{
	"ctid": true, "xmin": true, "xmax": true, "cmin": true, "cmax": true, "tableoid": true,
}

// systemColumnConflict refuses a new column name that is a system column's.
func systemColumnConflict(name string) error {
	if systemColumns[name] {
		return sqlerr.New(sqlerr.DuplicateColumn, "column name %q conflicts with a system column name", name)
	}
	return nil
}

// systemColumnError is the error of a query referring to system column name
// of a lake table.
func systemColumnError(name string) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
		Message: fmt.Sprintf("system column %q is not supported on lake tables", name),
		Hint:    "Lake rows have no physical address or transaction stamps; identify rows by the table's primary key (ALTER TABLE … ADD PRIMARY KEY (…))."}
}
