package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// versionTimes commits one MergeCommit per file list to desc, a few
// milliseconds apart so every version has its own timestamp, and returns the
// commit ids and each version's committed_at.
func commitSpaced(t *testing.T, c *catalog.Catalog, tbl *catalog.Table, desc string, op string, fileLists ...[]string) ([]uuid.UUID, []time.Time) {
	t.Helper()
	var ids []uuid.UUID
	for _, fl := range fileLists {
		time.Sleep(3 * time.Millisecond)
		id := uuid.New()
		commit(t, c, tbl, op, catalog.PartitionCommit{Desc: desc, CommitID: id, Ops: add(fl...)})
		ids = append(ids, id)
	}
	time.Sleep(3 * time.Millisecond)
	return ids, committedAt(t, c, tbl, desc)
}

// committedAt returns the committed_at of every version of desc, by version.
func committedAt(t *testing.T, c *catalog.Catalog, tbl *catalog.Table, desc string) []time.Time {
	t.Helper()
	h, err := c.History(context.Background(), tbl.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, v := range h {
		if v.Desc == desc {
			if v.Version != len(out) {
				t.Fatalf("history of %s out of order: %+v", desc, h)
			}
			out = append(out, v.CommittedAt)
		}
	}
	return out
}

// paths flattens resolved partitions to "desc:path" strings in read order.
func paths(parts []catalog.PartitionFiles) string {
	var out []string
	for _, p := range parts {
		for _, f := range p.Files {
			out = append(out, p.Desc+":"+f.Path)
		}
	}
	return strings.Join(out, " ")
}

func wantFiles(t *testing.T, what string, parts []catalog.PartitionFiles, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := paths(parts); got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

// catalogCounts is a fingerprint of every metadata row of a table, to show
// that a failed call left the catalog unchanged.
func catalogCounts(t *testing.T, c *catalog.Catalog, tableID string) string {
	t.Helper()
	var s string
	err := c.Pool().QueryRow(context.Background(), `SELECT
		(SELECT coalesce(string_agg(partition_desc || '@' || version || ':' || commit_op || ':' || array_to_string(snapshot, ','), ' '
		                 ORDER BY partition_desc, version), '') FROM partition_info WHERE table_id = $1) || ' | ' ||
		(SELECT coalesce(string_agg(commit_id::text || committed, ' ' ORDER BY commit_id), '') FROM data_commit_info WHERE table_id = $1)`,
		tableID).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Scenario 33: versions at t0 < t1 < t2; a snapshot at T with t1 < T <= t2
// reads version 1, at T = t1 exactly version 0 (strict "<").
// Scenario 34: a snapshot before a partition's first version has nothing of it.
func TestSnapshotByTimestamp(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	_, ts := commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"a0"}, []string{"a1"}, []string{"a2"})
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{ts[1], "d=1:a0"},
		{ts[1].Add(time.Millisecond), "d=1:a0 d=1:a1"},
		{ts[2], "d=1:a0 d=1:a1"},
		{ts[2].Add(time.Millisecond), "d=1:a0 d=1:a1 d=1:a2"},
		{ts[0], ""},
	} {
		parts, err := c.SnapshotAt(ctx, tbl.ID, tc.at, "")
		wantFiles(t, fmt.Sprintf("snapshot at %s", tc.at), parts, err, tc.want)
	}
	parts, err := c.SnapshotAt(ctx, tbl.ID, ts[2], "")
	if err != nil || len(parts) != 1 || parts[0].Version != 1 {
		t.Fatalf("snapshot at t2 should read version 1: %+v %v", parts, err)
	}

	// Scenario 34: partition d=2 starts after t2.
	_, ts2 := commitSpaced(t, c, tbl, "d=2", catalog.MergeCommit, []string{"b0"})
	parts, err = c.SnapshotAt(ctx, tbl.ID, ts2[0], "")
	wantFiles(t, "snapshot before d=2 existed", parts, err, "d=1:a0 d=1:a1 d=1:a2")
	parts, err = c.SnapshotAt(ctx, tbl.ID, ts2[0], "d=2")
	wantFiles(t, "snapshot of d=2 before it existed", parts, err, "")
	parts, err = c.SnapshotAt(ctx, "default.t", time.Now().Add(time.Hour), "d=2")
	wantFiles(t, "snapshot of d=2 by name", parts, err, "d=2:b0")
}

func TestSnapshotByVersion(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"a0"}, []string{"a1"})
	commitSpaced(t, c, tbl, "d=2", catalog.MergeCommit, []string{"b0"})
	parts, err := c.SnapshotAtVersion(ctx, tbl.ID, 1, "d=1")
	wantFiles(t, "version 1 of d=1", parts, err, "d=1:a0 d=1:a1")
	parts, err = c.SnapshotAtVersion(ctx, tbl.ID, 0, "")
	wantFiles(t, "version 0 of every partition", parts, err, "d=1:a0 d=2:b0")
	parts, err = c.SnapshotAtVersion(ctx, tbl.ID, 1, "")
	wantFiles(t, "version 1 of every partition that has one", parts, err, "d=1:a0 d=1:a1")
}

// Bad input: clear errors, catalog unchanged.
func TestTimeTravelBadInput(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	before := time.Now().Add(-time.Hour)
	commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"a0"}, []string{"a1"})
	fp := catalogCounts(t, c, tbl.ID)
	for _, tc := range []struct {
		name string
		code string
		call func() error
	}{
		{"unknown version", sqlerr.InvalidParameterValue, func() error {
			_, err := c.SnapshotAtVersion(ctx, tbl.ID, 7, "d=1")
			return err
		}},
		{"unknown version, all partitions", sqlerr.InvalidParameterValue, func() error {
			_, err := c.SnapshotAtVersion(ctx, tbl.ID, 7, "")
			return err
		}},
		{"unknown partition", sqlerr.UndefinedObject, func() error {
			_, err := c.SnapshotAtVersion(ctx, tbl.ID, 0, "d=9")
			return err
		}},
		{"unknown partition by time", sqlerr.UndefinedObject, func() error {
			_, err := c.SnapshotAt(ctx, tbl.ID, time.Now(), "d=9")
			return err
		}},
		{"before the table existed", sqlerr.InvalidParameterValue, func() error {
			_, err := c.SnapshotAt(ctx, tbl.ID, before, "")
			return err
		}},
		{"changes ending before the table existed", sqlerr.InvalidParameterValue, func() error {
			_, err := c.Changes(ctx, tbl.ID, before.Add(-time.Hour), before, "")
			return err
		}},
		{"reversed interval", sqlerr.InvalidParameterValue, func() error {
			_, err := c.Changes(ctx, tbl.ID, time.Now(), before, "")
			return err
		}},
		{"unknown table", sqlerr.UndefinedTable, func() error {
			_, err := c.SnapshotAt(ctx, "default.nope", time.Now(), "")
			return err
		}},
		{"rollback to an unknown version", sqlerr.InvalidParameterValue, func() error {
			_, err := c.Rollback(ctx, tbl.ID, 5, "d=1")
			return err
		}},
		{"rollback of an unknown partition", sqlerr.UndefinedObject, func() error {
			_, err := c.Rollback(ctx, tbl.ID, 0, "d=9")
			return err
		}},
		{"rollback before the table existed", sqlerr.InvalidParameterValue, func() error {
			_, err := c.RollbackTo(ctx, tbl.ID, before, "")
			return err
		}},
		{"drop of an unknown partition", sqlerr.UndefinedObject, func() error {
			_, err := c.DropPartition(ctx, tbl.ID, "d=9")
			return err
		}},
		{"cleanup of an unknown partition", sqlerr.UndefinedObject, func() error {
			_, err := c.Cleanup(ctx, tbl.ID, time.Now(), "d=9")
			return err
		}},
		{"delete commit to an unknown partition", sqlerr.UndefinedObject, func() error {
			_, err := c.Commit(ctx, nil, tbl.ID, catalog.DeleteCommit, []catalog.PartitionCommit{{Desc: "d=9", CommitID: uuid.New()}})
			return err
		}},
		{"commit with a read version that does not exist", sqlerr.InvalidParameterValue, func() error {
			read := 9
			_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: add("x"), ReadVersion: &read}})
			return err
		}},
	} {
		err := tc.call()
		if got := sqlerr.Code(err); got != tc.code {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", tc.name, got, err, tc.code)
		}
		if got := catalogCounts(t, c, tbl.ID); got != fp {
			t.Fatalf("%s changed the catalog:\n%s\n%s", tc.name, fp, got)
		}
	}
}

// Scenario 35: an incremental read [s, e) returns the commits added in the
// interval when a version exists before s, else the whole snapshot at e.
func TestChangesBetweenTimestamps(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	_, ts := commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c0"}, []string{"c1"}, []string{"c2"})
	parts, err := c.Changes(ctx, tbl.ID, ts[1], ts[2], "")
	wantFiles(t, "[t1, t2)", parts, err, "-5:c1")
	parts, err = c.Changes(ctx, tbl.ID, ts[1], time.Time{}, "")
	wantFiles(t, "[t1, ∞)", parts, err, "-5:c1 -5:c2")
	parts, err = c.Changes(ctx, tbl.ID, ts[0].Add(-time.Millisecond), ts[2], "")
	wantFiles(t, "no version before the start: whole snapshot at the end", parts, err, "-5:c0 -5:c1")
	parts, err = c.Changes(ctx, tbl.ID, ts[2].Add(time.Millisecond), time.Time{}, "")
	wantFiles(t, "after the last version", parts, err, "")
}

// Scenario 36: an incremental read spanning an UpdateCommit (not the first
// version in range) is empty; starting at the update it is not.
func TestChangesAcrossUpdate(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c0"}, []string{"c1"})
	read := 1
	commit(t, c, tbl, catalog.UpdateCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("u2"), ReadVersion: &read})
	_, ts := commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c3"})
	parts, err := c.Changes(ctx, tbl.ID, ts[1], time.Time{}, "")
	wantFiles(t, "across the update", parts, err, "")
	parts, err = c.Changes(ctx, tbl.ID, ts[3], time.Time{}, "")
	wantFiles(t, "from the update on", parts, err, "-5:c3")
}

// Scenario 37: an incremental read spanning a CompactionCommit does not
// re-emit the compacted files but includes the writes the compaction absorbed.
func TestChangesAcrossCompaction(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c0"}, []string{"c1"})
	read := 1
	commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c2"})
	commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("comp"), ReadVersion: &read})
	_, ts := commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"c4"})
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[comp c2 c4]" {
		t.Fatalf("live files %s", got)
	}
	parts, err := c.Changes(ctx, tbl.ID, ts[1], time.Time{}, "")
	wantFiles(t, "from v1 across the compaction", parts, err, "-5:c1 -5:c2 -5:c4")
	parts, err = c.Changes(ctx, tbl.ID, ts[3], time.Time{}, "")
	wantFiles(t, "from the compaction on", parts, err, "-5:c4")
	parts, err = c.Changes(ctx, tbl.ID, ts[2].Add(time.Millisecond), time.Time{}, "")
	wantFiles(t, "from v2 (compaction absorbed c2, already in the base)", parts, err, "-5:c4")
}

// Scenario 38: rolling back to version 2 when the latest is 5 creates version 6
// with version 2's snapshot; versions 0..5 remain.
func TestRollback(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	_, ts := commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit,
		[]string{"f0"}, []string{"f1"}, []string{"f2"}, []string{"f3"}, []string{"f4"}, []string{"f5"})
	commitSpaced(t, c, tbl, "d=2", catalog.MergeCommit, []string{"g0"}, []string{"g1"})
	v, err := c.Rollback(ctx, tbl.ID, 2, "d=1")
	if err != nil || len(v) != 1 || v["d=1"] != 6 {
		t.Fatalf("rollback: %v %v", v, err)
	}
	var snaps []string
	if err := c.Pool().QueryRow(ctx, `SELECT array_agg(snapshot::text ORDER BY version) FROM partition_info
		WHERE table_id = $1 AND partition_desc = 'd=1' AND version IN (2, 6)`, tbl.ID).Scan(&snaps); err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 || snaps[0] != snaps[1] {
		t.Fatalf("version 6 snapshot differs from version 2: %v", snaps)
	}
	if got := fmt.Sprint(files(t, c, tbl, "d=1")); got != "[f0 f1 f2]" {
		t.Fatalf("after rollback %s", got)
	}
	h, _ := c.History(ctx, tbl.ID)
	if len(h) != 7+2 {
		t.Fatalf("history has %d versions, want 9", len(h))
	}
	// By time: every partition goes back to what a snapshot at ts[1] read
	// (d=2 did not exist then and is left alone).
	v, err = c.RollbackTo(ctx, tbl.ID, ts[1], "")
	if err != nil || fmt.Sprint(v) != "map[d=1:7]" {
		t.Fatalf("rollback by time: %v %v", v, err)
	}
	if got := fmt.Sprint(files(t, c, tbl, "d=1")); got != "[f0]" {
		t.Fatalf("after rollback by time %s", got)
	}
	// Writes after a rollback accumulate on it.
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("f8")})
	if got := fmt.Sprint(files(t, c, tbl, "d=1")); got != "[f0 f8]" {
		t.Fatalf("write after rollback %s", got)
	}
	// A compaction prepared before the rollback does not undo it.
	read := 5
	v = commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("stale"), ReadVersion: &read})
	if _, ok := v["d=1"]; ok {
		t.Fatalf("stale compaction overwrote a rollback: %v", v)
	}
}

// Scenario 39: cleanup up to T deletes the files and metadata of versions at
// or before T only when the first later version stands alone (compaction or
// update); otherwise it refuses.
func TestCleanup(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	_, ts := commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"f0"}, []string{"f1"}, []string{"f2"})
	fp := catalogCounts(t, c, tbl.ID)
	_, err := c.Cleanup(ctx, tbl.ID, ts[1], "d=1")
	if sqlerr.Code(err) != "55000" || !strings.Contains(err.Error(), "depend") {
		t.Fatalf("cleanup before a merge: %v", err)
	}
	if got := catalogCounts(t, c, tbl.ID); got != fp {
		t.Fatal("refused cleanup changed the catalog")
	}
	// Table-wide, a partition that must refuse is skipped.
	if cf, err := c.Cleanup(ctx, tbl.ID, ts[1], ""); err != nil || len(cf) != 0 {
		t.Fatalf("table-wide cleanup: %v %v", cf, err)
	}
	read := 2
	commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("comp"), ReadVersion: &read})
	_, ts = commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"f4"})
	cf, err := c.Cleanup(ctx, tbl.ID, ts[2], "d=1")
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, f := range cf {
		deleted = append(deleted, f.Desc+":"+f.Path)
	}
	slices.Sort(deleted)
	if fmt.Sprint(deleted) != "[d=1:f0 d=1:f1 d=1:f2]" {
		t.Fatalf("cleanup returned %v", deleted)
	}
	if got := fmt.Sprint(files(t, c, tbl, "d=1")); got != "[comp f4]" {
		t.Fatalf("reads changed by cleanup: %s", got)
	}
	h, _ := c.History(ctx, tbl.ID)
	if len(h) != 2 || h[0].Version != 3 {
		t.Fatalf("history after cleanup: %+v", h)
	}
	var n int
	if err := c.Pool().QueryRow(ctx, "SELECT count(*) FROM data_commit_info WHERE table_id = $1", tbl.ID).Scan(&n); err != nil || n != 2 {
		t.Fatalf("commit rows after cleanup: %d %v", n, err)
	}
	// The newest version always stays, even when older than T.
	cf, err = c.Cleanup(ctx, tbl.ID, time.Now().Add(time.Hour), "")
	if err != nil || len(cf) != 0 {
		t.Fatalf("cleanup with a merge as the newest version: %v %v", cf, err)
	}
	if got := fmt.Sprint(files(t, c, tbl, "d=1")); got != "[comp f4]" {
		t.Fatalf("reads changed by cleanup: %s", got)
	}
}

// A commit still listed by a kept version (absorbed by a compaction) keeps its
// row and files when older versions are cleaned up; so does an abandoned
// compaction's output get cleaned up.
func TestCleanupKeepsReferencedCommits(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"f0"}, []string{"f1"})
	read := 1
	_, ts := commitSpaced(t, c, tbl, "-5", catalog.MergeCommit, []string{"f2"})
	commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("comp"), ReadVersion: &read})
	// An update lands; a compaction prepared before it is abandoned.
	read = 3
	commit(t, c, tbl, catalog.UpdateCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("u"), ReadVersion: &read})
	v := commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("abandoned"), ReadVersion: &read})
	if len(v) != 0 {
		t.Fatalf("compaction not abandoned: %v", v)
	}
	time.Sleep(3 * time.Millisecond)
	// Up to v2: v3 (the compaction [comp, f2]) is kept and still lists f2.
	cf, err := c.Cleanup(ctx, tbl.ID, ts[2], "")
	if err != nil {
		t.Fatal(err)
	}
	if got := cleaned(cf); got != "[f0 f1]" {
		t.Fatalf("cleanup returned %s", got)
	}
	parts, err := c.SnapshotAtVersion(ctx, tbl.ID, 3, "")
	wantFiles(t, "compaction version after cleanup", parts, err, "-5:comp -5:f2")
	// Up to now: everything but the update's version goes, including the
	// abandoned compaction's output.
	cf, err = c.Cleanup(ctx, tbl.ID, time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := cleaned(cf); got != "[abandoned comp f2]" {
		t.Fatalf("cleanup returned %s", got)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[u]" {
		t.Fatalf("reads changed by cleanup: %s", got)
	}
	var n int
	if err := c.Pool().QueryRow(ctx, "SELECT count(*) FROM data_commit_info WHERE table_id = $1", tbl.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("commit rows after cleanup: %d %v", n, err)
	}
}

func cleaned(cf []catalog.CleanedFile) string {
	var out []string
	for _, f := range cf {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// Scenario 40: a dropped partition disappears from listings and reads; its
// files are not deleted (the call returns none); a later write starts it again.
func TestDropPartition(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	commitSpaced(t, c, tbl, "d=1", catalog.MergeCommit, []string{"a0"}, []string{"a1"})
	commitSpaced(t, c, tbl, "d=2", catalog.MergeCommit, []string{"b0"})
	n, err := c.DropPartition(ctx, tbl.ID, "d=1")
	if err != nil || n != 2 {
		t.Fatalf("drop partition: %d %v", n, err)
	}
	parts, err := c.LiveFiles(ctx, tbl.ID, nil)
	wantFiles(t, "after drop", parts, err, "d=2:b0")
	v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("a9")})
	if v["d=1"] != 0 {
		t.Fatalf("write after drop got %v", v)
	}
}

// Truncate commits an empty version of every non-empty partition at once;
// time travel still reads what was there.
func TestTruncate(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, nil)
	commitSpaced(t, c, tbl, "d=1", catalog.AppendCommit, []string{"a0"})
	_, ts := commitSpaced(t, c, tbl, "d=2", catalog.AppendCommit, []string{"b0"})
	v, err := c.Truncate(ctx, "default.t")
	if err != nil || fmt.Sprint(v) != "map[d=1:1 d=2:1]" {
		t.Fatalf("truncate: %v %v", v, err)
	}
	parts, err := c.LiveFiles(ctx, tbl.ID, nil)
	wantFiles(t, "after truncate", parts, err, "")
	parts, err = c.SnapshotAt(ctx, tbl.ID, ts[0].Add(time.Millisecond), "")
	wantFiles(t, "before truncate", parts, err, "d=1:a0 d=2:b0")
	if v, err := c.Truncate(ctx, tbl.ID); err != nil || len(v) != 0 {
		t.Fatalf("truncate of an empty table: %v %v", v, err)
	}
	// An incremental read across the truncate is empty, not a resurrection.
	parts, err = c.Changes(ctx, tbl.ID, ts[0].Add(time.Millisecond), time.Time{}, "d=1")
	wantFiles(t, "changes across truncate", parts, err, "")
}

func TestHistoryAndPruning(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d", "r"}, []string{"id"})
	for _, d := range []string{"d=1,r=a", "d=1,r=b", "d=2,r=a", "d=10,r=a"} {
		commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: d, CommitID: uuid.New(), Ops: add("f" + d)})
	}
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "d=1,r=a", CommitID: uuid.New(), Ops: add("g")})
	h, err := c.History(ctx, "t")
	if err != nil || len(h) != 5 {
		t.Fatalf("history: %+v %v", h, err)
	}
	for i := 1; i < len(h); i++ {
		if h[i].CommittedAt.Before(h[i-1].CommittedAt) {
			t.Fatalf("history not in time order: %+v", h)
		}
	}
	parts, err := c.LiveFilesMatching(ctx, tbl.ID, []string{"d=1"})
	wantFiles(t, "d=1", parts, err, "d=1,r=a:fd=1,r=a d=1,r=a:g d=1,r=b:fd=1,r=b")
	parts, err = c.LiveFilesMatching(ctx, tbl.ID, []string{"r=a", "d=1"})
	wantFiles(t, "d=1 and r=a", parts, err, "d=1,r=a:fd=1,r=a d=1,r=a:g")
	parts, err = c.LiveFilesMatching(ctx, tbl.ID, []string{"r=c"})
	wantFiles(t, "r=c", parts, err, "")
}
