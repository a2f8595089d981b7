package engine_test

import (
	"regexp"
	"strings"
	"testing"
)

// Filters reach every lake reference of a join, a subquery or a CTE body:
// WHERE terms, ON terms of the sides a join does not NULL-extend, terms
// carried across join-key equalities, folded date arithmetic and LIKE
// prefixes. Results are those of the same query with the references
// behind OFFSET 0 subqueries (no term reaches their scans), for outer joins
// whose terms must not filter the preserved side too; EXPLAIN ANALYZE
// shows the filters and the row groups statistics skipped.
func TestJoinFiltersPushed(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE o (ok bigint, od date, tag text)`)
	mustRun(t, s, `INSERT INTO o SELECT i, DATE '2020-01-01' + (i // 1000)::int, 't' || lpad(i::text, 6, '0') FROM range(300000) AS r(i)`)
	mustRun(t, s, `CREATE TABLE l (lk bigint, ok bigint, qty int, PRIMARY KEY (lk)) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO l SELECT i, i % 70000, (i % 5)::int FROM range(90000) AS r(i)`)
	// Outer joins with constant ON terms run as nested loops in DuckDB:
	// small tables for them.
	mustRun(t, s, `CREATE TABLE o2 (ok bigint, od date)`)
	mustRun(t, s, `INSERT INTO o2 SELECT ok, od FROM o WHERE ok < 3000`)
	mustRun(t, s, `CREATE TABLE l2 (lk bigint, ok bigint, qty int, PRIMARY KEY (lk))`)
	mustRun(t, s, `INSERT INTO l2 SELECT lk, ok % 2500, qty FROM l WHERE lk < 2000`)
	ref := regexp.MustCompile(`\b(FROM|JOIN) (o2|l2|o|l)( [ol]\b)?`)
	hide := func(q string) string {
		return ref.ReplaceAllStringFunc(q, func(m string) string {
			p := ref.FindStringSubmatch(m)
			alias := strings.TrimSpace(p[3])
			if alias == "" {
				alias = p[2]
			}
			return p[1] + " (SELECT * FROM " + p[2] + " OFFSET 0) " + alias
		})
	}
	queries := []string{
		`SELECT count(*), sum(l.qty) FROM l JOIN o ON l.ok = o.ok WHERE o.ok < 1000`,
		`SELECT count(*), sum(qty) FROM l, o WHERE l.ok = o.ok AND od < DATE '2020-01-01' + INTERVAL '3 days'`,
		`SELECT count(*), count(o.ok) FROM l LEFT JOIN o ON l.ok = o.ok AND o.od < DATE '2020-01-01' + INTERVAL '10' DAY`,
		`SELECT count(*), count(o.ok) FROM l2 l LEFT JOIN o2 o ON l.ok = o.ok AND l.qty = 3 AND l.lk < 100`,
		`SELECT count(*), count(l.lk) FROM l RIGHT JOIN o ON l.ok = o.ok AND o.ok < 10 WHERE o.ok < 100`,
		`SELECT count(*), count(l.lk), count(o.ok) FROM l2 l FULL JOIN o2 o ON l.ok = o.ok AND o.ok < 5 AND l.lk < 5`,
		`SELECT count(*), count(o.ok) FROM l FULL JOIN o ON l.ok = o.ok WHERE o.ok BETWEEN 10 AND 20`,
		`SELECT count(*) FROM o WHERE ok IN (SELECT ok FROM l WHERE lk < 50) AND tag LIKE 't0000%'`,
		`WITH c AS (SELECT ok FROM l WHERE lk BETWEEN 100 AND 200) SELECT count(*), min(od) FROM c JOIN o USING (ok) WHERE o.ok > 150`,
		`SELECT count(*) FROM o WHERE tag LIKE 't0012%' AND od >= DATE '2020-01-01'`,
	}
	for _, q := range queries {
		got, want := mustRun(t, s, q), mustRun(t, s, hide(q))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %v\nwant %v (no pushdown)", q, got, want)
		}
	}
	plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE "+queries[0]), "\n")
	for _, want := range []string{"Row Filter: ok < 1000", "Row Groups Read: 1 of 3 (skipped: 2 by statistics"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}
	plan = strings.Join(mustRun(t, s, "EXPLAIN "+queries[1]), "\n")
	if want := "Row Filter: od < '2020-01-04'"; !strings.Contains(plan, want) {
		t.Errorf("EXPLAIN lacks %q:\n%s", want, plan)
	}
}

// Timestamp constants in ISO form filter timestamp columns (and prune by
// their statistics); other spellings are left to DuckDB. Results are those
// of the unpushed query.
func TestTimestampFiltersPushed(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE ev (id bigint, ts timestamp)`)
	mustRun(t, s, `INSERT INTO ev SELECT i, TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second' FROM range(200000) AS r(i)`)
	for _, w := range []string{
		`ts >= TIMESTAMP '2026-01-01 12:00:00' AND ts < '2026-01-02'`,
		`ts BETWEEN '2026-01-01 00:00:01.5' AND '2026-01-01T00:00:09'`,
		`ts = '2026-01-02 03:04:05'`,
		`ts < '2026-01-01 00:00:03+00'`,
	} {
		got := mustRun(t, s, "SELECT count(*), min(id), max(id) FROM ev WHERE "+w)
		want := mustRun(t, s, "SELECT count(*), min(id), max(id) FROM (SELECT * FROM ev OFFSET 0) e WHERE "+w)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: got %v, want %v", w, got, want)
		}
	}
	plan := strings.Join(mustRun(t, s, `EXPLAIN ANALYZE SELECT count(*) FROM ev WHERE ts >= TIMESTAMP '2026-01-03 00:00:00'`), "\n")
	for _, want := range []string{"Row Filter: ts >= '2026-01-03 00:00:00'", "skipped: 1 by statistics"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
}

// A file large enough to be read as one unit per row group is pruned part
// by part: each part keeps its own row groups of the whole file's plan,
// the file is counted once, and the rows are those of the unpushed query.
func TestSplitFilePruned(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE big (i bigint, s text)`)
	mustRun(t, s, `INSERT INTO big SELECT i, md5(i::text) || md5((i + 1)::text) FROM range(300000) AS r(i)`)
	for _, w := range []string{"i >= 150000", "i < 1000 OR i > 299000", "i BETWEEN 1 AND 2", "i > 5000000"} {
		q := "SELECT count(*), sum(i), min(s) FROM big WHERE " + w
		got, want := mustRun(t, s, q), mustRun(t, s, "SELECT count(*), sum(i), min(s) FROM (SELECT * FROM big OFFSET 0) b WHERE "+w)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: got %v, want %v", w, got, want)
		}
	}
	plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE SELECT sum(i) FROM big WHERE i >= 290000"), "\n")
	for _, want := range []string{"Files Read: 1 of 1", "Row Groups Read: 1 of 3 (skipped: 2 by statistics", "Rows: 300000 read"} {
		if strings.Contains(want, "Rows:") {
			if strings.Contains(plan, want) {
				t.Errorf("EXPLAIN ANALYZE says %q: nothing skipped:\n%s", want, plan)
			}
			continue
		}
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}
	plan = strings.Join(mustRun(t, s, "EXPLAIN ANALYZE SELECT sum(i) FROM big WHERE i < 10"), "\n")
	if want := "Files Read: 1 of 1"; !strings.Contains(plan, want) {
		t.Errorf("EXPLAIN ANALYZE lacks %q (the file read by its first part only):\n%s", want, plan)
	}
	plan = strings.Join(mustRun(t, s, "EXPLAIN ANALYZE SELECT sum(i) FROM big WHERE i > 299990"), "\n")
	if want := "Files Read: 1 of 1"; !strings.Contains(plan, want) {
		t.Errorf("EXPLAIN ANALYZE lacks %q (the file read by its last part only):\n%s", want, plan)
	}
}

// Numeric constants filter DECIMAL columns — and integer columns — in the
// reader: every comparison operator, BETWEEN and IN, against constants on
// the column's grid, between its points, beyond its range, in numeric
// arithmetic, as strings and casts, on append and primary-key tables (a
// DECIMAL key among them), with NULLs. Results are those of the unpushed
// query; EXPLAIN ANALYZE shows the bounds and the row groups the
// statistics skipped.
func TestDecimalFiltersPushed(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE da (id bigint, d numeric(9,2), q numeric(15,0), i int)`)
	mustRun(t, s, `CREATE TABLE dk (id bigint, d numeric(9,2), q numeric(15,0), i int, PRIMARY KEY (id)) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `CREATE TABLE dp (d numeric(9,2), i int, PRIMARY KEY (d))`)
	fill := `SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE (i - 150000) * 0.01 END, i % 50, (i % 1000)::int FROM range(300000) AS r(i)`
	mustRun(t, s, `INSERT INTO da `+fill)
	mustRun(t, s, `INSERT INTO dk `+fill)
	mustRun(t, s, `INSERT INTO dp SELECT (i - 500) * 0.01, i FROM range(1000) AS r(i)`)
	consts := []string{"0.05", "0.055", "-0.05", "5", "24", "'0.05'", "0.06 - 0.01", "0.06 + 0.01", "2 * 0.025", "1e-2",
		"-1499.995", "1500", "99999999999999999999.5", "-99999999999999999999", "0.05::numeric", "'0.055'::numeric(9,2)", "'1'::int4"}
	var conds []string
	for _, c := range consts {
		for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
			conds = append(conds, "d "+op+" "+c)
		}
	}
	conds = append(conds, "d BETWEEN 0.06 - 0.01 AND 0.06 + 0.01", "d IN (0.05, 0.055, 7, '-3.5')", "d NOT IN (0.05, 0.055)",
		"q < 24", "q BETWEEN 9.5 AND 10.5", "q = 7.0", "i < 24.5", "i >= 998.0001", "i = 3.0", "i <> 3.5", "d < 0.06 AND q > 3.5 AND i <= 500.5")
	for _, tbl := range []string{"da", "dk", "dp"} {
		for _, w := range conds {
			if tbl == "dp" && strings.Contains(w, "q ") {
				continue
			}
			q := "SELECT count(*), sum(d), min(i) FROM " + tbl + " WHERE " + w
			got := mustRun(t, s, q)
			want := mustRun(t, s, "SELECT count(*), sum(d), min(i) FROM (SELECT * FROM "+tbl+" OFFSET 0) x WHERE "+w)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: got %v, want %v (no pushdown)", q, got, want)
			}
		}
	}
	for q, wants := range map[string][]string{
		`SELECT sum(d) FROM da WHERE d BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND q < 24`: {
			"Row Filter: d >= 0.05 AND d <= 0.07 AND q < 24", "Row Groups Read: 1 of 3 (skipped: 2 by statistics", "3 passed the filters"},
		// Each bucket of dk is one file of unique keys: its row groups are
		// pruned as an append table's.
		`SELECT sum(d) FROM dk WHERE d > 1400.005`: {"Row Filter: d > 1400.00", "Row Groups Read: 2 of 4 (skipped: 2 by statistics",
			"Rows: 37856 read from files, 37856 merged, 9896 passed the filters"},
		`SELECT count(*) FROM dp WHERE d = 0.055`:     {"Row Filter: d IN ()", "0 passed the filters"},
		`SELECT count(*) FROM da WHERE i < 24.5`:      {"Row Filter: i < 25"},
		`SELECT count(*) FROM da WHERE d < -1499.995`: {"Row Filter: d < -1499.99", "Row Groups Read: 0 of 3 (skipped: 3 by statistics"}, // -1500.00 is NULL
	} {
		plan := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE "+q), "\n")
		for _, want := range wants {
			if !strings.Contains(plan, want) {
				t.Errorf("EXPLAIN ANALYZE %s lacks %q:\n%s", q, want, plan)
			}
		}
	}
}

// A column every branch of an OR constrains filters the scan by the hull
// of the branches' constraints (TPC-H Q19): unions of points, weakest
// bounds, nested ORs, numeric constants, branches on several tables of a
// join; a branch without the column, or with only terms that say nothing
// exact, leaves it unfiltered. Results are those of the unpushed query;
// EXPLAIN shows the hulls.
func TestOrFiltersPushed(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE TABLE li (k bigint, pk int, qty numeric(15,2), mode text, instr text, PRIMARY KEY (k)) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `CREATE TABLE la (k bigint, pk int, qty numeric(15,2), mode text, instr text)`)
	mustRun(t, s, `CREATE TABLE pt (pk int, brand text, size int)`)
	fill := `SELECT i, (i % 2000)::int, CASE WHEN i % 89 = 0 THEN NULL ELSE 1 + i % 50 END, (ARRAY['AIR','AIR REG','MAIL','SHIP','RAIL'])[1 + i % 5],
		CASE WHEN i % 101 = 0 THEN NULL ELSE (ARRAY['DELIVER IN PERSON','NONE','COLLECT COD'])[1 + i % 3] END FROM range(200000) AS r(i)`
	mustRun(t, s, `INSERT INTO li `+fill)
	mustRun(t, s, `INSERT INTO la `+fill)
	mustRun(t, s, `INSERT INTO pt SELECT i, 'Brand#' || (i % 5)::text, (i % 50)::int FROM range(2000) AS r(i)`)
	wheres := []string{
		`(mode IN ('AIR', 'AIR REG') AND qty >= 1 AND qty <= 1 + 10) OR (mode = 'MAIL' AND qty BETWEEN 10 AND 20) OR (mode IN ('AIR') AND qty > 45.5)`,
		`(qty < 3 AND instr = 'NONE') OR (qty >= 48 AND instr = 'NONE')`,
		`mode = 'AIR' OR mode = 'SHIP' OR mode = 'nothing'`,
		`k < 10 OR k > 199990 OR (k BETWEEN 5000 AND 5005)`,
		`k < 10 OR mode = 'AIR'`,
		`(k < 100 AND qty = 3) OR (k < 100 AND (qty = 4 OR qty = 5.5))`,
		`(k = 1 OR k = 2) OR k IN (7, 8)`,
		`qty < 2 OR qty <> 7`,
		`(qty < 2 AND mode <> 'AIR') OR (qty = 20.005)`,
		`(k < 5 AND k > 10) OR k = 3`,
		`instr = 'NONE' OR instr = 'COLLECT COD'`,
		`(mode = 'AIR' AND instr LIKE 'DELIVER%') OR (mode = 'RAIL' AND instr LIKE 'COLL%')`,
	}
	for _, tbl := range []string{"li", "la"} {
		for _, w := range wheres {
			q := "SELECT count(*), sum(qty), min(mode), max(k) FROM " + tbl + " WHERE " + w
			got := mustRun(t, s, q)
			want := mustRun(t, s, "SELECT count(*), sum(qty), min(mode), max(k) FROM (SELECT * FROM "+tbl+" OFFSET 0) x WHERE "+w)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: got %v, want %v (no pushdown)", q, got, want)
			}
		}
		q19 := `SELECT count(*), sum(qty) FROM ` + tbl + ` l, pt WHERE (pt.pk = l.pk AND brand = 'Brand#1' AND qty >= 1 AND qty <= 11 AND size BETWEEN 1 AND 5
			AND mode IN ('AIR', 'AIR REG') AND instr = 'DELIVER IN PERSON') OR (pt.pk = l.pk AND brand = 'Brand#2' AND qty >= 10 AND qty <= 20
			AND size BETWEEN 1 AND 10 AND mode IN ('AIR', 'AIR REG') AND instr = 'DELIVER IN PERSON')`
		got := mustRun(t, s, q19)
		want := mustRun(t, s, strings.Replace(strings.Replace(q19, tbl+" l,", "(SELECT * FROM "+tbl+" OFFSET 0) l,", 1), " pt WHERE", " (SELECT * FROM pt OFFSET 0) pt WHERE", 1))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: got %v, want %v (no pushdown)", q19, got, want)
		}
		plan := strings.Join(mustRun(t, s, "EXPLAIN "+q19), "\n")
		for _, want := range []string{"Row Filter: qty >= 1.00 AND qty <= 20.00 AND mode IN ('AIR', 'AIR REG') AND instr = 'DELIVER IN PERSON'",
			"Row Filter: brand IN ('Brand#1', 'Brand#2') AND size >= 1 AND size <= 10"} {
			if !strings.Contains(plan, want) {
				t.Errorf("%s: EXPLAIN lacks %q:\n%s", tbl, want, plan)
			}
		}
	}
	for q, want := range map[string]string{
		`SELECT count(*) FROM la WHERE k < 10 OR k > 199990 OR (k BETWEEN 5000 AND 5005)`: "",
		`SELECT count(*) FROM li WHERE (k = 1 OR k = 2) OR k IN (7, 8)`:                   "Key Filter: k IN (1, 2, 7, 8)",
		`SELECT count(*) FROM la WHERE k < 10 OR mode = 'AIR'`:                            "",
		`SELECT count(*) FROM la WHERE mode = 'AIR' OR mode = 'SHIP' OR mode = 'nothing'`: "Row Filter: mode IN ('AIR', 'SHIP', 'nothing')",
	} {
		plan := strings.Join(mustRun(t, s, "EXPLAIN "+q), "\n")
		if want == "" {
			if strings.Contains(plan, "Filter:") {
				t.Errorf("EXPLAIN %s has a filter:\n%s", q, plan)
			}
			continue
		}
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN %s lacks %q:\n%s", q, want, plan)
		}
	}
}
