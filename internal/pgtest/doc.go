// Package pgtest gives tests a real PostgreSQL database.
//
// DSN returns a fresh, empty database per call. The server is, in order:
//
//   - the one named by LAKESOUL_TEST_CATALOG_URL (a URL or keyword/value
//     DSN of a superuser or a role with CREATEDB), in which each call
//     creates a database; or
//   - a throwaway cluster that pgcluster starts in a temp dir the first time
//     a test of the binary asks for it, with durability off (fsync,
//     synchronous_commit and full_page_writes off), shared by all the tests
//     of the package.
//
// When no PostgreSQL binaries can be found for the throwaway cluster, tests
// calling DSN or Cluster are skipped, or fail if LAKESOUL_REQUIRE_PG=1 (set
// it in CI so that a missing install is not mistaken for a pass).
//
// # Lifetime of the shared cluster
//
// A package using DSN should have
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// which stops the shared cluster and removes its directory after the run.
// Without it, or when the test binary dies (a panic, a timeout, a kill), the
// server still does not outlive the binary: on Linux pgcluster asks the
// kernel to send it a fast-shutdown signal when the binary exits. Only its
// temp directory (os.TempDir()/lakesoul-pgtest-<pid>-*) stays behind; the
// next test binary using pgtest removes directories whose process is gone.
package pgtest
