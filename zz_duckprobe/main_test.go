package duckprobe
import ("database/sql";"testing"; _ "github.com/duckdb/duckdb-go/v2")
func TestX(t *testing.T){
 db,_:=sql.Open("duckdb","")
 db.SetMaxOpenConns(1)
 for _,q:=range []string{
 `CREATE MACRO lakesoul_vector_check(v) AS CASE WHEN len(v) = 0 THEN error('vector must have at least 1 dimension') WHEN len(v) > 16000 THEN error('vector cannot have more than 16000 dimensions') WHEN list_bool_or(list_transform(v, x -> isnan(x))) THEN error('NaN not allowed in vector') WHEN list_bool_or(list_transform(v, x -> isinf(x))) THEN error('infinite value not allowed in vector') ELSE CAST(v AS FLOAT[]) END`,
 `CREATE MACRO lakesoul_vector_in(s) AS lakesoul_vector_check(CAST(s AS FLOAT[]))`,
 `CREATE MACRO lakesoul_vector_pair(a, b) AS CASE WHEN len(a) <> len(b) THEN error('different vector dimensions ' || len(a) || ' and ' || len(b)) ELSE CAST(a AS DOUBLE[]) END`,
 `CREATE MACRO l2_distance(a, b) AS list_distance(lakesoul_vector_pair(a, b), CAST(b AS DOUBLE[]))`,
 `CREATE MACRO cosine_distance(a, b) AS list_cosine_distance(lakesoul_vector_pair(a, b), CAST(b AS DOUBLE[]))`,
 `SELECT l2_distance([1,1]::FLOAT[2], lakesoul_vector_in('[0,0]'))`,
 `SELECT l2_distance([1,1]::FLOAT[2], lakesoul_vector_in('[0,0,1]'))`,
 `SELECT lakesoul_vector_in('[0,nan]')`,
 `SELECT lakesoul_vector_in('[0,1e40]')`,
 `SELECT lakesoul_vector_in('[]')`,
 `SELECT lakesoul_vector_in('[1,a]')`,
 `SELECT lakesoul_vector_in('[1,2')`,
 `SELECT lakesoul_vector_in(' [1 , 2 ] ')`,
 `SELECT cosine_distance([0,0]::FLOAT[2], lakesoul_vector_in('[1,1]'))`,
 `SELECT cosine_distance([1,0]::FLOAT[2], lakesoul_vector_in('[1,1]'))`,
 `SELECT list_negative_inner_product([1,0]::FLOAT[2]::DOUBLE[], [1,1]::DOUBLE[])`,
 `SELECT CAST(lakesoul_vector_in('[1,2]') AS FLOAT[2])`,
 `SELECT CAST(CAST([1.5,2]::FLOAT[2] AS VARCHAR) AS FLOAT[])`,
 `SELECT l2_distance(NULL, lakesoul_vector_in('[0,0]'))`,
 }{
  var s any
  err:=db.QueryRow(q).Scan(&s)
  if len(q) > 100 { q = q[:100] }
  t.Logf("%s => %v %T %v", q, s, s, err)
 }
}
