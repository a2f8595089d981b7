package tests

import (
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestBulkUpsert writes enough rows that reads span many batches, upserts
// every other key with a partial column list, and checks aggregates and
// filters over the merged rows against values computed here.
func TestBulkUpsert(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	const n = 50000
	mustExec(t, ctx, c,
		"CREATE SCHEMA bulk",
		"CREATE TABLE bulk.t (id bigint PRIMARY KEY, g int, v double precision, s text) WITH (hash_bucket_num = 3)")
	for _, step := range []struct{ sql, tag string }{
		{fmt.Sprintf("INSERT INTO bulk.t SELECT i, i %% 7, i * 0.5, 'row ' || i FROM generate_series(1, %d) AS s(i)", n),
			fmt.Sprintf("INSERT 0 %d", n)},
		// Odd keys get v = -1; g and s are not written and keep their values.
		{fmt.Sprintf("INSERT INTO bulk.t (id, v) SELECT i, -1 FROM generate_series(1, %d, 2) AS s(i)", n),
			fmt.Sprintf("INSERT 0 %d", n/2)},
	} {
		tag, err := c.Exec(ctx, step.sql)
		if err != nil || tag.String() != step.tag {
			t.Fatalf("%s: %q, %v; want %s", step.sql, tag, err, step.tag)
		}
	}

	// The expected merged table.
	var sum float64
	gCount, gSum := make([]int64, 7), make([]float64, 7)
	for i := 1; i <= n; i++ {
		v := float64(i) * 0.5
		if i%2 == 1 {
			v = -1
		}
		sum += v
		if v > 0 {
			gCount[i%7]++
			gSum[i%7] += v
		}
	}

	var cnt, distinct, minus, withS, minID, maxID int64
	var gotSum float64
	err := c.QueryRow(ctx, `SELECT count(*), count(DISTINCT id), sum(v), count(*) FILTER (WHERE v = -1), count(s), min(id), max(id)
		FROM bulk.t`).Scan(&cnt, &distinct, &gotSum, &minus, &withS, &minID, &maxID)
	if err != nil {
		t.Fatal(err)
	}
	if cnt != n || distinct != n || gotSum != sum || minus != n/2 || withS != n || minID != 1 || maxID != n {
		t.Errorf("aggregates: count %d distinct %d sum %v minus %d count(s) %d min %d max %d; want %d %d %v %d %d 1 %d",
			cnt, distinct, gotSum, minus, withS, minID, maxID, n, n, sum, n/2, n, n)
	}
	var want []string
	for g := range 7 {
		want = append(want, fmt.Sprintf("%d|%d|%v", g, gCount[g], gSum[g]))
	}
	wantRows(t, "GROUP BY g over v > 0",
		queryStrings(t, ctx, c, "SELECT g, count(*), sum(v) FROM bulk.t WHERE v > 0 GROUP BY g ORDER BY g"), want)
	wantRows(t, "by key",
		queryStrings(t, ctx, c, fmt.Sprintf("SELECT * FROM bulk.t WHERE id IN (1, 2, %d, %d) ORDER BY id", n-1, n)),
		[]string{"1|1|-1|row 1", "2|2|1|row 2",
			fmt.Sprintf("%d|%d|-1|row %d", n-1, (n-1)%7, n-1), fmt.Sprintf("%d|%d|%v|row %d", n, n%7, float64(n)/2, n)})
	wantRows(t, "by a kept non-key value", queryStrings(t, ctx, c, "SELECT id, v FROM bulk.t WHERE s = 'row 777'"),
		[]string{"777|-1"})
	wantRows(t, "old values are gone", queryStrings(t, ctx, c, "SELECT count(*) FROM bulk.t WHERE v = 388.5"),
		[]string{"0"})
}

// TestConcurrentWriters has several sessions insert at once into the same
// primary-key table partition and into the same append table; every row
// must be there afterwards.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA conc",
		"CREATE TABLE conc.pk (id bigint PRIMARY KEY, w int, d date) PARTITION BY LIST (d)",
		"CREATE TABLE conc.app (w int, i int)")
	const writers, each = 6, 8
	pw, _ := srv.adminPassword()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc, err := pgx.Connect(ctx, srv.dsn(adminRole, pw, database))
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			defer wc.Close(ctx)
			for i := range each {
				for _, q := range []string{
					fmt.Sprintf("INSERT INTO conc.pk VALUES (%d, %d, '2026-01-01')", w*1000+i+1, w),
					// Every writer also upserts the shared key 0.
					fmt.Sprintf("INSERT INTO conc.pk VALUES (0, %d, '2026-01-01')", w),
					fmt.Sprintf("INSERT INTO conc.app VALUES (%d, %d)", w, i),
				} {
					if _, err := wc.Exec(ctx, q); err != nil {
						t.Errorf("writer %d: %s: %v", w, q, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	wantRows(t, "conc.pk", queryStrings(t, ctx, c, "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id = 0) FROM conc.pk"),
		[]string{fmt.Sprintf("%d|%d|1", writers*each+1, writers*each+1)})
	wantRows(t, "conc.app", queryStrings(t, ctx, c, "SELECT count(*), count(DISTINCT w * 1000 + i) FROM conc.app"),
		[]string{fmt.Sprintf("%d|%d", writers*each, writers*each)})
}
