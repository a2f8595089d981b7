package engine_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// vecLit is the text form of v.
func vecLit(v []float32) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprint(f)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// clusteredRows inserts n rows of dims-dimensional clustered vectors with
// ids from first, and returns them.
func insertClustered(t *testing.T, s pgwire.Session, table string, first, n, dims int, rng *rand.Rand, centers [][]float32) map[int][]float32 {
	t.Helper()
	out := map[int][]float32{}
	var vals []string
	for i := first; i < first+n; i++ {
		c := centers[rng.IntN(len(centers))]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64())
		}
		out[i] = v
		vals = append(vals, fmt.Sprintf("(%d, %d, '%s')", i, i%3, vecLit(v)))
		if len(vals) == 500 || i == first+n-1 {
			mustRun(t, s, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ","))
			vals = vals[:0]
		}
	}
	return out
}

// waitSegments waits until the index has n segments built after the
// given build time.
func waitSegments(t *testing.T, s pgwire.Session, index string, n int) {
	t.Helper()
	for {
		rows := mustRun(t, s, fmt.Sprintf(`SELECT count(*) FROM lakesoul.vector_index_segment WHERE index_name = '%s'`, index))
		if rows[0] == fmt.Sprint(n) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func nearestIDs(t *testing.T, s pgwire.Session, query string, params ...any) []string {
	t.Helper()
	return mustRun(t, s, query, params...)
}

// TestVectorIndex: an ivfflat index built in the background per bucket
// answers ORDER BY emb <-> q LIMIT k with recall ≥ 0.9 against the exact
// answer on clustered data; rows upserted after the build are found at
// once, overwritten vectors never appear, deleted keys never appear,
// filtered searches return only matching rows; EXPLAIN names the index;
// DROP INDEX returns to exact search; bad CREATE INDEX input fails cleanly.
func TestVectorIndex(t *testing.T) {
	s := newSession(t)
	const dims = 16
	mustRun(t, s, `CREATE SCHEMA v; CREATE TABLE v.items (id bigint, cat int, emb vector(16), PRIMARY KEY (id)) WITH (hash_bucket_num = 2)`)
	rng := rand.New(rand.NewPCG(3, 4))
	centers := make([][]float32, 20)
	for i := range centers {
		centers[i] = make([]float32, dims)
		for j := range centers[i] {
			centers[i][j] = float32(rng.NormFloat64() * 5)
		}
	}
	insertClustered(t, s, "v.items", 0, 4000, dims, rng, centers)

	// Bad input: nothing is recorded.
	for _, c := range []struct{ sql, code string }{
		{`CREATE INDEX bad ON v.items USING ivfflat (emb vector_l1_ops)`, sqlerr.UndefinedObject},
		{`CREATE INDEX bad ON v.items USING ivfflat (cat vector_l2_ops)`, sqlerr.DatatypeMismatch},
		{`CREATE INDEX bad ON v.items USING ivfflat (emb vector_l2_ops) WITH (lists = 0)`, sqlerr.InvalidParameterValue},
		{`DROP INDEX v.nosuch`, sqlerr.UndefinedObject},
	} {
		if _, err := run(t, s, c.sql); sqlerr.Code(err) != c.code {
			t.Errorf("%s: %v, want %s", c.sql, err, c.code)
		}
	}
	expectRows(t, s, `SELECT count(*) FROM lakesoul.vector_index`, "0")

	queries := make([]string, 20)
	for i := range queries {
		c := centers[rng.IntN(len(centers))]
		q := make([]float32, dims)
		for j := range q {
			q[j] = c[j] + float32(rng.NormFloat64())
		}
		queries[i] = vecLit(q)
	}
	const search = `SELECT id FROM v.items ORDER BY emb <-> $1 LIMIT 10`
	exact := make([][]string, len(queries))
	for i, q := range queries {
		exact[i] = nearestIDs(t, s, search, q)
	}
	mustRun(t, s, `CREATE INDEX items_emb ON v.items USING ivfflat (emb vector_l2_ops) WITH (lists = 20)`)
	waitSegments(t, s, "items_emb", 2)
	if out := strings.Join(mustRun(t, s, `EXPLAIN SELECT id FROM v.items ORDER BY emb <-> '`+queries[0]+`' LIMIT 10`), "\n"); !strings.Contains(out, "Vector Index Scan using items_emb") || !strings.Contains(out, "2 segments") {
		t.Errorf("EXPLAIN does not show the index:\n%s", out)
	}
	recall := func(probes int) float64 {
		mustRun(t, s, fmt.Sprintf("SET ivfflat.probes = %d", probes))
		hit := 0
		for i, q := range queries {
			for _, id := range nearestIDs(t, s, search, q) {
				for _, e := range exact[i] {
					if e == id {
						hit++
					}
				}
			}
		}
		return float64(hit) / float64(10*len(queries))
	}
	r4 := recall(4)
	t.Logf("recall@10: %.3f with 4 probes, %.3f with 1", r4, recall(1))
	if r := r4; r < 0.9 {
		t.Errorf("recall@10 with 4 probes: %.3f, want ≥ 0.9", r)
	}
	if r := recall(20); r != 1 {
		t.Errorf("recall@10 probing every list: %.3f, want 1", r)
	}

	// After the build: a new row right at the query, an old row moved onto
	// it, and the nearest old row deleted (copy-on-write on this table).
	mustRun(t, s, "SET ivfflat.probes = 1")
	q0 := queries[0]
	first := exact[0][0]
	second := exact[0][1]
	mustRun(t, s, fmt.Sprintf(`INSERT INTO v.items VALUES (100000, 1, '%s')`, q0))
	mustRun(t, s, fmt.Sprintf(`INSERT INTO v.items VALUES (%s, 2, '%s')`, second, vecLit(make([]float32, dims))))
	got := nearestIDs(t, s, search, q0)
	if got[0] != "100000" {
		t.Errorf("the row upserted at the query is not first: %v", got)
	}
	for _, id := range got {
		if id == second {
			t.Errorf("row %s was moved away but is still returned: %v", second, got)
		}
	}
	// In a transaction block, the block's own upsert is found too.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, fmt.Sprintf(`INSERT INTO v.items VALUES (100001, 1, '%s')`, q0))
	if got := nearestIDs(t, s, search, q0); !slices.Contains(got[:2], "100001") {
		t.Errorf("the block's own upsert at the query is not among the first two: %v", got)
	}
	mustRun(t, s, "ROLLBACK")
	mustRun(t, s, "DELETE FROM v.items WHERE id = "+first)
	for _, id := range nearestIDs(t, s, search, q0) {
		if id == first {
			t.Errorf("deleted row %s returned", first)
		}
	}
	// Filtered: only matching rows.
	for _, row := range mustRun(t, s, `SELECT cat FROM v.items WHERE cat = 1 ORDER BY emb <-> $1 LIMIT 10`, q0) {
		if row != "1" {
			t.Errorf("filtered search returned cat %s", row)
		}
	}
	// Compaction rewrites the buckets; their segments are rebuilt over the
	// compacted files, and the search then needs no exact part.
	mustRun(t, s, `CALL lakesoul.compact('v.items')`)
	for {
		rows := mustRun(t, s, `SELECT count(*) FROM lakesoul.vector_index_segment WHERE array_length(data_files, 1) = 1 AND data_files[1] LIKE '%compact_%'`)
		if rows[0] == "2" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := strings.Join(mustRun(t, s, `EXPLAIN SELECT id FROM v.items ORDER BY emb <-> '`+q0+`' LIMIT 10`), "\n"); !strings.Contains(out, "2 segments, 0 units searched exactly, 0 newer files") {
		t.Errorf("EXPLAIN after compaction:\n%s", out)
	}
	if got := nearestIDs(t, s, search, q0); got[0] != "100000" {
		t.Errorf("after compaction and rebuild: %v", got)
	}
	mustRun(t, s, `DROP INDEX v.items_emb`)
	expectRows(t, s, `SELECT count(*) FROM lakesoul.vector_index_segment`, "0")
	if out := strings.Join(mustRun(t, s, `EXPLAIN SELECT id FROM v.items ORDER BY emb <-> '`+q0+`' LIMIT 10`), "\n"); strings.Contains(out, "items_emb") {
		t.Errorf("EXPLAIN shows a dropped index:\n%s", out)
	}
}

// TestVectorIndexMOR: the index search validates its candidates against
// the files newer than the segment before it fetches rows. On a CDC table
// (deletes are markers in newer files, merge-on-read), after the build:
// the 15 rows nearest the query deleted and the next 15 overwritten far
// away, a LIMIT 10 search still returns 10 rows, none of them (a search
// that kept their stale candidates would fill most of its k + 10 slots
// with them); a row whose other column is UPDATEd stays findable with its
// indexed vector; a filtered search returns only matching rows, as the
// exact search does.
func TestVectorIndexMOR(t *testing.T) {
	s := newSession(t)
	const dims = 16
	mustRun(t, s, `CREATE SCHEMA m; CREATE TABLE m.items (id bigint, cat int, emb vector(16), op text, PRIMARY KEY (id)) WITH (cdc_column = 'op')`)
	rng := rand.New(rand.NewPCG(5, 6))
	centers := make([][]float32, 4)
	for i := range centers {
		centers[i] = make([]float32, dims)
		for j := range centers[i] {
			centers[i][j] = float32(rng.NormFloat64() * 5)
		}
	}
	var vals []string
	for i := range 1500 {
		c := centers[i%len(centers)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64())
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, '%s', 'insert')", i, i%3, vecLit(v)))
		if len(vals) == 500 {
			mustRun(t, s, "INSERT INTO m.items VALUES "+strings.Join(vals, ","))
			vals = vals[:0]
		}
	}
	mustRun(t, s, `CREATE INDEX m_emb ON m.items USING ivfflat (emb vector_l2_ops) WITH (lists = 8)`)
	waitSegments(t, s, "m_emb", 4)
	mustRun(t, s, "SET ivfflat.probes = 8")
	q := make([]float32, dims)
	copy(q, centers[0])
	ql := vecLit(q)
	const exactQ = `SELECT id FROM m.items ORDER BY l2_distance(emb, $1) LIMIT 40`
	near := nearestIDs(t, s, exactQ, ql)
	deleted, moved, updated := near[:15], near[15:30], near[30]
	mustRun(t, s, "DELETE FROM m.items WHERE id IN ("+strings.Join(deleted, ",")+")")
	far := make([]float32, dims)
	for j := range far {
		far[j] = 1000
	}
	for _, id := range moved {
		mustRun(t, s, fmt.Sprintf("INSERT INTO m.items VALUES (%s, 0, '%s', 'insert')", id, vecLit(far)))
	}
	mustRun(t, s, "UPDATE m.items SET cat = 7 WHERE id = "+updated)
	const search = `SELECT id FROM m.items ORDER BY emb <-> $1 LIMIT 10`
	if out := strings.Join(mustRun(t, s, "EXPLAIN "+strings.Replace(search, "$1", "'"+ql+"'", 1)), "\n"); !strings.Contains(out, "Vector Index Scan using m_emb") || !strings.Contains(out, "4 segments") {
		t.Fatalf("EXPLAIN does not show the index:\n%s", out)
	}
	got := nearestIDs(t, s, search, ql)
	if len(got) != 10 {
		t.Errorf("search after 15 deletes and 15 overwrites returned %d rows, want 10: %v", len(got), got)
	}
	for _, id := range got {
		if slices.Contains(deleted, id) || slices.Contains(moved, id) {
			t.Errorf("deleted or overwritten row %s returned: %v", id, got)
		}
	}
	if len(got) == 0 || got[0] != updated {
		t.Errorf("the row whose cat was updated (%s) is not first: %v", updated, got)
	}
	want := nearestIDs(t, s, `SELECT id FROM m.items ORDER BY l2_distance(emb, $1) LIMIT 10`, ql)
	hit := 0
	for _, id := range got {
		if slices.Contains(want, id) {
			hit++
		}
	}
	if hit < 9 {
		t.Errorf("search %v against exact %v: %d of 10", got, want, hit)
	}
	// Filtered: only matching rows, and the exact filtered answer's rows.
	rows := mustRun(t, s, `SELECT id, cat FROM m.items WHERE cat = 1 ORDER BY emb <-> $1 LIMIT 10`, ql)
	if len(rows) != 10 {
		t.Errorf("filtered search returned %d rows", len(rows))
	}
	for _, r := range rows {
		if !strings.HasSuffix(r, "|1") {
			t.Errorf("filtered search returned %q", r)
		}
	}
}

// TestVectorIndexRelations: vector index names are per schema (two schemas
// may each have an index x; a second x in one schema is 42P07, as a table
// of that name is), and the emulated catalog lists vector indexes as index
// relations of their tables (pg_class, pg_index, pg_indexes with
// pg_get_indexdef's CREATE INDEX … USING ivfflat), until DROP INDEX.
func TestVectorIndexRelations(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA a; CREATE SCHEMA b;
		CREATE TABLE a.t (id bigint, emb vector(3), PRIMARY KEY (id));
		CREATE TABLE b.t (id bigint, emb vector(3), PRIMARY KEY (id));
		CREATE TABLE a.taken (id bigint, PRIMARY KEY (id))`)
	mustRun(t, s, `CREATE INDEX x ON a.t USING ivfflat (emb vector_cosine_ops) WITH (lists = 4)`)
	mustRun(t, s, `CREATE INDEX x ON b.t USING ivfflat (emb vector_l2_ops)`)
	for _, q := range []string{
		`CREATE INDEX x ON a.t USING ivfflat (emb vector_l2_ops)`,
		`CREATE INDEX taken ON a.t USING ivfflat (emb vector_l2_ops)`,
	} {
		if _, err := run(t, s, q); sqlerr.Code(err) != sqlerr.DuplicateTable {
			t.Errorf("%s: %v, want 42P07", q, err)
		}
	}
	if _, err := run(t, s, `CREATE INDEX h ON a.t USING hnsw (emb vector_l2_ops)`); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("USING hnsw: %v, want 0A000", err)
	}
	expectRows(t, s, `SELECT n.nspname, c.relname, c.relkind::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relname = 'x' ORDER BY 1`, "a|x|i", "b|x|i")
	expectRows(t, s, `SELECT schemaname, tablename, indexdef FROM pg_catalog.pg_indexes WHERE indexname = 'x' ORDER BY 1`,
		"a|t|CREATE INDEX x ON a.t USING ivfflat (emb vector_cosine_ops) WITH (lists=4)",
		"b|t|CREATE INDEX x ON b.t USING ivfflat (emb vector_l2_ops) WITH (lists=100)")
	expectRows(t, s, `SELECT i.indisunique, i.indisprimary, a.attname FROM pg_catalog.pg_index i
		JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE c.relname = 'x' AND n.nspname = 'b'`, "false|false|emb")
	mustRun(t, s, `DROP INDEX a.x`)
	expectRows(t, s, `SELECT schemaname FROM pg_catalog.pg_indexes WHERE indexname = 'x'`, "b")
}

// Vector columns of more than 2000 dimensions cannot be indexed, with
// pgvector's error for either method; 2000 can.
func TestVectorIndexDimensionCap(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA cap; CREATE TABLE cap.wide (id bigint, emb vector(2001), PRIMARY KEY (id));
		CREATE TABLE cap.ok (id bigint, emb vector(2000), PRIMARY KEY (id))`)
	for _, method := range []string{"ivfflat", "hnsw"} {
		_, err := run(t, s, `CREATE INDEX w_`+method+` ON cap.wide USING `+method+` (emb vector_l2_ops)`)
		want := "column cannot have more than 2000 dimensions for " + method + " index"
		if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded || err.Error() != want {
			t.Errorf("%s on vector(2001): %v, want 54000 %q", method, err, want)
		}
	}
	mustRun(t, s, `CREATE INDEX ok_idx ON cap.ok USING ivfflat (emb vector_l2_ops) WITH (lists = 4)`)
}

// buildPIDs are the vector index builds pg_stat_activity shows.
func buildPIDs(t *testing.T, s pgwire.Session) []string {
	t.Helper()
	return mustRun(t, s, `SELECT pid FROM pg_stat_activity WHERE backend_type = 'vector index build'`)
}

// waitBuilds waits until pg_stat_activity shows n builds, up to limit.
func waitBuilds(t *testing.T, s pgwire.Session, n int, limit time.Duration, what string) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		pids := buildPIDs(t, s)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d builds after %s, want %d", what, len(pids), limit, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A build of a 2000-dimension index (seconds of work: its rotation alone
// is O(D³)) shows in pg_stat_activity and stops at once when
// pg_cancel_backend is called on it, when its index is dropped and when
// its table is dropped.
func TestVectorBuildStops(t *testing.T) {
	s := newSession(t)
	const dims = 2000
	mustRun(t, s, `CREATE SCHEMA bs; CREATE TABLE bs.t (id bigint, cat int, emb vector(2000), PRIMARY KEY (id)) WITH (hash_bucket_num = 1)`)
	rng := rand.New(rand.NewPCG(5, 6))
	center := make([]float32, dims)
	insertClustered(t, s, "bs.t", 0, 400, dims, rng, [][]float32{center})
	const prompt = 5 * time.Second // the index is checked every second

	mustRun(t, s, `CREATE INDEX i1 ON bs.t USING ivfflat (emb vector_l2_ops) WITH (lists = 8)`)
	pids := waitBuilds(t, s, 1, time.Minute, "CREATE INDEX")
	expectRows(t, s, "SELECT pg_cancel_backend("+pids[0]+")", "true")
	waitBuilds(t, s, 0, prompt, "pg_cancel_backend")

	mustRun(t, s, `DROP INDEX bs.i1`)
	mustRun(t, s, `CREATE INDEX i2 ON bs.t USING ivfflat (emb vector_l2_ops) WITH (lists = 8)`)
	waitBuilds(t, s, 1, time.Minute, "CREATE INDEX")
	mustRun(t, s, `DROP INDEX bs.i2`)
	waitBuilds(t, s, 0, prompt, "DROP INDEX")

	mustRun(t, s, `CREATE INDEX i3 ON bs.t USING ivfflat (emb vector_l2_ops) WITH (lists = 8)`)
	waitBuilds(t, s, 1, time.Minute, "CREATE INDEX")
	mustRun(t, s, `DROP TABLE bs.t`)
	waitBuilds(t, s, 0, prompt, "DROP TABLE")
}
