package pgtest

import (
	"errors"
	"os"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

const (
	// EnvCatalogURL names an existing server to create test databases in
	// instead of starting one.
	EnvCatalogURL = "LAKESOUL_TEST_CATALOG_URL"
	// EnvRequirePG, when "1", turns the skip for missing PostgreSQL
	// binaries into a failure.
	EnvRequirePG = "LAKESOUL_REQUIRE_PG"
)

// failStart ends the test after a cluster could not be started: a skip
// when PostgreSQL is not installed (unless EnvRequirePG=1), else a failure.
func failStart(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, pgcluster.ErrNoBinaries) && os.Getenv(EnvRequirePG) != "1" {
		t.Skipf("pgtest: no PostgreSQL to test against (set %s or install the server; %s=1 makes this a failure): %v",
			EnvCatalogURL, EnvRequirePG, err)
		return
	}
	t.Fatalf("pgtest: %v", err)
}
