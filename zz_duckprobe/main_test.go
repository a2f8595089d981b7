package duckprobe
import ("database/sql";"testing"; "context"; "database/sql/driver"; duckdb "github.com/duckdb/duckdb-go/v2")
func TestX(t *testing.T){
 c,_:=duckdb.NewConnector("",nil)
 db:=sql.OpenDB(c)
 db.SetMaxOpenConns(1)
 ctx:=context.Background()
 conn,_:=db.Conn(ctx)
 for _,q:=range []string{
 `CREATE MACRO m1(v) AS CASE WHEN len(v) = 0 THEN error('x') ELSE CAST(v AS FLOAT[]) END`,
 `CREATE MACRO m2(v) AS CASE WHEN len(v) = 0 THEN NULL ELSE CAST(v AS FLOAT[]) END`,
 `CREATE MACRO m3(v) AS CAST(CASE WHEN len(v) = 0 THEN error('x') ELSE v END AS FLOAT[])`,
 }{ conn.ExecContext(ctx,q) }
 for _,q:=range []string{
 `SELECT length(CAST($1 AS FLOAT[]))`,
 `SELECT array_length(CAST($1 AS FLOAT[]))`,
 `SELECT len(CAST($1 AS FLOAT[]))::BIGINT`,
 `SELECT CAST(len(CAST($1 AS FLOAT[])) AS BIGINT) + 0`,
 `SELECT list_count(CAST($1 AS FLOAT[]))`,
 `SELECT length(CAST('[1,2]' AS FLOAT[3]))`,
 `SELECT array_length(CAST('[1,2,3]' AS FLOAT[3]))`,
 }{
  conn.Raw(func(dc any) error {
   st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
   if err != nil { t.Logf("%s: %v", q, err); return nil }
   ds := st.(*duckdb.Stmt)
   ti, err := ds.ColumnTypeInfo(0)
   if err != nil { t.Logf("%s: %v", q, err); return nil }
   t.Logf("%s: %v", q, ti.InternalType())
   return nil
  })
 }
}
