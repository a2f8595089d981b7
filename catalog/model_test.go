package catalog_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A model-based test of the commit protocol under concurrency.
//
// Many goroutines commit Append, Merge, Update and Compaction commits (with
// read versions taken from a possibly stale read) to overlapping partitions.
// Afterwards the catalog's own record — which commit got which version of
// which partition — defines a sequential order per partition. Replaying that
// order through an independent Go model of LakeSoul's rules must reproduce
// every snapshot the catalog stored, and the model must agree that every
// failure (SQLSTATE 40001) and every abandoned compaction was called for.
// That rules out lost commits (a success missing from its version),
// phantom commits (a version nobody committed, or a failed commit's files
// anywhere), duplicated commits and wrong conflict decisions.

type modelPart struct {
	desc string
	id   uuid.UUID
	read *int
	ops  []catalog.FileOp
}

type attempt struct {
	op    string
	parts []modelPart
	// outcome
	versions map[string]int
	err      error
}

// modelVersion is one version of a partition in the model.
type modelVersion struct {
	op   string
	snap []uuid.UUID
}

// modelOutcome applies LakeSoul's rules (reference §2.4/§2.5, as
// sqlfuncs/020_commit.sql documents them) to a commit of op with read
// version read and commit id own, against a partition's history: "ok" with
// the new snapshot, "fail" (40001) or "drop" (compaction abandoned).
func modelOutcome(hist []modelVersion, op string, read *int, own uuid.UUID) (string, []uuid.UUID) {
	cur := len(hist) - 1
	var curSnap []uuid.UUID
	if cur >= 0 {
		curSnap = hist[cur].snap
	}
	middle := map[string]bool{}
	var readSnap []uuid.UUID
	stale := read != nil && *read < cur
	if stale {
		readSnap = hist[*read].snap
		for v := *read + 1; v <= cur; v++ {
			middle[hist[v].op] = true
		}
	}
	tail := func() []uuid.UUID {
		var out []uuid.UUID
		for _, c := range curSnap {
			if !slices.Contains(readSnap, c) {
				out = append(out, c)
			}
		}
		return out
	}
	switch op {
	case catalog.AppendCommit, catalog.MergeCommit:
		other := catalog.MergeCommit
		if op == catalog.MergeCommit {
			other = catalog.AppendCommit
		}
		if stale && (middle[catalog.DeleteCommit] || middle[other]) {
			return "fail", nil
		}
		return "ok", append(slices.Clone(curSnap), own)
	case catalog.CompactionCommit:
		if !stale {
			return "ok", []uuid.UUID{own}
		}
		if middle[catalog.UpdateCommit] || middle[catalog.CompactionCommit] || middle[catalog.DeleteCommit] {
			return "drop", nil
		}
		return "ok", append([]uuid.UUID{own}, tail()...)
	case catalog.UpdateCommit:
		if !stale {
			return "ok", []uuid.UUID{own}
		}
		if middle[catalog.UpdateCommit] || middle[catalog.DeleteCommit] || (len(middle) > 1 && middle[catalog.CompactionCommit]) {
			return "fail", nil
		}
		if middle[catalog.CompactionCommit] {
			for v := *read + 1; v <= cur; v++ {
				if len(hist[v].snap) > 1 {
					return "fail", nil
				}
			}
			return "ok", []uuid.UUID{own}
		}
		return "ok", append([]uuid.UUID{own}, tail()...)
	}
	panic(op)
}

// modelReplay resolves a snapshot into live paths (reference §2.3).
func modelReplay(snap []uuid.UUID, opsOf map[uuid.UUID][]catalog.FileOp) []string {
	type op struct{ path, kind string }
	var all []op
	for _, c := range snap {
		for _, o := range opsOf[c] {
			all = append(all, op{o.Path, o.Op})
		}
	}
	deleted := map[string]bool{}
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		switch all[i].kind {
		case "del":
			deleted[all[i].path] = true
		case "add":
			if !deleted[all[i].path] {
				out = append(out, all[i].path)
			}
		}
	}
	slices.Reverse(out)
	return out
}

func TestModelConcurrentCommits(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"p"}, []string{"id"})
	descs := []string{"p=0", "p=1", "p=2"}
	const writers, perWriter = 8, 40
	if testing.Short() {
		t.Skip("model test in -short")
	}

	// Every partition starts with one merge, so reads have something to read.
	var seeds []*attempt
	for _, d := range descs {
		a := &attempt{op: catalog.MergeCommit, parts: []modelPart{{desc: d, id: uuid.New(), ops: add("seed-" + d)}}}
		a.versions = commit(t, c, tbl, a.op, catalog.PartitionCommit{Desc: d, CommitID: a.parts[0].id, Ops: a.parts[0].ops})
		seeds = append(seeds, a)
	}

	var mu sync.Mutex
	var attempts []*attempt
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for range perWriter {
				a := randomAttempt(t, c, tbl, rng, descs)
				pcs := make([]catalog.PartitionCommit, len(a.parts))
				for i, p := range a.parts {
					pcs[i] = catalog.PartitionCommit{Desc: p.desc, CommitID: p.id, Ops: p.ops, ReadVersion: p.read}
				}
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				a.versions, a.err = c.Commit(ctx, nil, tbl.ID, a.op, pcs)
				mu.Lock()
				attempts = append(attempts, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	all := append(seeds, attempts...)

	// What the catalog holds.
	type row struct {
		op   string
		snap []uuid.UUID
		ts   int64
	}
	stored := map[string][]row{}
	rows, err := c.Pool().Query(ctx, `SELECT partition_desc, version, commit_op, snapshot, timestamp
		FROM partition_info WHERE table_id = $1 ORDER BY partition_desc, version`, tbl.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d, op string
		var v int
		var snap []uuid.UUID
		var ts int64
		if err := rows.Scan(&d, &v, &op, &snap, &ts); err != nil {
			t.Fatal(err)
		}
		if v != len(stored[d]) {
			t.Fatalf("partition %s: version %d after %d versions (gap or duplicate)", d, v, len(stored[d]))
		}
		if n := len(stored[d]); n > 0 && ts < stored[d][n-1].ts {
			t.Errorf("partition %s: version %d has an earlier timestamp than version %d", d, v, v-1)
		}
		stored[d] = append(stored[d], row{op, snap, ts})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	committedRows := map[uuid.UUID]bool{}
	rows, err = c.Pool().Query(ctx, `SELECT commit_id, committed FROM data_commit_info WHERE table_id = $1`, tbl.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var committed bool
		if err := rows.Scan(&id, &committed); err != nil {
			t.Fatal(err)
		}
		committedRows[id] = committed
	}

	// The order the catalog reports: version → (attempt, partition).
	type slot struct {
		a *attempt
		p modelPart
	}
	byVersion := map[string]map[int]slot{}
	opsOf := map[uuid.UUID][]catalog.FileOp{}
	stats := map[string]int{}
	for _, a := range all {
		for _, p := range a.parts {
			opsOf[p.id] = p.ops
		}
		switch {
		case a.err != nil:
			if code := sqlerr.Code(a.err); code != sqlerr.SerializationFailure {
				t.Fatalf("%s failed with %s, not 40001: %v", a.op, code, a.err)
			}
			stats[a.op+" failed"]++
			for _, p := range a.parts {
				if _, ok := committedRows[p.id]; ok {
					t.Errorf("failed commit %s left a data_commit_info row", p.id)
				}
			}
		default:
			stats[a.op+" ok"]++
			for _, p := range a.parts {
				v, ok := a.versions[p.desc]
				if !ok {
					if a.op != catalog.CompactionCommit {
						t.Fatalf("%s on %s got no version", a.op, p.desc)
					}
					stats["compaction partitions dropped"]++
					if committedRows[p.id] {
						t.Errorf("abandoned compaction %s is marked committed", p.id)
					}
					continue
				}
				if byVersion[p.desc] == nil {
					byVersion[p.desc] = map[int]slot{}
				}
				if prev, dup := byVersion[p.desc][v]; dup {
					t.Fatalf("%s version %d reported to two commits (%s, %s)", p.desc, v, prev.p.id, p.id)
				}
				byVersion[p.desc][v] = slot{a, p}
				if !committedRows[p.id] {
					t.Errorf("commit %s (%s v%d) not marked committed", p.id, p.desc, v)
				}
			}
		}
	}
	t.Logf("outcomes: %v", stats)
	if stats["AppendCommit failed"]+stats["MergeCommit failed"]+stats["UpdateCommit failed"] == 0 || stats["compaction partitions dropped"] == 0 {
		t.Logf("warning: the run produced no conflicts of some kind; the model check is weaker")
	}

	// Replay each partition's order through the model.
	hists := map[string][]modelVersion{}
	for _, d := range descs {
		if len(byVersion[d]) != len(stored[d]) {
			t.Fatalf("%s: %d versions stored, %d reported to committers (lost or phantom versions)", d, len(stored[d]), len(byVersion[d]))
		}
		var hist []modelVersion
		for v := range stored[d] {
			s, ok := byVersion[d][v]
			if !ok {
				t.Fatalf("%s version %d: no committer reported it (phantom)", d, v)
			}
			outcome, snap := modelOutcome(hist, s.a.op, s.p.read, s.p.id)
			if outcome != "ok" {
				t.Fatalf("%s version %d: %s with read %v succeeded where the model says %s", d, v, s.a.op, deref(s.p.read), outcome)
			}
			if stored[d][v].op != s.a.op || fmt.Sprint(stored[d][v].snap) != fmt.Sprint(snap) {
				t.Fatalf("%s version %d (%s, read %v):\n stored %s %v\n model  %v", d, v, s.a.op, deref(s.p.read), stored[d][v].op, stored[d][v].snap, snap)
			}
			hist = append(hist, modelVersion{s.a.op, snap})
		}
		hists[d] = hist
		// Final state: the catalog's replay equals the model's.
		want := modelReplay(hist[len(hist)-1].snap, opsOf)
		if got := files(t, c, tbl, d); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s live files:\n catalog %v\n model   %v", d, got, want)
		}
	}

	// Failures and abandoned compactions were called for: for a failed
	// commit some partition, for a dropped partition that partition, reached
	// a state after the read in which the model gives the same verdict.
	calledFor := func(p modelPart, op, verdict string) bool {
		hist := hists[p.desc]
		for cur := max(deref(p.read), 0); cur < len(hist); cur++ {
			if o, _ := modelOutcome(hist[:cur+1], op, p.read, p.id); o == verdict {
				return true
			}
		}
		return false
	}
	for _, a := range all {
		if a.err != nil {
			if !slices.ContainsFunc(a.parts, func(p modelPart) bool { return calledFor(p, a.op, "fail") }) {
				t.Errorf("%s on %+v failed, but no state after its reads calls for it", a.op, a.parts)
			}
			continue
		}
		for _, p := range a.parts {
			if _, ok := a.versions[p.desc]; !ok && !calledFor(p, a.op, "drop") {
				t.Errorf("compaction of %s with read %d was dropped, but no state after the read calls for it", p.desc, deref(p.read))
			}
		}
	}
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// randomAttempt builds a commit: an op, one or two partitions, the read
// version of each taken from the catalog now (stale by the time it commits),
// and file ops of the kind each op writes.
func randomAttempt(t *testing.T, c *catalog.Catalog, tbl *catalog.Table, rng *rand.Rand, descs []string) *attempt {
	a := &attempt{}
	switch r := rng.IntN(100); {
	case r < 35:
		a.op = catalog.MergeCommit
	case r < 60:
		a.op = catalog.AppendCommit
	case r < 80:
		a.op = catalog.UpdateCommit
	default:
		a.op = catalog.CompactionCommit
	}
	n := 1 + rng.IntN(2)
	perm := rng.Perm(len(descs))[:n]
	var chosen []string
	for _, i := range perm {
		chosen = append(chosen, descs[i])
	}
	snap, err := c.LiveFiles(context.Background(), tbl.ID, chosen)
	if err != nil {
		t.Error(err)
		return a
	}
	read := map[string]catalog.PartitionFiles{}
	for _, p := range snap {
		read[p.Desc] = p
	}
	withRead := a.op == catalog.UpdateCommit || a.op == catalog.CompactionCommit || rng.IntN(2) == 0
	for _, d := range chosen {
		id := uuid.New()
		p := modelPart{desc: d, id: id, ops: add(id.String()+"-a", id.String()+"-b")}
		rp, ok := read[d]
		if !ok {
			t.Errorf("partition %s not readable", d)
			continue
		}
		if withRead {
			v := rp.Version
			p.read = &v
		}
		if a.op == catalog.UpdateCommit {
			for _, f := range rp.Files {
				p.ops = append(p.ops, catalog.FileOp{Path: f.Path, Op: "del"})
			}
		}
		a.parts = append(a.parts, p)
	}
	return a
}
