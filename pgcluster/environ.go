package pgcluster

import (
	"os"
	"strings"
)

// childEnv is the environment of the PostgreSQL programs pgcluster runs
// (initdb, postgres): only the variables they use from the caller's —
// locale, time zone, temp dir, PATH, the OOM-killer settings — and never
// the caller's secrets (an admin password in LAKESOUL_ADMIN_PASSWORD, AWS
// credentials, …), which every backend, and so every function that reads
// its environment, would otherwise inherit. It is an allowlist, so a
// secret under a new name stays out too.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "TZ", name == "TMPDIR", name == "LANG", name == "LANGUAGE",
			strings.HasPrefix(name, "LC_"), strings.HasPrefix(name, "PG_OOM_ADJUST_"):
			env = append(env, kv)
		}
	}
	return env
}
