package compaction_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
)

// TestLifecycleConfinement: catalog rows of one's own domain can be written
// directly. A table row whose path is another table's directory — under its
// own name, or under the victim's name as a second row — with a
// partition.ttl, expired history naming the victim's files and the
// victim's files looking like its orphans, must not make the lifecycle task
// delete anything of the victim; nor may a table whose path is some other
// directory have that directory's files collected.
func TestLifecycleConfinement(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	victim := e.table("victim", cols, false, 1, nil)
	e.upsert(victim, []any{1, "secret", 1, nil})
	e.upsert(victim, []any{2, "secret", 2, nil})
	victimRows := e.read(victim)
	victimDir, _ := objstore.LocalPath(victim.Path)
	victimFiles := filesIn(t, victimDir)
	past := time.Now().Add(-72 * time.Hour)
	for _, f := range victimFiles {
		if err := os.Chtimes(filepath.Join(victimDir, f), past, past); err != nil {
			t.Fatal(err)
		}
	}
	var victimPaths []string
	for _, f := range e.files(victim, "-5").Files {
		victimPaths = append(victimPaths, f.Path)
	}

	forge := func(name string, rename bool) {
		tbl := e.table(name, cols, false, 1, map[string]string{compaction.PropPartitionTTL: "1"})
		e.upsert(tbl, []any{9, "mine", 9, nil})
		exec := func(sql string, args ...any) {
			t.Helper()
			if _, err := e.cat.Pool().Exec(ctx, sql, args...); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		exec(`UPDATE public.data_commit_info SET file_ops = (SELECT array_agg(ROW(p, 'add', 1, 'id,v,n,d')::data_file_op) FROM unnest($1::text[]) p)
			WHERE table_id = $2`, victimPaths, tbl.ID)
		exec("UPDATE public.table_info SET table_path = $1 WHERE table_id = $2", victim.Path, tbl.ID)
		if rename {
			exec("UPDATE public.table_info SET table_name = 'victim' WHERE table_id = $1", tbl.ID)
		}
		e.backdate(tbl.ID, "-5", 100, 3)
	}
	forge("forged", false)                                 // a path that is not its own directory
	forge("impostor", true)                                // a second row claiming the victim's name and directory
	elsewhere := e.table("elsewhere", cols, false, 1, nil) // a path pointing at another directory
	other := filepath.Join(e.wh, "other")
	stray := filepath.Join(other, "part-stray_0000.parquet")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("not a table's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stray, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cat.Pool().Exec(ctx, "UPDATE public.table_info SET table_path = $1 WHERE table_id = $2",
		objstore.LocalURI(other), elsewhere.ID); err != nil {
		t.Fatal(err)
	}

	rep, err := compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{OrphanGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted() != 0 {
		t.Errorf("the lifecycle task deleted %d files (%+v), want none", rep.Deleted(), rep)
	}
	if got := filesIn(t, victimDir); !slices.Equal(got, victimFiles) {
		t.Errorf("files of the victim: %q, want %q", got, victimFiles)
	}
	if got := e.read(victim); !slices.Equal(got, victimRows) {
		t.Errorf("victim reads %q, want %q", got, victimRows)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("the file in the directory a table row points at was collected: %v", err)
	}
	// The real table's own lifecycle still runs once it alone owns its
	// directory: an orphan of its own goes.
	if _, err := e.cat.Pool().Exec(ctx, "DELETE FROM public.table_info WHERE table_name = 'victim' AND table_id <> $1", victim.ID); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(victimDir, "part-orphan_0000.parquet")
	if err := os.WriteFile(orphan, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(orphan, past, past); err != nil {
		t.Fatal(err)
	}
	if rep, err = compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{OrphanGrace: time.Hour}); err != nil || rep.Orphans != 1 {
		t.Errorf("lifecycle of the victim alone: %+v, %v; want its orphan collected", rep, err)
	}
	if got := filesIn(t, victimDir); !slices.Equal(got, victimFiles) {
		t.Errorf("files of the victim after collecting its orphan: %q, want %q", got, victimFiles)
	}
}

// TestCompactionRefusesForeignTable: a table whose path is not its own
// directory is not compacted.
func TestCompactionRefusesForeignTable(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t", cols, false, 1, nil)
	e.upsert(tbl, []any{1, "a", 1, nil})
	e.upsert(tbl, []any{2, "b", 2, nil})
	moved := *tbl
	moved.Path = objstore.LocalURI(filepath.Join(e.wh, "s", "u"))
	if _, err := compaction.CompactPartition(context.Background(), e.cat, e.store, &moved, "-5", compaction.Options{}); err == nil {
		t.Fatal("compacted a table whose path is another table's directory")
	}
	opt := compaction.Options{Warehouse: objstore.LocalURI(filepath.Join(e.wh, "elsewhere"))}
	if _, err := compaction.CompactPartition(context.Background(), e.cat, e.store, tbl, "-5", opt); err == nil {
		t.Fatal("compacted a table outside the warehouse")
	}
	res, err := compaction.CompactPartition(context.Background(), e.cat, e.store, tbl, "-5",
		compaction.Options{Warehouse: objstore.LocalURI(e.wh)})
	if err != nil || res.Status != compaction.Compacted {
		t.Fatalf("compaction in the warehouse: %+v, %v", res, err)
	}
}

// filesIn lists the files below dir (relative to it).
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if err := walk(objstore.LocalURI(dir), func(p string) {
		out = append(out, strings.TrimPrefix(p, objstore.LocalURI(dir)+"/"))
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiscardCollectionConfinement: a discard row is anyone's to write
// (LakeSoul's clients record their compactions' inputs; a workspace user
// with a catalog login writes rows of the tables it sees), so collection
// deletes a file only when it lies inside the directory of the table the
// row names and that table does not know it — whoever wrote the row. Rows
// naming another table's live file under the collector's table, the
// victim's live file under a partition it is not in or in another spelling
// of its path, a path leaving the directory, the table's own live file in
// another spelling, or an open writer's file delete nothing, through VACUUM
// of the table and the lifecycle task alike; a real discarded file goes.
func TestDiscardCollectionConfinement(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	victim := e.table("victim", cols, false, 1, nil)
	e.upsert(victim, []any{1, "secret", 1, nil})
	mine := e.table("mine", cols, false, 1, nil)
	e.upsert(mine, []any{1, "mine", 1, nil})
	victimRows, mineRows := e.read(victim), e.read(mine)
	victimDir, _ := objstore.LocalPath(victim.Path)
	mineDir, _ := objstore.LocalPath(mine.Path)
	victimFile := e.files(victim, "-5").Files[0].Path
	mineFile := e.files(mine, "-5").Files[0].Path
	respell := func(uri string) string { // file:///x → file:/x
		p, err := objstore.LocalPath(uri)
		if err != nil {
			t.Fatal(err)
		}
		return "file:" + p
	}
	w, err := e.cat.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(ctx)
	writing := filepath.Join(mineDir, w.FileName(0))
	garbage := filepath.Join(mineDir, "part-garbage_0000.parquet")
	for _, f := range []string{writing, garbage} {
		if err := os.WriteFile(f, []byte("not yet committed"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	victimBefore, mineBefore := filesIn(t, victimDir), filesIn(t, mineDir)

	// The rows, as any writer of the table could file them (here the owner:
	// row-level security is not what this test relies on). A file has one
	// row at a time: the second round's row names a file of the first's.
	fileRows := func(rows ...[3]string) {
		t.Helper()
		for _, r := range rows {
			if _, err := e.cat.Pool().Exec(ctx, `INSERT INTO public.discard_compressed_file_info
				(file_path, table_path, partition_desc, timestamp, t_date) VALUES ($1, $2, $3, 0, '1970-01-01')`, r[1], r[0], r[2]); err != nil {
				t.Fatalf("discard row %v: %v", r, err)
			}
		}
	}
	fileRows([3]string{mine.Path, victimFile, "-5"},
		[3]string{victim.Path, respell(victimFile), "-5"},
		[3]string{mine.Path, mine.Path + "/../victim/" + filepath.Base(victimFile), "-5"},
		[3]string{mine.Path, respell(mineFile), "-5"},
		[3]string{mine.Path, objstore.LocalURI(writing), "-5"},
		[3]string{mine.Path, objstore.LocalURI(garbage), "-5"})
	rep, err := compaction.Vacuum(ctx, e.cat, e.store, mine, compaction.LifecycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.DiscardedFiles != 1 {
		t.Errorf("VACUUM of mine deleted %d discarded files, want 1 (its garbage)", rep.DiscardedFiles)
	}
	if rep, err = compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{OrphanGrace: -1}); err != nil || rep.Deleted() != 0 {
		t.Errorf("the lifecycle task after VACUUM: %+v, %v; want nothing deleted", rep, err)
	}
	fileRows([3]string{victim.Path, victimFile, "d=elsewhere"})
	if rep, err = compaction.RunLifecycle(ctx, e.cat, e.store, compaction.LifecycleOptions{OrphanGrace: -1}); err != nil || rep.Deleted() != 0 {
		t.Errorf("the lifecycle task with a row naming the victim's file under another partition: %+v, %v; want nothing deleted", rep, err)
	}
	if got := filesIn(t, victimDir); !slices.Equal(got, victimBefore) {
		t.Errorf("files of the victim: %q, want %q", got, victimBefore)
	}
	wantMine := slices.DeleteFunc(slices.Clone(mineBefore), func(f string) bool { return f == filepath.Base(garbage) })
	if got := filesIn(t, mineDir); !slices.Equal(got, wantMine) {
		t.Errorf("files of mine: %q, want %q", got, wantMine)
	}
	if got := e.read(victim); !slices.Equal(got, victimRows) {
		t.Errorf("victim reads %q, want %q", got, victimRows)
	}
	if got := e.read(mine); !slices.Equal(got, mineRows) {
		t.Errorf("mine reads %q, want %q", got, mineRows)
	}
}
