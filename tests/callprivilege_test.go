package tests

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestCallsOnAnUnreadableTableAreRefused: a workspace user's CALL naming a
// table of another workspace is refused (42P01 or 42501) and changes
// nothing, for every procedure. The procedures are not listed here: every
// function of the catalog's lakesoul schema and every procedure the server
// names in its hint for a missing one is tried as a CALL target, with
// each argument shape the maintenance calls take, naming the table by name
// and by id — so a procedure added later is covered without editing this
// test. Those the server does not offer as procedures answer 42883
// "procedure … does not exist"; each one it offers must be refused at least
// once with a privilege error, and alice's own table accepts the same calls
// (so the refusals are about the table, not the arguments).
func TestCallsOnAnUnreadableTableAreRefused(t *testing.T) {
	f := newPrivilegeFixture(t, "pvc")
	ctx := testCtx(t)
	procs := queryStrings(t, ctx, f.s.catalogConn(t),
		"SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'lakesoul'::regnamespace ORDER BY 1")
	if len(procs) < 20 {
		t.Fatalf("the catalog's lakesoul schema has %d functions: not the catalog", len(procs))
	}
	// And the procedures the server names when asked for one it lacks.
	_, err := f.alice.Exec(ctx, "CALL lakesoul.no_such_procedure()")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42883" {
		t.Fatalf("CALL of a missing procedure: %v", err)
	}
	for _, m := range regexp.MustCompile(`CALL lakesoul\.(\w+)\(`).FindAllStringSubmatch(pe.Hint, -1) {
		procs = append(procs, m[1])
	}
	shapes := []string{
		"'%s'",
		"'%s', version => 0",
		"'%s', now() + interval '1 hour'",
		"'%s', '-5'",
		"'%s', 'file:///nonexistent/x.parquet'",
		"'%s', new_bucket_num => 2",
	}
	history := func() []string {
		return queryStrings(t, ctx, f.bob, "SELECT version::text || ' ' || commit_op FROM lakesoul.history('"+f.tag+"_sb.secret') ORDER BY 1")
	}
	before := history()
	offered := 0
	for _, p := range procs {
		exists, refused := false, false
		var others []string
		for _, shape := range shapes {
			for _, tbl := range []string{f.tag + "_sb.secret", f.bobTableID} {
				call := "CALL lakesoul." + p + "(" + fmt.Sprintf(shape, tbl) + ")"
				_, err := f.alice.Exec(ctx, call)
				switch code := pgCode(err); {
				case err == nil:
					exists = true
					t.Errorf("alice: %s succeeded on bob's table", call)
				case code == "42883" && strings.Contains(err.Error(), "procedure lakesoul."+p+" does not exist"):
				case code == "42P01" || code == "42501":
					exists, refused = true, true
				default:
					exists = true
					others = append(others, code)
				}
			}
		}
		if refused {
			offered++
		} else if exists {
			t.Errorf("CALL lakesoul.%s: offered, but no argument shape was refused with 42P01 or 42501 (%v)", p, others)
		}
	}
	// rollback, cleanup, drop_partition, compact, import at least.
	if offered < 5 {
		t.Errorf("only %d procedures refused bob's table with a privilege error", offered)
	}
	wantRows(t, "bob's table", queryStrings(t, ctx, f.bob, "SELECT v FROM "+f.tag+"_sb.secret"), []string{"bob only"})
	wantRows(t, "bob's history", history(), before)
	// The same calls reach alice's own table.
	mustExec(t, ctx, f.alice, "CALL lakesoul.compact('"+f.tag+"_sa.t')",
		"CALL lakesoul.cleanup('"+f.tag+"_sa.t', now() - interval '1 hour')")
	f.assertStillAlice(t)
}
