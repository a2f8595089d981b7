//go:build lakesoul_faults

package faults

import (
	"fmt"
	"os"
	"strings"
)

// Enabled reports whether this build injects faults.
const Enabled = true

// armed are the points LAKESOUL_FAULTS names, "point=key,…", read once at
// start: Point(point, key) panics.
var armed = func() map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, f := range strings.Split(os.Getenv("LAKESOUL_FAULTS"), ",") {
		if name, key, ok := strings.Cut(strings.TrimSpace(f), "="); ok {
			m[[2]string{name, key}] = true
		}
	}
	return m
}()

// Point panics when LAKESOUL_FAULTS names point name for key.
func Point(name, key string) {
	if armed[[2]string{name, key}] {
		panic(fmt.Sprintf("injected fault %s=%s", name, key))
	}
}
