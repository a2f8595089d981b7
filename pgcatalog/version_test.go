package pgcatalog

import (
	"strings"
	"testing"
)

// TestRewriteVersionFunctions checks that version() and
// current_setting('server_version[_num]') answer the claimed version, keep
// PostgreSQL's result column names, and that other calls stay.
func TestRewriteVersionFunctions(t *testing.T) {
	if !strings.HasPrefix(VersionString, "PostgreSQL "+ServerVersion+" ") {
		t.Fatalf("VersionString %q does not start with PostgreSQL %s", VersionString, ServerVersion)
	}
	v := "'" + VersionString + "'::text"
	for _, tc := range []struct{ in, want string }{
		{"SELECT version()", "SELECT " + v + " AS version"},
		{"SELECT pg_catalog.version() AS v, current_setting('server_version'), current_setting('SERVER_VERSION_NUM', true)::int",
			"SELECT " + v + " AS v, '16.4'::text AS current_setting, '160004'::text::int"},
		{"SELECT current_setting('server_version_num'::text) FROM pg_class",
			"SELECT '160004'::text AS current_setting FROM lakesoul_pg.pg_class pg_class"},
		{"SELECT x FROM (SELECT version() x) s WHERE version() LIKE 'P%'",
			"SELECT x FROM (SELECT " + v + " AS x) s WHERE " + v + " LIKE 'P%'"},
		// Other settings and non-literal names go to the emulation (which hides
		// the catalog server's own settings); other schemas and arities stay.
		{"SELECT current_setting('TimeZone'), current_setting($1), s.version(), version(1), current_setting(name => 'server_version')",
			"SELECT lakesoul_pg.current_setting('TimeZone'), lakesoul_pg.current_setting($1), s.version(), version(1), current_setting(name := 'server_version')"},
	} {
		got, err := RewriteSQL(tc.in)
		if err != nil {
			t.Errorf("RewriteSQL(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("RewriteSQL(%q)\n got  %s\n want %s", tc.in, got, tc.want)
		}
	}
}
