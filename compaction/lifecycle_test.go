package compaction_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
)

const day = int64(24 * time.Hour / time.Millisecond)

// backdate moves the versions of a partition (up to maxVersion) days into the
// past, keeping their order.
func (e *env) backdate(tableID, desc string, maxVersion int, days int) {
	e.t.Helper()
	if _, err := e.cat.Pool().Exec(context.Background(),
		`UPDATE public.partition_info SET timestamp = (extract(epoch FROM now()) * 1000)::bigint - $4::bigint * $5::bigint + version * 1000
		  WHERE table_id = $1 AND partition_desc = $2 AND version <= $3`, tableID, desc, maxVersion, days, day); err != nil {
		e.t.Fatal(err)
	}
}

func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	// partition.ttl: a partition last written 3 days ago expires with its
	// files; a fresh one stays.
	ttl := e.table("ttl", cols, true, 1, map[string]string{compaction.PropPartitionTTL: "1"})
	e.upsert(ttl, []any{1, "old", 1, "old"}, []any{2, "new", 2, "new"})
	e.upsert(ttl, []any{3, "old", 3, "old"})
	oldFiles := e.files(ttl, "d=old").Files
	e.backdate(ttl.ID, "d=old", 100, 3)

	// compaction.ttl: history before a compaction older than the TTL goes,
	// with the files only it read; reads stay.
	red := e.table("red", cols, false, 1, map[string]string{compaction.PropCompactionTTL: "1"})
	for i := 0; i < 4; i++ {
		e.upsert(red, []any{i, "x", i, nil})
	}
	deltas := e.files(red, "-5").Files
	res := compactOne(t, e, red, "-5", compaction.Options{})
	e.upsert(red, []any{9, "after", 9, nil})
	e.backdate(red.ID, "-5", res.Version, 3)
	redBefore := e.read(red)

	// Discarded files of a partition whose history stays are kept.
	keep := e.table("keep", cols, false, 1, nil)
	for i := 0; i < 3; i++ {
		e.upsert(keep, []any{i, "k", i, nil})
	}
	keepDeltas := e.files(keep, "-5").Files
	compactOne(t, e, keep, "-5", compaction.Options{})

	// Orphans: an old stray file goes, a fresh one stays.
	dir, _ := objstore.LocalPath(keep.Path)
	oldOrphan := filepath.Join(dir, "part-orphanOLD_0000.parquet")
	newOrphan := filepath.Join(dir, "part-orphanNEW_0000.parquet")
	for _, p := range []string{oldOrphan, newOrphan} {
		if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(oldOrphan, past, past); err != nil {
		t.Fatal(err)
	}

	rep, err := compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	if rep.ExpiredPartitions != 1 || rep.ExpiredFiles != len(oldFiles) || rep.DiscardedFiles != 0 {
		t.Fatalf("partition.ttl: %+v", rep)
	}
	for _, f := range oldFiles {
		if exists(t, f.Path) {
			t.Fatalf("expired file %s remains", f.Path)
		}
	}
	if n := e.count(`SELECT count(*) FROM public.partition_info WHERE table_id = $1 AND partition_desc = 'd=old'`, ttl.ID); n != 0 {
		t.Fatal("expired partition still has versions")
	}
	expectSame(t, "ttl table", e.read(ttl), []string{"id=2 v=new n=2 d=new"})

	if rep.RedundantFiles != len(deltas) {
		t.Fatalf("compaction.ttl removed %d files, want %d", rep.RedundantFiles, len(deltas))
	}
	for _, f := range deltas {
		if exists(t, f.Path) {
			t.Fatalf("redundant file %s remains", f.Path)
		}
	}
	if n := e.count(`SELECT min(version) FROM public.partition_info WHERE table_id = $1`, red.ID); n != int64(res.Version) {
		t.Fatalf("oldest version %d, want the compaction %d", n, res.Version)
	}
	expectSame(t, "compaction.ttl table", e.read(red), redBefore)
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info WHERE table_path = $1`, red.Path); n != 0 {
		t.Fatalf("%d discard rows left for cleaned history", n)
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info WHERE table_path = $1`, keep.Path); n != int64(len(keepDeltas)) {
		t.Fatalf("%d discard rows for history that stays", n)
	}
	for _, f := range keepDeltas {
		if !exists(t, f.Path) {
			t.Fatalf("discarded file %s deleted while old versions read it", f.Path)
		}
	}
	if rep.Orphans != 1 || exists(t, objstore.LocalURI(oldOrphan)) || !exists(t, objstore.LocalURI(newOrphan)) {
		t.Fatalf("orphans: %+v", rep)
	}

	// Once the history is cleaned up (CALL lakesoul.cleanup), the discarded
	// files' rows go too.
	if _, err := e.cat.Cleanup(ctx, keep.ID, time.Now().Add(time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	rep, err = compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info`); n != 0 || rep.DiscardedFiles != len(keepDeltas) {
		t.Fatalf("%d discard rows left, report %+v", n, rep)
	}
}

func TestNormalizePath(t *testing.T) {
	for _, c := range [][2]string{
		{"file:///w/t/a.parquet", "file:/w/t/a.parquet"},
		{"file:/w/t/a.parquet", "file:/w/t/a.parquet"},
		{"file:///w/t/d=a b/x.parquet", "file:/w/t/d=a b/x.parquet"},
		{"s3a://b/w/t/a.parquet", "s3:b/w/t/a.parquet"},
		{"s3://b/w/t/a.parquet", "s3:b/w/t/a.parquet"},
	} {
		if got := compaction.NormalizePath(c[0]); got != c[1] {
			t.Errorf("%s → %s, want %s", c[0], got, c[1])
		}
	}
}
