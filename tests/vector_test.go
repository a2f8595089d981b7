package tests

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// TestPgvectorGo uses pgvector-go's pgx support unmodified: RegisterTypes
// finds the vector type by name, inserts and searches send vectors as
// binary parameters (the server describes them as type vector), results
// scan into pgvector.Vector; upserts and deletes are seen by the next exact
// search (merge-on-read), and a filtered search returns only matching rows.
func TestPgvectorGo(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	if err := pgxvec.RegisterTypes(ctx, c); err != nil {
		t.Fatalf("pgvector-go RegisterTypes: %v", err)
	}
	var vectorOID uint32
	if err := c.QueryRow(ctx, "SELECT to_regtype('vector')::oid").Scan(&vectorOID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE SCHEMA vecgo",
		"CREATE TABLE vecgo.items (id bigint, cat text, emb vector(3), PRIMARY KEY (id)) WITH (hash_bucket_num = 2)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 1; i <= 20; i++ {
		cat := "a"
		if i%2 == 0 {
			cat = "b"
		}
		if _, err := c.Exec(ctx, "INSERT INTO vecgo.items VALUES ($1, $2, $3)", i, cat,
			pgvector.NewVector([]float32{float32(i), float32(i), float32(i)})); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	// COPY in binary, vectors in pgvector's binary form (pgx.CopyFrom).
	n, err := c.CopyFrom(ctx, pgx.Identifier{"vecgo", "items"}, []string{"id", "cat", "emb"}, pgx.CopyFromRows([][]any{
		{int64(21), "a", pgvector.NewVector([]float32{21, 21, 21})}, {int64(22), "b", pgvector.NewVector([]float32{22, 22, 22})}}))
	if err != nil || n != 2 {
		t.Fatalf("COPY of vectors: %d, %v", n, err)
	}
	var copied pgvector.Vector
	if err := c.QueryRow(ctx, "SELECT emb FROM vecgo.items WHERE id = 22").Scan(&copied); err != nil || !slices.Equal(copied.Slice(), []float32{22, 22, 22}) {
		t.Fatalf("copied vector: %v %v", copied, err)
	}
	// The search's parameter is described as vector, so pgx sends it in
	// pgvector's binary form.
	const search = "SELECT id, emb FROM vecgo.items ORDER BY emb <-> $1 LIMIT 3"
	sd, err := c.Prepare(ctx, "search", search)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sd.ParamOIDs, []uint32{vectorOID}) || sd.Fields[1].DataTypeOID != vectorOID {
		t.Fatalf("search params %v, emb column type %d; want vector (%d)", sd.ParamOIDs, sd.Fields[1].DataTypeOID, vectorOID)
	}
	nearest := func(q []float32) ([]int64, []pgvector.Vector) {
		t.Helper()
		rows, err := c.Query(ctx, "search", pgvector.NewVector(q))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []int64
		var vs []pgvector.Vector
		for rows.Next() {
			var id int64
			var v pgvector.Vector
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			ids, vs = append(ids, id), append(vs, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return ids, vs
	}
	ids, vs := nearest([]float32{5.2, 5.2, 5.2})
	if !slices.Equal(ids, []int64{5, 6, 4}) || !slices.Equal(vs[0].Slice(), []float32{5, 5, 5}) {
		t.Fatalf("nearest to 5.2: %v %v, want [5 6 4] with [5,5,5] first", ids, vs)
	}
	// Upsert id 5 far away and id 30 close by, delete id 6: the next
	// search sees exactly that.
	if _, err := c.Exec(ctx, "INSERT INTO vecgo.items VALUES ($1, 'a', $2), (30, 'b', $3)",
		5, pgvector.NewVector([]float32{100, 100, 100}), pgvector.NewVector([]float32{5.3, 5.3, 5.3})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM vecgo.items WHERE id = 6"); err != nil {
		t.Fatal(err)
	}
	if ids, _ = nearest([]float32{5.2, 5.2, 5.2}); !slices.Equal(ids, []int64{30, 4, 7}) {
		t.Fatalf("nearest to 5.2 after upsert and delete: %v, want [30 4 7]", ids)
	}
	// With an index, the same search runs on the fast path (no DuckDB),
	// binary parameters and all, and sees the same upserts and deletes.
	if _, err := c.Exec(ctx, "CREATE INDEX vecgo_emb ON vecgo.items USING ivfflat (emb vector_l2_ops) WITH (lists = 2)"); err != nil {
		t.Fatal(err)
	}
	// The segments cover the files they were built from: the shared
	// server's compaction worker may rewrite the table's files after the
	// build, and the search is exact until the rebuild it triggers lands.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var built int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM lakesoul.vector_index_segment WHERE index_name = 'vecgo_emb'").Scan(&built); err != nil {
			t.Fatal(err)
		}
		if built < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("%d segments of vecgo_emb built, want 2", built)
			}
			continue
		}
		var plan []string
		err := pgxQueryStrings(ctx, c, &plan, "EXPLAIN SELECT id, emb <-> $1 AS d FROM vecgo.items ORDER BY emb <-> $1 LIMIT 3",
			pgvector.NewVector([]float32{5.2, 5.2, 5.2}))
		if err == nil && strings.Contains(strings.Join(plan, "\n"), "executed without DuckDB") {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("EXPLAIN of the indexed search: %v\n%s", err, strings.Join(plan, "\n"))
		}
	}
	if _, err := c.Exec(ctx, "INSERT INTO vecgo.items VALUES (31, 'a', $1)", pgvector.NewVector([]float32{5.25, 5.25, 5.25})); err != nil {
		t.Fatal(err)
	}
	fast, err := c.Query(ctx, "SELECT id, emb <-> $1 AS d FROM vecgo.items ORDER BY emb <-> $1 LIMIT 3", pgvector.NewVector([]float32{5.2, 5.2, 5.2}))
	if err != nil {
		t.Fatal(err)
	}
	type hit struct {
		id int64
		d  float64
	}
	hits, err := pgx.CollectRows(fast, func(r pgx.CollectableRow) (hit, error) {
		var h hit
		return h, r.Scan(&h.id, &h.d)
	})
	if err != nil || len(hits) != 3 || hits[0].id != 31 || hits[1].id != 30 || hits[2].id != 4 ||
		math.Abs(hits[1].d-math.Sqrt(3*0.1*0.1)) > 1e-6 {
		t.Fatalf("indexed search after an upsert: %v %v, want ids 31, 30, 4 (30 at %.6f)", hits, err, math.Sqrt(3*0.1*0.1))
	}
	if _, err := c.Exec(ctx, "DELETE FROM vecgo.items WHERE id = 31"); err != nil {
		t.Fatal(err)
	}
	// A filtered search returns only matching rows.
	rows, err := c.Query(ctx, "SELECT id FROM vecgo.items WHERE cat = 'a' ORDER BY emb <=> $1, id LIMIT 3",
		pgvector.NewVector([]float32{1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if rows.Err() != nil || !slices.Equal(got, []int64{1, 3, 5}) {
		t.Fatalf("filtered cosine search: %v %v, want [1 3 5]", got, rows.Err())
	}
	// The wire forms at the protocol level: a binary parameter and a
	// binary result in pgvector's format.
	bin, _ := pgvector.NewVector([]float32{7, 7, 7}).EncodeBinary(nil)
	res := c.PgConn().ExecParams(ctx, "SELECT emb, emb <-> $1 FROM vecgo.items WHERE id = 7", [][]byte{bin},
		[]uint32{vectorOID}, []int16{1}, []int16{1, 0}).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		t.Fatalf("binary ExecParams: %v %v", res.Err, res.Rows)
	}
	var back pgvector.Vector
	if err := back.DecodeBinary(res.Rows[0][0]); err != nil || !slices.Equal(back.Slice(), []float32{7, 7, 7}) || string(res.Rows[0][1]) != "0" {
		t.Fatalf("binary result %x (%v) distance %q", res.Rows[0][0], err, res.Rows[0][1])
	}
	// Bad input keeps its SQLSTATE through the wire.
	for _, bad := range []struct {
		q    string
		args []any
		code string
	}{
		{"INSERT INTO vecgo.items VALUES (99, 'a', $1)", []any{pgvector.NewVector([]float32{1, 2})}, "22000"},
		{"SELECT emb <-> $1 FROM vecgo.items", []any{pgvector.NewVector([]float32{1, 2})}, "22000"},
		{"INSERT INTO vecgo.items VALUES (99, 'a', '[1,NaN,2]')", nil, "22000"},
	} {
		_, err := c.Exec(ctx, bad.q, bad.args...)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != bad.code {
			t.Errorf("%s: %v, want SQLSTATE %s", bad.q, err, bad.code)
		}
	}
}

// TestPsycopg2Vectors: psycopg2 sends vectors in their text form (its
// parameters are interpolated client side) and reads them back as text.
func TestPsycopg2Vectors(t *testing.T) {
	t.Parallel()
	python, dsn := psycopg2Client(t)
	got := runClient(t, testCtx(t), nil, python, testdataPath(t, "psycopg2_vector.py"), dsn, "vecpsy")
	expectLines(t, got,
		"NEAREST [(2, '[2,2.5,3]'), (1, '[1,2,3]')]",
		"DIST 0.5",
		"DIMS 22000",
		"DONE",
	)
}

// pgxQueryStrings collects the one text column of a query's rows.
func pgxQueryStrings(ctx context.Context, c *pgx.Conn, out *[]string, q string, args ...any) error {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	*out, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return err
}

// TestPsqlVectorIndexes: psql's \di lists vector indexes beside the
// primary-key index, \d shows them under Indexes as ivfflat with their
// operator class, per schema; DROP INDEX removes them.
func TestPsqlVectorIndexes(t *testing.T) {
	t.Parallel()
	p := &psqlClient{t: t, path: psqlPath(t), srv: sharedServer(t)}
	ctx := testCtx(t)
	p.exec(ctx, "CREATE SCHEMA vec_di", "CREATE SCHEMA vec_di2",
		"CREATE TABLE vec_di.t (id bigint PRIMARY KEY, emb vector(3))", "CREATE TABLE vec_di2.t (id bigint PRIMARY KEY, emb vector(3))",
		"CREATE INDEX x ON vec_di.t USING ivfflat (emb vector_ip_ops) WITH (lists = 8)", "CREATE INDEX x ON vec_di2.t USING ivfflat (emb)")
	p.check(ctx, `\di vec_di.*`, "vec_di|t_pkey|index|lakesoul|t", "vec_di|x|index|lakesoul|t")
	p.check(ctx, `\di vec_di2.*`, "vec_di2|t_pkey|index|lakesoul|t", "vec_di2|x|index|lakesoul|t")
	if out, errOut, err := p.run(ctx, nil, `\d vec_di.t`); err != nil || !strings.Contains(out, `"x" ivfflat (emb vector_ip_ops) WITH (lists=8)`) {
		t.Fatalf(`\d does not list the vector index: %v\n%s\n%s`, err, out, errOut)
	}
	p.exec(ctx, "DROP INDEX vec_di.x")
	p.check(ctx, `\di vec_di.*`, "vec_di|t_pkey|index|lakesoul|t")
	p.check(ctx, `\di vec_di2.*`, "vec_di2|t_pkey|index|lakesoul|t", "vec_di2|x|index|lakesoul|t")
}
