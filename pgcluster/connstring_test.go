package pgcluster

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestConnStringQuoting(t *testing.T) {
	c := &Cluster{opts: Options{SuperUser: "lake soul", Port: 5433}, socketDir: `/tmp/a b\c`}
	for _, db := range []string{"plain", "with space", `it's`, `back\slash`, ""} {
		cfg, err := pgx.ParseConfig(c.ConnString(db))
		if err != nil {
			t.Fatalf("%q: %v", db, err)
		}
		if cfg.Database != db || cfg.User != "lake soul" || cfg.Host != `/tmp/a b\c` || cfg.Port != 5433 {
			t.Errorf("ConnString(%q) parsed to db %q user %q host %q port %d", db, cfg.Database, cfg.User, cfg.Host, cfg.Port)
		}
	}
}

func TestSocketFits(t *testing.T) {
	dir := "/"
	for len(dir)+len("/.s.PGSQL.65535") < maxSocketPath {
		dir += "x"
	}
	if !socketFits(dir, 65535) {
		t.Errorf("%d-byte path should fit", len(dir)+len("/.s.PGSQL.65535"))
	}
	if socketFits(dir+"x", 65535) {
		t.Errorf("%d-byte path should not fit", len(dir)+1+len("/.s.PGSQL.65535"))
	}
}
