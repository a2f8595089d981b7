package tests

import (
	"errors"
	"slices"
	"testing"

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
