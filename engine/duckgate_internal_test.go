package engine

import "testing"

// The engine's own DuckDB functions are listed from DuckDB, without
// DuckDB's built-ins or the scan function (which the gate admits only
// with the session's handles).
func TestEngineFunctionsListed(t *testing.T) {
	s, _ := newInternalSession(t)
	f := s.e.engineFuncs
	for _, name := range []string{"l2_distance", "lakesoul_json_field", "lakesoul_divisor"} {
		if !f[name] {
			t.Errorf("%s is not listed as an engine function", name)
		}
	}
	for _, name := range []string{scanFunctionName, "read_parquet", "glob", "current_setting", "lower", "sum"} {
		if f[name] {
			t.Errorf("%s is listed as an engine function", name)
		}
	}
}
