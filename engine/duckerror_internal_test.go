package engine

import (
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// TestDuckDBErrorsHideScanHandles: a DuckDB message quoting the engine's
// lakesoul_scan('<handle>') FROM item reaches the client without the
// session's handle.
func TestDuckDBErrorsHideScanHandles(t *testing.T) {
	for _, msg := range []string{
		`Binder Error: No function matches the given name and argument types 'lower(INTEGER)' in lakesoul_scan('s3cr3t:42')`,
		`Binder Error: Values list "lakesoul_scan('s3cr3t:42:p7')" does not have a column named "x"`,
		`Catalog Error: Table Function lakesoul_scan('it''s:s3cr3t') failed`,
	} {
		e := mapDuckDBError(&duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: msg})
		if e == nil {
			t.Fatalf("%q: not mapped", msg)
		}
		if strings.Contains(e.Message, "s3cr3t") || strings.Contains(e.Message, "lakesoul_scan(") {
			t.Errorf("%q → %q: the scan handle is shown", msg, e.Message)
		}
		if !strings.Contains(e.Message, "lake table") {
			t.Errorf("%q → %q: the scan is not named", msg, e.Message)
		}
	}
}
