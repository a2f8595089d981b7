package engine

import (
	"context"
	"runtime"
	"testing"
)

// TestConflictProbeReadsOneBucket: INSERT … ON CONFLICT of one row — its
// key a literal, a parameter, or a string for an integer key — reads the
// target's rows of the key's bucket alone, with a key filter, not the
// whole table; VALUES with DEFAULT or arithmetic for the key read all of it.
func TestConflictProbeReadsOneBucket(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE probe_kv (id int PRIMARY KEY, v int DEFAULT 0) WITH (hash_bucket_num = 4)")
	exec("INSERT INTO probe_kv SELECT g, 0 FROM generate_series(1, 200) g")
	tbl, err := s.e.cat.TableByName(ctx, "default", "probe_kv")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql     string
		args    []any
		buckets int // 0: the whole table
	}{
		{"INSERT INTO probe_kv VALUES (7, 1) ON CONFLICT (id) DO UPDATE SET v = probe_kv.v + excluded.v", nil, 1},
		{"INSERT INTO probe_kv VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET v = probe_kv.v + excluded.v", []any{int32(7)}, 1},
		{"INSERT INTO probe_kv VALUES ('7', 1) ON CONFLICT (id) DO NOTHING", nil, 1},
		{"INSERT INTO probe_kv (id, v) VALUES (7, 1), (8, 1) ON CONFLICT (id) DO NOTHING", nil, -1},
		{"INSERT INTO probe_kv VALUES (6 + 1, 1) ON CONFLICT (id) DO NOTHING", nil, 0},
		// Fractions are stored rounded (7.6 → 8) but equal no integer.
		{"INSERT INTO probe_kv VALUES (7.6, 1) ON CONFLICT (id) DO NOTHING", nil, 0},
		{"INSERT INTO probe_kv VALUES (7.4::numeric, 1) ON CONFLICT (id) DO NOTHING", nil, 0},
		{"INSERT INTO probe_kv VALUES ($1::numeric, 1) ON CONFLICT (id) DO NOTHING", []any{"7.6"}, 0},
		{"INSERT INTO probe_kv SELECT 7, 1 ON CONFLICT (id) DO NOTHING", nil, 0},
	} {
		stmts, err := s.Parse(ctx, c.sql, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := stmts[0].Bind(ctx, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.Execute(ctx, 0, discard{}); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		// The statement's target scan is registered until the statement
		// is collected; its counts are the execution's.
		kept, pruned := -2, false
		s.e.scans.mu.Lock()
		for _, e := range s.e.scans.m {
			if e.table.ID == tbl.ID && e.prune != nil {
				pruned = true
				kept = len(e.counts.buckets)
				if e.counts.buckets == nil || e.keys() == nil {
					kept = 0
				}
			}
		}
		s.e.scans.mu.Unlock()
		p.Close()
		runtime.KeepAlive(stmts)
		switch {
		case c.buckets == 0 && pruned:
			t.Errorf("%s: the target's scan was narrowed to %d buckets, want the whole table", c.sql, kept)
		case c.buckets == 1 && (!pruned || kept != 1):
			t.Errorf("%s: pruned %v, %d buckets read, want 1 with a key filter", c.sql, pruned, kept)
		case c.buckets == -1 && (!pruned || kept < 1 || kept > 2):
			t.Errorf("%s: pruned %v, %d buckets read, want the keys' buckets", c.sql, pruned, kept)
		}
		s.e.scans.mu.Lock()
		for h, e := range s.e.scans.m { // forget this statement's handles
			if e.table.ID == tbl.ID && e.prune != nil {
				delete(s.e.scans.m, h)
			}
		}
		s.e.scans.mu.Unlock()
	}
	rows, err := internalQuery(ctx, s, "SELECT v FROM probe_kv WHERE id = 7")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != int32(2) {
		t.Errorf("row 7 after two increments: %v, want 2", rows)
	}
}
