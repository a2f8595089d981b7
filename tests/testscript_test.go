package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTestScript: the test command a newcomer runs, scripts/test, is the
// one CI runs (.ci/run only calls it), and it runs the suite with
// PostgreSQL required: a catalog test run through it passes instead of
// skipping, with the S3 server it starts. It runs under the script itself
// (LAKESOUL_REQUIRE_PG=1), where what the script installs is in place;
// a plain `go test` skips it rather than install packages.
func TestTestScript(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) == 0 || cmds[len(cmds)-1] != "exec bash scripts/test" || strings.Contains(string(ci), "go test") {
		t.Errorf(".ci/run does not end in `exec bash scripts/test` (or runs go test itself): %q", cmds)
	}
	if os.Getenv(envRequirePG) != "1" {
		t.Skipf("runs under scripts/test (%s=1), which installs what it needs", envRequirePG)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LAKESOUL_") {
			env = append(env, kv)
		}
	}
	// Longer than testCtx: SeaweedFS is built once when it is missing.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/test", "-count=1", "-run", "^TestPsql$", "-v", "./tests/")
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("scripts/test: %v\n%s", err, s)
	}
	for _, want := range []string{"LAKESOUL_REQUIRE_PG=1 ", "SeaweedFS S3 on http://127.0.0.1:", "--- PASS: TestPsql "} {
		if !strings.Contains(s, want) {
			t.Errorf("scripts/test output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "--- SKIP") {
		t.Errorf("scripts/test skipped tests:\n%s", s)
	}
}
