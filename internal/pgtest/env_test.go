package pgtest

import (
	"fmt"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// recordingTB records Skipf and Fatalf instead of ending the test.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestFailStart(t *testing.T) {
	missing := fmt.Errorf("%w: tried initdb on PATH", pgcluster.ErrNoBinaries)
	for _, tc := range []struct {
		name, require string
		err           error
		wantSkip      bool
	}{
		{"no binaries skip", "", missing, true},
		{"no binaries required", "1", missing, false},
		{"other error", "", fmt.Errorf("initdb failed"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvRequirePG, tc.require)
			r := &recordingTB{TB: t}
			failStart(r, tc.err)
			if skipped := r.skipped != ""; skipped != tc.wantSkip || skipped == (r.failed != "") {
				t.Errorf("skipped %q, failed %q", r.skipped, r.failed)
			}
		})
	}
}

func TestDSNParallel(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			if got := queryString(t, connect(t, DSN(t)), "SELECT count(*)::text FROM pg_tables WHERE schemaname = 'public'"); got != "0" {
				t.Errorf("fresh database has %s tables", got)
			}
		})
	}
}
