package compaction_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
)

func compactOne(t *testing.T, e *env, tbl *catalog.Table, desc string, opt compaction.Options) compaction.Result {
	t.Helper()
	res, err := compaction.CompactPartition(context.Background(), e.cat, e.store, tbl, desc, opt)
	if err != nil {
		t.Fatalf("compact %s: %v", desc, err)
	}
	return res
}

func exists(t *testing.T, uri string) bool {
	t.Helper()
	p, err := objstore.LocalPath(uri)
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(p)
	return err == nil
}

// A full compaction reads every bucket of a partition, writes one file per
// bucket under compact_<ms>/, replaces the snapshot with its commit, records
// the inputs as discarded and reads back exactly what was there before —
// partial upserts and merge operators included.
func TestFullCompactionPreservesReads(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t", cols, true, 4, map[string]string{"merge_op.n": "SumAll"})
	for i := 0; i < 6; i++ {
		var rows [][]any
		for k := 0; k < 20; k++ {
			rows = append(rows, []any{k*(i+1)%37 + 1, fmt.Sprintf("v%d-%d", i, k), k, []string{"a", "b"}[k%2]})
		}
		e.upsert(tbl, rows...)
	}
	// Partial upsert: v only (n keeps its sum, SumAll sees no value).
	e.write(tbl, catalog.MergeCommit, []string{"id", "v", "d"}, []any{1, "partial", "a"}, []any{500, "new", "b"})
	before := e.read(tbl)
	inA := e.files(tbl, "d=a")

	res := compactOne(t, e, tbl, "d=a", compaction.Options{})
	if res.Status != compaction.Compacted || res.ReadVersion != inA.Version || res.Version != inA.Version+1 {
		t.Fatalf("result %+v (read version %d)", res, inA.Version)
	}
	expectSame(t, "rows after compacting d=a", e.read(tbl), before)
	outA := e.files(tbl, "d=a")
	if len(outA.Files) == 0 || len(outA.Files) > 4 {
		t.Fatalf("compacted files: %+v", outA.Files)
	}
	for _, f := range outA.Files {
		if !strings.Contains(f.Path, "/compact_") || !strings.Contains(f.Path, "/d=a/") {
			t.Fatalf("compacted file %s is not under <table>/compact_<ms>/d=a/", f.Path)
		}
		// Keys are unique within a compacted file.
		seen := map[string]bool{}
		for _, r := range rawRows(t, e.store, tbl, "d=a", f) {
			id := strings.Fields(r)[0]
			if seen[id] {
				t.Fatalf("key %s twice in %s", id, f.Path)
			}
			seen[id] = true
		}
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info WHERE partition_desc = 'd=a'`); n != int64(len(inA.Files)) {
		t.Fatalf("%d discard rows, want %d", n, len(inA.Files))
	}
	// Already compacted: nothing to do.
	if res := compactOne(t, e, tbl, "d=a", compaction.Options{}); res.Status != compaction.Skipped {
		t.Fatalf("second compaction: %+v", res)
	}
	// Compacting the other partition too, then more upserts on top.
	compactOne(t, e, tbl, "d=b", compaction.Options{})
	e.upsert(tbl, []any{1, "after", 7, "a"})
	before = e.read(tbl)
	compactOne(t, e, tbl, "d=a", compaction.Options{})
	expectSame(t, "rows after the second compaction", e.read(tbl), before)
	if n := e.count(`SELECT count(*) FROM lakesoul.compaction_job`); n != 0 {
		t.Fatalf("%d job rows left", n)
	}
	// Asset statistics see base (compacted) and delta files.
	var files, base, delta int64
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT file_counts, file_base_count, file_delta_count FROM lakesoul.table_level_assets WHERE table_id = $1`, tbl.ID).
		Scan(&files, &base, &delta); err != nil {
		t.Fatal(err)
	}
	if files != base+delta || base == 0 || delta != 0 {
		t.Fatalf("assets: files %d base %d delta %d", files, base, delta)
	}
	e.upsert(tbl, []any{2, "delta", 1, "b"})
	var nsFiles, nsDelta, parts int64
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT file_counts, file_delta_count, partition_counts FROM lakesoul.namespace_level_assets WHERE namespace = 's'`).
		Scan(&nsFiles, &nsDelta, &parts); err != nil {
		t.Fatal(err)
	}
	if nsDelta != 1 || nsFiles != files+1 || parts != 2 {
		t.Fatalf("namespace assets: files %d delta %d partitions %d", nsFiles, nsDelta, parts)
	}
	if n := e.count(`SELECT file_counts FROM lakesoul.domain_level_assets WHERE domain = 'public'`); n != nsFiles {
		t.Fatalf("domain assets: %d files", n)
	}
}

// Append (non-PK) tables: compaction concatenates files; duplicates stay.
func TestCompactAppendTable(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("a", cols, false, 0, nil)
	for i := 0; i < 5; i++ {
		e.write(tbl, catalog.AppendCommit, []string{"id", "v", "n", "d"}, []any{1, "x", i, "p"}, []any{2, "y", i, "p"})
	}
	before := e.read(tbl)
	res := compactOne(t, e, tbl, "-5", compaction.Options{})
	if res.Status != compaction.Compacted || res.FilesIn != 5 || res.FilesOut != 1 {
		t.Fatalf("%+v", res)
	}
	expectSame(t, "append rows", e.read(tbl), before)
}

// Scenario 13: compaction reads version 5; an upsert commits version 6; the
// compaction commits version 7 with snapshot [compaction, upsert], and reads
// return the upsert's values over the compacted ones.
func TestScenario13UpsertDuringCompaction(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t13", cols, false, 2, nil)
	for i := 0; i <= 5; i++ {
		e.upsert(tbl, []any{1, fmt.Sprintf("v%d", i), i, nil}, []any{i + 10, "k", i, nil})
	}
	var upsertCommit string
	opt := compaction.Options{}
	compaction.SetBeforeCommit(&opt, func(ctx context.Context, desc string, rv int) {
		if rv != 5 {
			t.Errorf("read version %d, want 5", rv)
		}
		if v := e.upsert(tbl, []any{1, "upsert", 99, nil}); v["-5"] != 6 {
			t.Errorf("upsert got version %v, want 6", v)
		}
		upsertCommit = fmt.Sprint(e.scalar(`SELECT snapshot[cardinality(snapshot)]::text FROM public.partition_info WHERE table_id = $1 AND version = 6`, tbl.ID))
	})
	res := compactOne(t, e, tbl, "-5", opt)
	if res.Status != compaction.Compacted || res.Version != 7 {
		t.Fatalf("%+v", res)
	}
	var snap []string
	var op string
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT snapshot::text[], commit_op FROM public.partition_info WHERE table_id = $1 AND version = 7`, tbl.ID).Scan(&snap, &op); err != nil {
		t.Fatal(err)
	}
	if op != catalog.CompactionCommit || len(snap) != 2 || snap[1] != upsertCommit {
		t.Fatalf("version 7: %s %v (upsert commit %s)", op, snap, upsertCommit)
	}
	var compOp string
	if err := e.cat.Pool().QueryRow(context.Background(),
		`SELECT commit_op FROM public.data_commit_info WHERE commit_id = $1::uuid`, snap[0]).Scan(&compOp); err != nil || compOp != catalog.CompactionCommit {
		t.Fatalf("first commit of version 7 is %q (%v)", compOp, err)
	}
	got := e.read(tbl)
	if got[0] != "id=1 v=upsert n=99 d=NULL" || len(got) != 7 {
		t.Fatalf("rows: %v", got)
	}
}

// Scenario 14: an UpdateCommit lands between the compaction's read and its
// commit: the compaction is dropped, the version stays, and the compacted
// files are gone.
func TestScenario14UpdateDropsCompaction(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t14", cols, false, 2, nil)
	for i := 0; i <= 5; i++ {
		e.upsert(tbl, []any{i, "x", i, nil})
	}
	var written []string
	opt := compaction.Options{}
	compaction.SetBeforeCommit(&opt, func(ctx context.Context, desc string, rv int) {
		// Copy-on-write update based on version 5.
		ver := 5
		v, err := e.cat.Commit(ctx, nil, tbl.ID, catalog.UpdateCommit, []catalog.PartitionCommit{{Desc: desc, CommitID: newID(),
			ReadVersion: &ver, Ops: filesToAdds(e.files(tbl, desc).Files)}})
		if err != nil || v[desc] != 6 {
			t.Errorf("update: %v %v", v, err)
		}
		written = compactOutputs(t, e, tbl)
	})
	res := compactOne(t, e, tbl, "-5", opt)
	if res.Status != compaction.Dropped {
		t.Fatalf("%+v", res)
	}
	if v := e.count(`SELECT max(version) FROM public.partition_info WHERE table_id = $1`, tbl.ID); v != 6 {
		t.Fatalf("latest version %d, want 6", v)
	}
	if len(written) == 0 {
		t.Fatal("the compaction wrote nothing")
	}
	for _, p := range written {
		if exists(t, p) {
			t.Fatalf("dropped compaction left %s", p)
		}
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info`); n != 0 {
		t.Fatalf("%d discard rows for a dropped compaction", n)
	}
}

// compactOutputs lists the files under the table's compact_* directories.
func compactOutputs(t *testing.T, e *env, tbl *catalog.Table) []string {
	t.Helper()
	dir, _ := objstore.LocalPath(tbl.Path)
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "compact") {
			sub := objstore.LocalURI(dir + "/" + en.Name())
			_ = walk(sub, func(p string) { out = append(out, p) })
		}
	}
	return out
}

func walk(root string, fn func(string)) error {
	dir, _ := objstore.LocalPath(root)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, en := range entries {
		p := objstore.Join(root, en.Name())
		if en.IsDir() {
			_ = walk(p, fn)
		} else {
			fn(p)
		}
	}
	return nil
}

func filesToAdds(files []catalog.DataFile) []catalog.FileOp {
	var ops []catalog.FileOp
	for _, f := range files {
		ops = append(ops, catalog.FileOp{Path: f.Path, Op: "add", Size: f.Size, ExistCols: f.ExistCols})
	}
	return ops
}

var cdcCols = []arrow.Field{idF, vF, opF}

func cdcTable(e *env, name string, props map[string]string) *catalog.Table {
	if props == nil {
		props = map[string]string{}
	}
	props[catalog.CDCColumnProperty] = "op"
	return e.table(name, cdcCols, false, 2, props)
}

func cdcWrite(e *env, tbl *catalog.Table, rows ...[]any) {
	e.write(tbl, catalog.MergeCommit, []string{"id", "v", "op"}, rows...)
}

// Scenario 31: full compaction of a CDC table leaves no delete rows and
// turns updates into inserts; snapshot reads are unchanged.
func TestScenario31CDCFullCompaction(t *testing.T) {
	e := newEnv(t)
	tbl := cdcTable(e, "c31", nil)
	cdcWrite(e, tbl, []any{1, "a", "insert"}, []any{2, "b", "insert"}, []any{3, "c", "insert"})
	cdcWrite(e, tbl, []any{1, "a2", "update"}, []any{2, nil, "delete"})
	cdcWrite(e, tbl, []any{3, nil, "delete"}, []any{4, "d", "insert"})
	cdcWrite(e, tbl, []any{3, "c2", "insert"}, []any{4, "d2", "update"})
	before := e.read(tbl)
	expectSame(t, "cdc rows", before, []string{"id=1 v=a2 op=update", "id=3 v=c2 op=insert", "id=4 v=d2 op=update"})
	compactOne(t, e, tbl, "-5", compaction.Options{})
	var raw []string
	for _, f := range e.files(tbl, "-5").Files {
		raw = append(raw, rawRows(t, e.store, tbl, "-5", f)...)
	}
	for _, r := range raw {
		if strings.Contains(r, "op=delete") || strings.Contains(r, "op=update") {
			t.Fatalf("compacted CDC file holds %q", r)
		}
	}
	expectSame(t, "raw compacted rows", sorted(raw), []string{"id=1 v=a2 op=insert", "id=3 v=c2 op=insert", "id=4 v=d2 op=insert"})
	got := e.read(tbl)
	expectSame(t, "cdc rows after compaction (ops aside)", stripOps(got), stripOps(before))
	// A delete after the compaction still removes the key.
	cdcWrite(e, tbl, []any{1, nil, "delete"})
	expectSame(t, "after delete", stripOps(e.read(tbl)), []string{"id=3 v=c2", "id=4 v=d2"})
}

func stripOps(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimSpace(r[:strings.Index(r, " op=")])
	}
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Scenario 32: leveled compaction of a CDC table keeps delete rows (older
// levels may hold what they shadow) and reads are unchanged.
func TestScenario32CDCLeveledKeepsDeletes(t *testing.T) {
	e := newEnv(t)
	tbl := cdcTable(e, "c32", map[string]string{compaction.PropMode: compaction.ModeLeveled,
		compaction.PropLevel0FileNumLimit: "3"})
	tbl.HashBucketNum = 1
	tbl.Properties["hashBucketNum"] = "1"
	if err := e.cat.AlterTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	cdcWrite(e, tbl, []any{1, "a", "insert"}, []any{2, "b", "insert"})
	cdcWrite(e, tbl, []any{1, "a2", "update"})
	cdcWrite(e, tbl, []any{2, nil, "delete"})
	before := e.read(tbl)
	res := compactOne(t, e, tbl, "-5", compaction.Options{})
	if res.Status != compaction.Compacted {
		t.Fatalf("%+v", res)
	}
	expectSame(t, "reads", e.read(tbl), before)
	var raw []string
	for _, f := range e.files(tbl, "-5").Files {
		if compaction.LevelOf(f.Path) != 1 {
			t.Fatalf("file %s is not in level 1", f.Path)
		}
		raw = append(raw, rawRows(t, e.store, tbl, "-5", f)...)
	}
	expectSame(t, "level-1 rows", sorted(raw), []string{"id=1 v=a2 op=update", "id=2 v=NULL op=delete"})
}

// Scenario 45: with compaction.level0.file.number.limit = 10 and one bucket,
// 9 level-0 files are left alone (no commit, no discard rows); 10 are merged
// into compactdir1/, committed as a CompactionCommit, and the 10 inputs are
// recorded as discarded.
func TestScenario45Level0Limit(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t45", cols, true, 1, map[string]string{compaction.PropMode: compaction.ModeLeveled,
		compaction.PropLevel0FileNumLimit: "10"})
	for i := 0; i < 9; i++ {
		e.upsert(tbl, []any{i % 4, fmt.Sprint(i), i, "x"})
	}
	res := compactOne(t, e, tbl, "d=x", compaction.Options{})
	if res.Status != compaction.Skipped {
		t.Fatalf("9 files: %+v", res)
	}
	if v := e.count(`SELECT max(version) FROM public.partition_info WHERE table_id = $1`, tbl.ID); v != 8 {
		t.Fatalf("version %d after a no-op", v)
	}
	if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info`); n != 0 {
		t.Fatalf("%d discard rows", n)
	}
	e.upsert(tbl, []any{9, "9", 9, "x"})
	before := e.read(tbl)
	inputs := e.files(tbl, "d=x").Files
	res = compactOne(t, e, tbl, "d=x", compaction.Options{})
	if res.Status != compaction.Compacted || res.Discarded != 10 {
		t.Fatalf("10 files: %+v", res)
	}
	out := e.files(tbl, "d=x").Files
	if len(out) != 1 || !strings.Contains(out[0].Path, "/compactdir1/d=x/") {
		t.Fatalf("output %+v", out)
	}
	if op := e.scalar(`SELECT commit_op FROM public.partition_info WHERE table_id = $1 ORDER BY version DESC LIMIT 1`, tbl.ID); op != catalog.CompactionCommit {
		t.Fatalf("latest op %v", op)
	}
	for _, f := range inputs {
		if n := e.count(`SELECT count(*) FROM public.discard_compressed_file_info WHERE file_path = $1 AND table_path = $2 AND partition_desc = 'd=x'`, f.Path, tbl.Path); n != 1 {
			t.Fatalf("input %s not recorded as discarded", f.Path)
		}
	}
	expectSame(t, "reads", e.read(tbl), before)
}

// Scenario 46: a level-1 file at least compaction.pick.next.level.min.file.size
// large at the head of its level moves to compactdir2/ under the same name;
// the committed list references the new path and reads are unchanged.
func TestScenario46Promotion(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t46", cols, false, 1, map[string]string{compaction.PropMode: compaction.ModeLeveled,
		compaction.PropLevel0FileNumLimit: "2", compaction.PropPickNextLevelMinSize: "1GB"})
	var big [][]any
	for k := 0; k < 2000; k++ {
		big = append(big, []any{k, strings.Repeat("x", 50) + fmt.Sprint(k), k, nil})
	}
	e.upsert(tbl, big...)
	e.upsert(tbl, []any{1, "one", 1, nil})
	compactOne(t, e, tbl, "-5", compaction.Options{})
	l1 := e.files(tbl, "-5").Files
	if len(l1) != 1 || compaction.LevelOf(l1[0].Path) != 1 {
		t.Fatalf("level 1: %+v", l1)
	}
	before := e.read(tbl)
	// Lower the promotion threshold below the level-1 file's size.
	tbl.Properties[compaction.PropPickNextLevelMinSize] = fmt.Sprint(l1[0].Size - 1)
	if err := e.cat.AlterTable(context.Background(), tbl); err != nil {
		t.Fatal(err)
	}
	res := compactOne(t, e, tbl, "-5", compaction.Options{})
	if res.Status != compaction.Compacted {
		t.Fatalf("%+v", res)
	}
	l2 := e.files(tbl, "-5").Files
	if len(l2) != 1 || compaction.LevelOf(l2[0].Path) != 2 || baseName(l2[0].Path) != baseName(l1[0].Path) ||
		!strings.Contains(l2[0].Path, "/compactdir2/") {
		t.Fatalf("after promotion: %+v (was %s)", l2, l1[0].Path)
	}
	expectSame(t, "reads", e.read(tbl), before)
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// Scenario 47: re-bucketing with newBucketNum = 8 sets hashBucketNum to "8"
// and reads return the same rows; new writes use 8 buckets.
func TestScenario47Rebucket(t *testing.T) {
	e := newEnv(t)
	tbl := e.table("t47", cols, true, 2, nil)
	for i := 0; i < 4; i++ {
		var rows [][]any
		for k := 0; k < 50; k++ {
			rows = append(rows, []any{k + i*10, fmt.Sprint(i), k, []string{"p", "q"}[k%2]})
		}
		e.upsert(tbl, rows...)
	}
	before := e.read(tbl)
	res, err := compaction.Rebucket(context.Background(), e.cat, e.store, tbl, 8, compaction.Options{})
	if err != nil || len(res) != 2 {
		t.Fatalf("rebucket: %v %+v", err, res)
	}
	got, err := e.cat.TableByName(context.Background(), "s", "t47")
	if err != nil {
		t.Fatal(err)
	}
	if got.Properties["hashBucketNum"] != "8" || got.HashBucketNum != 8 {
		t.Fatalf("properties %v", got.Properties)
	}
	buckets := map[string]bool{}
	for _, d := range []string{"d=p", "d=q"} {
		for _, f := range e.files(got, d).Files {
			buckets[f.Path[strings.LastIndex(f.Path, "_"):]] = true
		}
	}
	if len(buckets) <= 2 {
		t.Fatalf("files use buckets %v", buckets)
	}
	expectSame(t, "reads", e.read(got), before)
	e.upsert(got, []any{0, "new", 1, "p"})
	want := e.read(got)
	for _, r := range want {
		if strings.HasPrefix(r, "id=0 ") && strings.HasSuffix(r, "d=p") && !strings.Contains(r, "v=new") {
			t.Fatalf("upsert after re-bucketing lost: %v", r)
		}
	}
	if len(want) != len(before) {
		t.Fatalf("%d rows after upserting an existing key, want %d", len(want), len(before))
	}
}
