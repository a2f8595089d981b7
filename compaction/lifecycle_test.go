package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/writer"
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

// Files of an open writer (a write intent that lives) survive orphan
// collection however old they are, its commit then lands and reads them;
// once its intent expired, collection deletes the intent and then the
// files, and the writer's commit fails instead of referencing them.
func TestOrphanCollectionSparesOpenWriters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tbl := e.table("open", cols, false, 1, nil)
	e.upsert(tbl, []any{1, "committed", 1, nil})
	lifecycle := func() compaction.LifecycleReport {
		t.Helper()
		rep, err := compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{
			OrphanGrace: time.Hour, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// stage writes rows under a fresh intent and returns what to commit;
	// its files look a day old.
	stage := func(id int) (*catalog.WriteIntent, []catalog.PartitionCommit, []string) {
		t.Helper()
		w, err := e.cat.BeginWrite(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec := batch(tbl, []string{"id", "v", "n", "d"}, [][]any{{id, "staged", id, nil}})
		defer rec.Release()
		parts, err := (&writer.Writer{Store: e.store, Table: tbl, Intent: w}).Write(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, p := range parts {
			for _, o := range p.Ops {
				paths = append(paths, o.Path)
			}
		}
		// A file the writer claimed under a name that is not its own.
		claimed := objstore.Join(tbl.Path, fmt.Sprintf("compactdir2/part-ClaimedByW%06d_0000.parquet", id))
		if err := w.Claim(ctx, claimed); err != nil {
			t.Fatal(err)
		}
		lp, _ := objstore.LocalPath(claimed)
		if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(lp, []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, claimed)
		past := time.Now().Add(-24 * time.Hour)
		for _, p := range paths {
			lp, _ := objstore.LocalPath(p)
			if err := os.Chtimes(lp, past, past); err != nil {
				t.Fatal(err)
			}
		}
		return w, parts, paths
	}

	w, parts, paths := stage(2)
	if rep := lifecycle(); rep.Orphans != 0 {
		t.Fatalf("collected %d files of an open writer", rep.Orphans)
	}
	for _, p := range paths {
		if !exists(t, p) {
			t.Fatalf("file %s of an open writer was deleted", p)
		}
	}
	if _, err := e.cat.Commit(ctx, w, tbl.ID, catalog.MergeCommit, parts); err != nil {
		t.Fatalf("commit after the collection: %v", err)
	}
	expectSame(t, "after the commit", e.read(tbl), []string{"id=1 v=committed n=1 d=NULL", "id=2 v=staged n=2 d=NULL"})
	// The claimed file was not committed: with the intent consumed, it is
	// an orphan of the next collection.
	leftover := paths[len(paths)-1]

	w, parts, paths = stage(3)
	if _, err := e.cat.Pool().Exec(ctx, "UPDATE lakesoul.write_intent SET expires_at = now() - interval '1 second' WHERE id = $1", w.ID()); err != nil {
		t.Fatal(err)
	}
	if rep := lifecycle(); rep.Orphans != len(paths)+1 || exists(t, leftover) {
		t.Fatalf("collected %d files, want the %d of the expired writer and the leftover", rep.Orphans, len(paths))
	}
	if n := e.count("SELECT count(*) FROM lakesoul.write_intent WHERE id = $1", w.ID()); n != 0 {
		t.Fatal("the expired intent is still registered")
	}
	_, err := e.cat.Commit(ctx, w, tbl.ID, catalog.MergeCommit, parts)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55000" {
		t.Fatalf("commit after its intent expired and its files were collected: %v, want 55000", err)
	}
	expectSame(t, "after the failed commit", e.read(tbl), []string{"id=1 v=committed n=1 d=NULL", "id=2 v=staged n=2 d=NULL"})
}
