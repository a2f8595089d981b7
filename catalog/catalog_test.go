package catalog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openCatalog(t *testing.T) (*catalog.Catalog, string) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	c, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, dsn
}

func newTable(t *testing.T, c *catalog.Catalog, ns, name string, rangeCols, pk []string) *catalog.Table {
	t.Helper()
	tbl := &catalog.Table{
		ID: "table_" + uuid.NewString(), Namespace: ns, Name: name, Path: "file:///tmp/wh/" + ns + "/" + name,
		Schema: arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		}, nil),
		RangeCols: rangeCols, PKCols: pk, HashBucketNum: -1,
	}
	if len(pk) > 0 {
		tbl.HashBucketNum = 4
	}
	if err := c.CreateTable(context.Background(), tbl); err != nil {
		t.Fatalf("create table: %v", err)
	}
	return tbl
}

func add(paths ...string) []catalog.FileOp {
	var ops []catalog.FileOp
	for _, p := range paths {
		ops = append(ops, catalog.FileOp{Path: p, Op: "add", Size: 1, ExistCols: []string{"id", "v"}})
	}
	return ops
}

func commit(t *testing.T, c *catalog.Catalog, tbl *catalog.Table, op string, parts ...catalog.PartitionCommit) map[string]int {
	t.Helper()
	v, err := c.Commit(context.Background(), nil, tbl.ID, op, parts)
	if err != nil {
		t.Fatalf("commit %s: %v", op, err)
	}
	return v
}

func files(t *testing.T, c *catalog.Catalog, tbl *catalog.Table, desc string) []string {
	t.Helper()
	parts, err := c.LiveFiles(context.Background(), tbl.ID, []string{desc})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range parts {
		for _, f := range p.Files {
			out = append(out, f.Path)
		}
	}
	return out
}

func TestMetadataAfterInit(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	var props, domain string
	if err := c.Pool().QueryRow(ctx, "SELECT properties::text, domain FROM namespace").Scan(&props, &domain); err != nil {
		t.Fatal(err)
	}
	if props != "{}" || domain != "public" {
		t.Fatalf("default namespace: props %q domain %q", props, domain)
	}
	// Scenario 2 and 3: partitions and hashBucketNum as LakeSoul stores them.
	if err := c.CreateNamespace(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	pk := newTable(t, c, "s", "t", []string{"d"}, []string{"id"})
	plain := newTable(t, c, "s", "p", nil, nil)
	for _, tc := range []struct {
		tbl               *catalog.Table
		partitions, nbuck string
	}{{pk, "d;id", "4"}, {plain, ";", "-1"}} {
		var partitions, nb string
		var names, paths int
		err := c.Pool().QueryRow(ctx, `SELECT partitions, properties->>'hashBucketNum',
			(SELECT count(*) FROM table_name_id WHERE table_id = $1), (SELECT count(*) FROM table_path_id WHERE table_id = $1)
			FROM table_info WHERE table_id = $1`, tc.tbl.ID).Scan(&partitions, &nb, &names, &paths)
		if err != nil {
			t.Fatal(err)
		}
		if partitions != tc.partitions || nb != tc.nbuck || names != 1 || paths != 1 {
			t.Errorf("%s: partitions %q hashBucketNum %q name rows %d path rows %d", tc.tbl.Name, partitions, nb, names, paths)
		}
	}
	got, err := c.TableByName(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != pk.ID || len(got.PKCols) != 1 || got.RangeCols[0] != "d" || got.HashBucketNum != 4 || got.OID == 0 {
		t.Fatalf("table round trip: %+v", got)
	}
}

func TestDuplicateTableLeavesNoOrphans(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	newTable(t, c, "default", "t", nil, nil)
	dup := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: "default", Name: "t", Path: "file:///tmp/other",
		Schema: arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), HashBucketNum: -1}
	err := c.CreateTable(ctx, dup)
	if sqlerr.Code(err) != sqlerr.DuplicateTable {
		t.Fatalf("duplicate create: %v (code %s)", err, sqlerr.Code(err))
	}
	var n int
	if err := c.Pool().QueryRow(ctx, "SELECT count(*) FROM table_path_id WHERE table_id = $1", dup.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("orphan path rows: %d %v", n, err)
	}
}

func TestVersionsAccumulateAndReplay(t *testing.T) {
	c, _ := openCatalog(t)
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	c1, c2 := uuid.New(), uuid.New()
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: c1, Ops: add("f1", "f2")}); v["-5"] != 0 {
		t.Fatalf("first version %v", v)
	}
	// Scenario 10: c2 deletes f1 and adds f3 → live {f2, f3}.
	ops := append([]catalog.FileOp{{Path: "f1", Op: "del"}}, add("f3")...)
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: c2, Ops: ops}); v["-5"] != 1 {
		t.Fatalf("second version %v", v)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[f2 f3]" {
		t.Fatalf("live files %s", got)
	}
	// Scenario 7: version 1's snapshot is [c1, c2].
	var snap []uuid.UUID
	if err := c.Pool().QueryRow(context.Background(),
		"SELECT snapshot FROM partition_info WHERE table_id = $1 AND version = 1", tbl.ID).Scan(&snap); err != nil {
		t.Fatal(err)
	}
	if len(snap) != 2 || snap[0] != c1 || snap[1] != c2 {
		t.Fatalf("snapshot %v", snap)
	}
	// Scenario 16: re-committing the same commit id is a no-op.
	if v := commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: c2, Ops: ops}); v["-5"] != 1 {
		t.Fatalf("idempotent recommit gave %v", v)
	}
	// The same id with other files is refused.
	if _, err := c.Commit(context.Background(), nil, tbl.ID, catalog.MergeCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: c2, Ops: add("other")}}); err == nil {
		t.Fatal("commit id reused with different files was accepted")
	}
	// Scenario 9: an uncommitted data_commit_info row contributes nothing.
	if _, err := c.Pool().Exec(context.Background(),
		`INSERT INTO data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op)
		 VALUES ($1, '-5', $2, ARRAY[ROW('ghost', 'add', 1, 'id')::data_file_op], 'MergeCommit')`, tbl.ID, uuid.New()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[f2 f3]" {
		t.Fatalf("live files after orphan phase-1 row %s", got)
	}
}

func TestMultiPartitionCommitIsAtomic(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	// A partition that repeats makes the whole commit fail: neither partition moves.
	_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{
		{Desc: "d=1", CommitID: uuid.New(), Ops: add("a")},
		{Desc: "d=1", CommitID: uuid.New(), Ops: add("b")},
	})
	if err == nil {
		t.Fatal("duplicate partition accepted")
	}
	parts, err := c.LiveFiles(ctx, tbl.ID, nil)
	if err != nil || len(parts) != 0 {
		t.Fatalf("partial commit visible: %v %v", parts, err)
	}
	v := commit(t, c, tbl, catalog.MergeCommit,
		catalog.PartitionCommit{Desc: "d=1", CommitID: uuid.New(), Ops: add("a")},
		catalog.PartitionCommit{Desc: "d=2", CommitID: uuid.New(), Ops: add("b")})
	if v["d=1"] != 0 || v["d=2"] != 0 {
		t.Fatalf("versions %v", v)
	}
}

func TestCommitToDroppedTable(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, nil)
	if _, err := c.DropTable(ctx, "default", "t"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Commit(ctx, nil, tbl.ID, catalog.AppendCommit, []catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("x")}})
	if sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("commit to dropped table: %v", err)
	}
	var n int
	if err := c.Pool().QueryRow(ctx, "SELECT count(*) FROM data_commit_info WHERE table_id = $1", tbl.ID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows left after failed commit: %d %v", n, err)
	}
}

func TestConflictRules(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	base := 0
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("m0")})

	// Scenario 12: an Append prepared against version 0 loses to a Merge that landed.
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("m1")})
	_, err := c.Commit(ctx, nil, tbl.ID, catalog.AppendCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("a"), ReadVersion: &base}})
	if sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("append vs merge: %v", err)
	}

	// Scenario 13: compaction read version 1; an upsert lands as 2; the
	// compaction commits version 3 = [compaction, upsert].
	read := 1
	up := uuid.New()
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: up, Ops: add("m2")})
	comp := uuid.New()
	v := commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: comp, Ops: add("c"), ReadVersion: &read})
	if v["-5"] != 3 {
		t.Fatalf("compaction version %v", v)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[c m2]" {
		t.Fatalf("after compaction %s", got)
	}

	// Scenario 14: a compaction whose partition saw an Update is dropped.
	read = 3
	commit(t, c, tbl, catalog.UpdateCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("u"), ReadVersion: &read})
	v = commit(t, c, tbl, catalog.CompactionCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("c2"), ReadVersion: &read})
	if _, ok := v["-5"]; ok {
		t.Fatalf("compaction after update was not dropped: %v", v)
	}
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[u]" {
		t.Fatalf("after update %s", got)
	}

	// Scenario 15: an Update based on version 3 fails after another Update landed.
	_, err = c.Commit(ctx, nil, tbl.ID, catalog.UpdateCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("u2"), ReadVersion: &read}})
	if sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("update vs update: %v", err)
	}
}

// Concurrent upserts to one partition never lose a commit: every commit gets
// its own version and the final snapshot lists all of them.
func TestConcurrentMergesOnePartition(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"})
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit,
					[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add(fmt.Sprintf("w%d-%d", w, i))}})
				if err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var maxV, count int
	if err := c.Pool().QueryRow(ctx, "SELECT max(version), count(*) FROM partition_info WHERE table_id = $1", tbl.ID).Scan(&maxV, &count); err != nil {
		t.Fatal(err)
	}
	if maxV != writers*each-1 || count != writers*each {
		t.Fatalf("versions: max %d count %d", maxV, count)
	}
	if n := len(files(t, c, tbl, "-5")); n != writers*each {
		t.Fatalf("live files %d, want %d", n, writers*each)
	}
}

func TestMigrateDownAndUp(t *testing.T) {
	_, dsn := openCatalog(t)
	if err := catalog.MigrateDown(dsn, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	if v, _, err := catalog.MigrateVersion(dsn); err != nil || v != 0 {
		t.Fatalf("version after down: %d %v", v, err)
	}
	if err := catalog.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

// Re-running migrations is a no-op: the applied version is found again even
// though schema "lakesoul" (created by migration 2) now shadows "public" for
// the role named lakesoul.
func TestMigrateUpIsIdempotent(t *testing.T) {
	_, dsn := openCatalog(t)
	v1, dirty, err := catalog.MigrateVersion(dsn)
	if err != nil || dirty || v1 == 0 {
		t.Fatalf("version after up: %d dirty=%v %v", v1, dirty, err)
	}
	if err := catalog.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	if v2, _, _ := catalog.MigrateVersion(dsn); v2 != v1 {
		t.Fatalf("version moved from %d to %d", v1, v2)
	}
}

// A write that hashed with a bucket count the table no longer has (it was
// re-bucketed meanwhile) fails instead of mixing layouts; compactions and
// writers that state no count are not checked.
func TestCommitChecksBucketCount(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", nil, []string{"id"}) // 4 buckets
	if _, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("a"), BucketNum: 4}}); err != nil {
		t.Fatalf("matching bucket count: %v", err)
	}
	_, err := c.Commit(ctx, nil, tbl.ID, catalog.MergeCommit,
		[]catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(), Ops: add("b"), BucketNum: 8}})
	if sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("stale bucket count: %v, want 40001", err)
	}
	commit(t, c, tbl, catalog.MergeCommit, catalog.PartitionCommit{Desc: "-5", CommitID: uuid.New(), Ops: add("c")})
	if got := fmt.Sprint(files(t, c, tbl, "-5")); got != "[a c]" {
		t.Fatalf("live files %s", got)
	}
}
