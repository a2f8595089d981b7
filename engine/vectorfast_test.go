package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVectorFastPathMatchesDuckDB: the index searches the fast path runs
// in Go (EXPLAIN says so) return the rows the DuckDB route returns for the
// same search (a select list the fast path does not cover: expressions
// "+ 0"), with the same distances, after upserts, an overwrite, a delete
// and an UPDATE of another column since the build, with and without a
// WHERE the reader evaluates; and a row whose vector was set to NULL
// after the build is never returned.
func TestVectorFastPathMatchesDuckDB(t *testing.T) {
	s := newSession(t)
	const dims = 16
	mustRun(t, s, `CREATE SCHEMA f; CREATE TABLE f.items (id bigint, cat int, emb vector(16), PRIMARY KEY (id)) WITH (hash_bucket_num = 2)`)
	rng := rand.New(rand.NewPCG(7, 8))
	centers := make([][]float32, 10)
	for i := range centers {
		centers[i] = make([]float32, dims)
		for j := range centers[i] {
			centers[i][j] = float32(rng.NormFloat64() * 5)
		}
	}
	insertClustered(t, s, "f.items", 0, 3000, dims, rng, centers)
	mustRun(t, s, `CREATE INDEX f_emb ON f.items USING ivfflat (emb vector_l2_ops) WITH (lists = 16)`)
	mustRun(t, s, `CREATE INDEX f_ip ON f.items USING ivfflat (emb vector_ip_ops) WITH (lists = 16)`)
	waitSegments(t, s, "f_emb", 2)
	waitSegments(t, s, "f_ip", 2)
	mustRun(t, s, "SET ivfflat.probes = 4")
	q := make([]float32, dims)
	copy(q, centers[0])
	ql := vecLit(q)
	near := nearestIDs(t, s, `SELECT id FROM f.items ORDER BY l2_distance(emb, $1) LIMIT 5`, ql)
	// Since the build: new rows, one overwritten at the query, one whose
	// cat changes, then one deleted (copy-on-write: its unit is searched
	// exactly), then one whose vector becomes NULL.
	insertClustered(t, s, "f.items", 5000, 200, dims, rng, centers)
	mustRun(t, s, fmt.Sprintf(`INSERT INTO f.items VALUES (%s, 1, '%s')`, near[4], ql))
	mustRun(t, s, "UPDATE f.items SET cat = 1 WHERE id = "+near[1])
	pairs := []struct{ fast, duck string }{
		{`SELECT id FROM f.items ORDER BY emb <-> $1 LIMIT 10`,
			`SELECT id + 0 FROM f.items ORDER BY emb <-> $1 LIMIT 10`},
		{`SELECT id, cat, emb <-> $1 AS d FROM f.items ORDER BY emb <-> $1 LIMIT 7`,
			`SELECT id + 0, cat + 0, (emb <-> $1) + 0 AS d FROM f.items ORDER BY emb <-> $1 LIMIT 7`},
		{`SELECT i.id, i.cat FROM f.items i WHERE i.cat = 1 ORDER BY i.emb <-> $1 LIMIT 10`,
			`SELECT i.id + 0, i.cat + 0 FROM f.items i WHERE i.cat = 1 ORDER BY i.emb <-> $1 LIMIT 10`},
		{`SELECT id, emb <#> $1 FROM f.items WHERE id < 2000 ORDER BY emb <#> $1 LIMIT 5`,
			`SELECT id + 0, (emb <#> $1) + 0 FROM f.items WHERE id < 2000 ORDER BY emb <#> $1 LIMIT 5`},
		// pgvector's canonical query: the vector column itself comes back.
		{`SELECT * FROM f.items ORDER BY emb <-> $1 LIMIT 5`,
			`SELECT id + 0, cat, emb FROM f.items ORDER BY emb <-> $1 LIMIT 5`},
	}
	nulled := ""
	check := func(when string) {
		t.Helper()
		for _, p := range pairs {
			lit := strings.ReplaceAll(p.fast, "$1", "'"+ql+"'")
			plan := strings.Join(mustRun(t, s, "EXPLAIN "+lit), "\n")
			if !strings.Contains(plan, "executed without DuckDB") {
				t.Errorf("%s: %s does not take the fast path:\n%s", when, p.fast, plan)
			}
			if plan := strings.Join(mustRun(t, s, "EXPLAIN "+strings.ReplaceAll(p.duck, "$1", "'"+ql+"'")), "\n"); strings.Contains(plan, "executed without DuckDB") {
				t.Errorf("%s: %s takes the fast path", when, p.duck)
			}
			got, want := mustRun(t, s, p.fast, ql), mustRun(t, s, p.duck, ql)
			if len(got) == 0 || !sameRows(got, want) {
				t.Errorf("%s: %s\nfast:  %v\nduckdb: %v", when, p.fast, got, want)
			}
			for _, r := range got {
				if strings.HasPrefix(r+"|", nulled+"|") {
					t.Errorf("%s: %s returned row %s, whose vector is NULL", when, p.fast, nulled)
				}
			}
		}
		if got := nearestIDs(t, s, pairs[0].fast, ql); got[0] != near[4] {
			t.Errorf("%s: the row overwritten at the query (%s) is not first: %v", when, near[4], got)
		}
	}
	check("after upserts")
	// A delete rewrites the buckets (copy-on-write), so the index serves
	// them again once compaction rebuilt their segments.
	mustRun(t, s, "DELETE FROM f.items WHERE id = "+near[0])
	mustRun(t, s, `CALL lakesoul.compact('f.items')`)
	for _, ix := range []string{"f_emb", "f_ip"} {
		for {
			rows := mustRun(t, s, `SELECT count(*) FROM lakesoul.vector_index_segment WHERE index_name = '`+ix+`' AND array_length(data_files, 1) = 1 AND data_files[1] LIKE '%compact_%'`)
			if rows[0] == "2" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	check("after a delete")
	for _, r := range mustRun(t, s, pairs[0].fast, ql) {
		if r == near[0] {
			t.Errorf("deleted row %s returned", near[0])
		}
	}
	// A vector set to NULL after the build: the newer row has none, so
	// the fast path reads the key's merged row and leaves it out.
	nulled = near[2]
	mustRun(t, s, "UPDATE f.items SET emb = NULL WHERE id = "+nulled)
	check("after a vector set to NULL")
	// A copy-on-write DELETE rewrites the bucket with that NULL vector
	// between valid ones (writer.dataFile.writeColumn); the rewritten unit
	// is searched exactly until compaction rebuilds its segment, so the
	// DuckDB route answers.
	mustRun(t, s, "DELETE FROM f.items WHERE id = "+near[1])
	expectRows(t, s, "SELECT emb IS NULL FROM f.items WHERE id = "+nulled, "true")
	for _, r := range nearestIDs(t, s, pairs[0].duck, ql) {
		if r == near[1] || r == nulled {
			t.Errorf("after a delete beside a NULL vector: row %s returned (deleted %s, NULL vector %s)", r, near[1], nulled)
		}
	}
}

// sameRows compares result rows field by field, floats to 1e-9 relative
// (the fast path sums in the same order and precision, but need not be
// bit-identical to DuckDB's vectorized sum).
func sameRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		fa, fb := strings.Split(a[i], "|"), strings.Split(b[i], "|")
		if len(fa) != len(fb) {
			return false
		}
		for j := range fa {
			if fa[j] == fb[j] {
				continue
			}
			x, err1 := strconv.ParseFloat(fa[j], 64)
			y, err2 := strconv.ParseFloat(fb[j], 64)
			if err1 != nil || err2 != nil || abs(x-y) > 1e-9*max(abs(x), abs(y), 1) {
				return false
			}
		}
	}
	return true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestVectorFastPathCosineZeroVector: under cosine distance a zero vector
// is NaN away from every query and ranks after every other row, on the
// fast path as on the DuckDB route.
func TestVectorFastPathCosineZeroVector(t *testing.T) {
	s := newSession(t)
	const dims = 8
	mustRun(t, s, `CREATE SCHEMA z; CREATE TABLE z.items (id bigint PRIMARY KEY, cat int, emb vector(8)) WITH (hash_bucket_num = 1)`)
	rng := rand.New(rand.NewPCG(3, 4))
	centers := [][]float32{make([]float32, dims)}
	for j := range centers[0] {
		centers[0][j] = float32(rng.NormFloat64() * 3)
	}
	insertClustered(t, s, "z.items", 1, 40, dims, rng, centers)
	mustRun(t, s, `INSERT INTO z.items VALUES (0, 0, '`+vecLit(make([]float32, dims))+`')`)
	mustRun(t, s, `CREATE INDEX z_cos ON z.items USING ivfflat (emb vector_cosine_ops) WITH (lists = 4)`)
	waitSegments(t, s, "z_cos", 1)
	mustRun(t, s, "SET ivfflat.probes = 4")
	ql := vecLit(centers[0])
	fast := `SELECT id FROM z.items ORDER BY emb <=> $1 LIMIT 41`
	if plan := strings.Join(mustRun(t, s, "EXPLAIN "+strings.ReplaceAll(fast, "$1", "'"+ql+"'")), "\n"); !strings.Contains(plan, "executed without DuckDB") {
		t.Fatalf("%s does not take the fast path:\n%s", fast, plan)
	}
	got := mustRun(t, s, fast, ql)
	want := mustRun(t, s, `SELECT id + 0 FROM z.items ORDER BY emb <=> $1 LIMIT 41`, ql)
	if len(got) != 41 || got[40] != "0" || !sameRows(got, want) {
		t.Errorf("fast path %v\nDuckDB    %v\n(the zero vector, id 0, ranks last)", got, want)
	}
}
