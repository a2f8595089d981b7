package engine_test

import (
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// pgvector's SQL on a lake table: text input, the three distance operators,
// the functions, and the errors pgvector gives for bad input.
func TestVectorSQL(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, `CREATE SCHEMA s; CREATE TABLE s.items (id bigint, emb vector(3), PRIMARY KEY (id)) WITH (hash_bucket_num = 2)`)
	mustRun(t, s, `INSERT INTO s.items VALUES (1, '[1,2,3]'), (2, '[4,5,6]'), (3, ' [ 1 , 1 , 1 ] '), (4, NULL)`)
	expectRows(t, s, `SELECT id, emb FROM s.items ORDER BY id`, "1|[1,2,3]", "2|[4,5,6]", "3|[1,1,1]", "4|NULL")
	expectRows(t, s, `SELECT id, emb <-> '[1,1,1]', emb <=> '[1,1,1]', emb <#> '[1,1,1]' FROM s.items WHERE id < 4 ORDER BY emb <-> '[1,1,1]'`,
		"3|0|0|-3", "1|2.23606797749979|0.07417990022744847|-6", "2|7.0710678118654755|0.013072457560346584|-15")
	expectRows(t, s, `SELECT l2_distance(emb, '[0,0,0]'), cosine_distance(emb, '[1,1,1]'::vector), inner_product(emb, '[1,0,0]'), vector_dims(emb), l2_normalize('[3,4,0]'::vector) FROM s.items WHERE id = 3`,
		"1.7320508075688772|0|1|3|[0.6,0.8,0]")
	expectRows(t, s, `SELECT id FROM s.items WHERE emb <-> '[1,2,3]' < 1 ORDER BY id`, "1")
	expectRows(t, s, `SELECT '[0,0,0]'::vector <=> '[1,1,1]'::vector`, "NaN")

	for _, c := range []struct{ sql, code string }{
		{`INSERT INTO s.items VALUES (5, '[1,2]')`, "22000"},
		{`INSERT INTO s.items VALUES (5, '[1,NaN,3]')`, "22000"},
		{`INSERT INTO s.items VALUES (5, '[1,Infinity,3]')`, "22000"},
		{`INSERT INTO s.items VALUES (5, '[1,2,x]')`, sqlerr.InvalidTextRepresentation},
		{`INSERT INTO s.items VALUES (5, '[]')`, "22000"},
		{`SELECT emb <-> '[1,2]' FROM s.items`, "22000"},
		{`SELECT '[1,2]'::vector(3)`, "22000"},
	} {
		_, err := run(t, s, c.sql)
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s: got %s (%v), want %s", c.sql, got, err, c.code)
		}
	}
	// Nothing half written: the failed inserts left the table as it was.
	expectRows(t, s, `SELECT count(*) FROM s.items`, "4")
}
