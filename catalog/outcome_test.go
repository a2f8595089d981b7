package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// Every catalog transaction's outcome reaches the caller: a COMMIT that
// fails (here a deferred constraint trigger, pgtest.InstallCommitFaults)
// is an error of the call, for the owner's handle and for a workspace
// user's (whose calls run in a transaction under SET LOCAL ROLE), and it
// leaves the catalog as it was.

// handle is a catalog handle and a namespace it may create tables in.
type handle struct {
	name string
	c    *catalog.Catalog
	ns   string
}

// handles returns the owner's handle and a workspace user's: a workspace
// named after prefix with an admin user and a namespace of it.
func handles(t *testing.T, owner *catalog.Catalog, prefix string) []handle {
	t.Helper()
	ctx := context.Background()
	ws := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1_000_000)
	user := ws + "_u"
	for _, q := range []string{
		fmt.Sprintf("SELECT lakesoul.create_workspace('%s')", ws),
		fmt.Sprintf("SELECT lakesoul.create_user('%s', 'pw', '%s', admin => true)", user, ws),
	} {
		if _, err := owner.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	u := owner.As(user)
	if u.Role() != user {
		t.Fatalf("handle role %q", u.Role())
	}
	ns := ws + "_ns"
	if err := u.CreateNamespaceIn(ctx, ns, ws); err != nil {
		t.Fatal(err)
	}
	return []handle{{"owner", owner, "default"}, {"workspace user", u, ns}}
}

func wantFault(t *testing.T, what string, err error) {
	t.Helper()
	var pe *pgconn.PgError
	if err == nil {
		t.Fatalf("%s: a failed COMMIT reported success", what)
	}
	if !(strings.Contains(err.Error(), "injected failure at COMMIT") && errors.As(err, &pe) && pe.Code == pgtest.FaultCode) {
		t.Fatalf("%s: %v, want the injected failure %s", what, err, pgtest.FaultCode)
	}
}

func TestFailedCommitReachesCaller(t *testing.T) {
	owner, _ := openCatalog(t)
	ctx := context.Background()
	if err := pgtest.InstallCommitFaults(ctx, owner.Pool()); err != nil {
		t.Fatal(err)
	}
	for _, h := range handles(t, owner, "cf") {
		t.Run(h.name, func(t *testing.T) {
			c := h.c
			tbl := newTable(t, c, h.ns, "t", []string{"d"}, []string{"id"})
			commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("a0")})
			// An update, so that cleanup has a version to remove.
			commit(t, c, tbl, catalog.UpdateCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("a1")})
			before := catalogCounts(t, owner, tbl.ID)
			arm := func(target, mode string) {
				t.Helper()
				if err := pgtest.ArmCommitFault(ctx, owner.Pool(), target, mode); err != nil {
					t.Fatal(err)
				}
			}
			unchanged := func(what string) {
				t.Helper()
				if got := catalogCounts(t, owner, tbl.ID); got != before {
					t.Fatalf("%s: catalog changed by a failed commit: %q, was %q", what, got, before)
				}
				if got := fmt.Sprint(files(t, owner, tbl, "d=1")); got != "[a1]" {
					t.Fatalf("%s: files %s", what, got)
				}
			}
			arm(tbl.ID, "fail")
			_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: add("a1")}})
			wantFault(t, "Commit", err)
			unchanged("Commit")
			err = c.CommitMany(ctx, nil, []catalog.TableCommit{{TableID: tbl.ID, Op: catalog.MergeCommit,
				Parts: []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: add("a2")}}}})
			wantFault(t, "CommitMany", err)
			unchanged("CommitMany")
			_, err = c.Truncate(ctx, tbl.ID)
			wantFault(t, "Truncate", err)
			unchanged("Truncate")
			_, err = c.Rollback(ctx, tbl.ID, 0, "d=1")
			wantFault(t, "Rollback", err)
			unchanged("Rollback")
			_, err = c.DropPartition(ctx, tbl.ID, "d=1")
			wantFault(t, "DropPartition", err)
			unchanged("DropPartition")
			_, err = c.Cleanup(ctx, tbl.ID, time.Now().Add(time.Hour), "")
			wantFault(t, "Cleanup", err)
			unchanged("Cleanup")
			alt := *tbl
			alt.Properties = map[string]string{"k": "v"}
			wantFault(t, "AlterTable", c.AlterTable(ctx, &alt))
			unchanged("AlterTable")
			path, err := c.DropTable(ctx, h.ns, "t")
			wantFault(t, "DropTable", err)
			if path != "" {
				t.Fatalf("DropTable returned the path %q of a table it did not drop", path)
			}
			unchanged("DropTable")
			if _, err := c.TableByName(ctx, h.ns, "t"); err != nil {
				t.Fatalf("the table is gone after a failed drop: %v", err)
			}

			arm(tbl.ID, "")
			arm(h.ns, "fail")
			paths, err := c.DropNamespace(ctx, h.ns, true)
			wantFault(t, "DropNamespace", err)
			if len(paths) != 0 {
				t.Fatalf("DropNamespace returned paths %v of tables it did not drop", paths)
			}
			t2 := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: h.ns, Name: "t2", Path: "file:///tmp/wh/t2",
				Schema: tbl.Schema, HashBucketNum: -1}
			wantFault(t, "CreateTable", c.CreateTable(ctx, t2))
			if _, err := c.TableByName(ctx, h.ns, "t2"); err == nil {
				t.Fatal("a table whose creation failed at COMMIT exists")
			}
			arm(h.ns, "")
			unchanged("DropNamespace")
			if ok, err := c.NamespaceExists(ctx, h.ns); err != nil || !ok {
				t.Fatalf("namespace after a failed drop: %v %v", ok, err)
			}
			if h.name == "owner" {
				arm("fault_ns", "fail")
				wantFault(t, "CreateNamespace", c.CreateNamespace(ctx, "fault_ns"))
				arm("fault_ns", "")
				if ok, _ := c.NamespaceExists(ctx, "fault_ns"); ok {
					t.Fatal("a namespace whose creation failed at COMMIT exists")
				}
			}
		})
	}
}

// A connection lost while COMMIT runs leaves the outcome open; Commit and
// CommitMany learn it by re-sending the commit (idempotent per commit id),
// for the owner and for a role-switched handle alike. Here the backend is
// terminated while the deferred trigger sleeps inside COMMIT, so the first
// attempt did not land and the re-sent one does, exactly once.
func TestCommitLostDuringCommitIsRetried(t *testing.T) {
	owner, _ := openCatalog(t)
	ctx := context.Background()
	if err := pgtest.InstallCommitFaults(ctx, owner.Pool()); err != nil {
		t.Fatal(err)
	}
	for _, h := range handles(t, owner, "cr") {
		for _, many := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s many=%v", h.name, many), func(t *testing.T) {
				tbl := newTable(t, h.c, h.ns, fmt.Sprintf("t_%v", many), nil, []string{"id"})
				if err := pgtest.ArmCommitFault(ctx, owner.Pool(), tbl.ID, "sleep"); err != nil {
					t.Fatal(err)
				}
				parts := []catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("x")}}
				done := make(chan error, 1)
				go func() {
					var err error
					if many {
						err = h.c.CommitMany(ctx, nil, []catalog.TableCommit{{TableID: tbl.ID, Op: catalog.MergeCommit, Parts: parts}})
					} else {
						_, err = h.c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, parts)
					}
					done <- err
				}()
				pid := waitForSleepAtCommit(t, owner)
				if err := pgtest.ArmCommitFault(ctx, owner.Pool(), tbl.ID, ""); err != nil {
					t.Fatal(err)
				}
				var ok bool
				if err := owner.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
					t.Fatalf("terminate backend %d: %v %v", pid, ok, err)
				}
				if err := <-done; err != nil {
					t.Fatalf("commit across a connection lost at COMMIT: %v", err)
				}
				var rows, versions int
				if err := owner.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM data_commit_info WHERE commit_id = $1),
					(SELECT count(*) FROM partition_info WHERE table_id = $2)`, parts[0].CommitID, tbl.ID).Scan(&rows, &versions); err != nil {
					t.Fatal(err)
				}
				if rows != 1 || versions != 1 {
					t.Fatalf("%d commit rows, %d versions; want exactly one of each", rows, versions)
				}
			})
		}
	}
}

// waitForSleepAtCommit returns the backend that sleeps in the fault
// trigger.
func waitForSleepAtCommit(t *testing.T, c *catalog.Catalog) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pid int
		err := c.Pool().QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity
			WHERE wait_event = 'PgSleep' AND datname = current_database()`).Scan(&pid)
		if err == nil {
			return pid
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no backend sleeps at COMMIT")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
