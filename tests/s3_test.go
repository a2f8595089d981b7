package tests

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

// startS3Server runs `lakesoul serve` with its warehouse on srv, credentials
// from the standard AWS environment variables.
func startS3Server(t *testing.T, dataDir string, srv *s3test.Server, extra ...string) *server {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	args := append([]string{"--warehouse", srv.URI("wh"), "--s3-endpoint", srv.Endpoint, "--s3-region", srv.Region,
		"--cache-size", "64MiB"}, extra...)
	s, err := startServer(dataDir, sharedPassword, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	return s
}

// TestS3Warehouse is a table's life on S3 through `lakesoul serve
// --warehouse s3://…`: create, insert (a multipart-sized file too),
// upsert, select, restart (warm cache), S3 down during a write, a corrupt
// object, drop.
func TestS3Warehouse(t *testing.T) {
	requirePG(t)
	for _, s3srv := range s3test.Servers(t) {
		t.Run(s3srv.Name, func(t *testing.T) { testS3Warehouse(t, s3srv) })
	}
}

func testS3Warehouse(t *testing.T, s3srv *s3test.Server) {
	ctx := testCtx(t)
	base := testBaseDir(t)
	dataDir := base + "/data"
	srv := startS3Server(t, dataDir, s3srv)
	c := srv.connect(t)
	st := s3srv.Store(t, objstore.S3Options{})
	tablePrefix := s3srv.Prefix + "/wh/s3e/t/"

	mustExec(t, ctx, c,
		"CREATE SCHEMA s3e",
		"CREATE TABLE s3e.t (id bigint, k text, v double precision, d date, PRIMARY KEY (id)) PARTITION BY LIST (d) WITH (hash_bucket_num = 2)",
		"INSERT INTO s3e.t VALUES (1, 'a', 1.5, '2026-01-01'), (2, 'b', 2.5, '2026-01-01'), (3, 'c', 3.5, '2026-01-02')",
		"INSERT INTO s3e.t (id, v, d) VALUES (1, 10.0, '2026-01-01')", // partial upsert: k stays
		"CREATE TABLE s3e.big (id bigint PRIMARY KEY, a text, b text) WITH (hash_bucket_num = 1)",
		// One bucket file of ≈20 MB: a multipart upload, read back through the cache.
		"INSERT INTO s3e.big SELECT i, md5(i::text), md5((-i)::text) || md5((i + 0.5)::text) FROM generate_series(1, 300000) AS g(i)")
	want := []string{"1|a|10|2026-01-01", "2|b|2.5|2026-01-01", "3|c|3.5|2026-01-02"}
	wantRows(t, "s3e.t", queryStrings(t, ctx, c, "SELECT id, k, v, d FROM s3e.t ORDER BY id"), want)
	checkBig := func(what string) {
		t.Helper()
		got := queryStrings(t, ctx, c, "SELECT count(*), sum(id)::bigint, count(DISTINCT a), sum(length(b))::bigint FROM s3e.big")
		wantRows(t, what, got, []string{"300000|45000150000|300000|19200000"})
	}
	checkBig("s3e.big")

	// Files are where LakeSoul puts them, and the catalog names them s3://.
	keys, err := st.List(ctx, s3srv.Bucket, tablePrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 3 {
		t.Errorf("objects of s3e.t: %q; want a file per insert, partition and bucket", keys)
	}
	for _, k := range keys {
		if !strings.Contains(k, "/d=2026-01-0") || !strings.HasSuffix(k, ".parquet") || !strings.Contains(k, "/part-") {
			t.Errorf("unexpected object %s", k)
		}
	}
	cat := srv.catalogConn(t)
	var tablePath string
	if err := cat.QueryRow(ctx, "SELECT table_path FROM table_info WHERE table_name = 't'").Scan(&tablePath); err != nil {
		t.Fatal(err)
	}
	if wantPath := s3srv.URI("wh", "s3e", "t"); tablePath != wantPath {
		t.Errorf("table_path %q, want %q", tablePath, wantPath)
	}
	var bigFile string
	if err := cat.QueryRow(ctx, `SELECT (file_ops[1]).path FROM data_commit_info d JOIN table_info t USING (table_id)
		WHERE t.table_name = 'big'`).Scan(&bigFile); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bigFile, "s3://"+s3srv.Bucket+"/") {
		t.Errorf("data file path %q is not an s3:// URI", bigFile)
	}
	if r, err := st.Open(ctx, bigFile); err != nil {
		t.Fatal(err)
	} else if r.Close(); r.Size() <= objstore.DefaultS3PartSize {
		t.Errorf("%s has %d bytes: too small to test multipart uploads", bigFile, r.Size())
	}

	// Restart: the data and the (rebuilt) cache are found again.
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	srv = startS3Server(t, dataDir, s3srv)
	c = srv.connect(t)
	wantRows(t, "s3e.t after restart", queryStrings(t, ctx, c, "SELECT id, k, v, d FROM s3e.t ORDER BY id"), want)
	checkBig("s3e.big after restart")

	// S3 down during a write: a clean error, nothing visible; works again
	// once S3 is back.
	s3srv.SetDown(true)
	_, err = c.Exec(ctx, "INSERT INTO s3e.t VALUES (4, 'd', 4.5, '2026-01-03'), (5, 'e', 5.5, '2026-01-01')")
	s3srv.SetDown(false)
	if err == nil {
		t.Fatal("INSERT with S3 down succeeded")
	}
	t.Logf("INSERT with S3 down: %v", err)
	wantRows(t, "s3e.t after the failed INSERT", queryStrings(t, ctx, c, "SELECT id, k, v, d FROM s3e.t ORDER BY id"), want)
	mustExec(t, ctx, c, "INSERT INTO s3e.t VALUES (4, 'd', 4.5, '2026-01-03')")
	want = append(want, "4|d|4.5|2026-01-03")
	wantRows(t, "s3e.t after S3 came back", queryStrings(t, ctx, c, "SELECT id, k, v, d FROM s3e.t ORDER BY id"), want)

	// A corrupt object: the error names the file.
	orig := getObject(t, st, bigFile)
	putObject(t, st, bigFile, []byte("this is not a parquet file, it is a corrupt object"))
	_, err = tryQueryStrings(ctx, c, "SELECT count(*), sum(length(b)) FROM s3e.big")
	if err == nil || !strings.Contains(err.Error(), bigFile) {
		t.Errorf("reading a corrupt object: %v; want an error naming %s", err, bigFile)
	}
	putObject(t, st, bigFile, orig)
	checkBig("s3e.big after repair")

	// DROP TABLE removes the objects.
	mustExec(t, ctx, c, "DROP TABLE s3e.t", "DROP TABLE s3e.big")
	for _, p := range []string{tablePrefix, s3srv.Prefix + "/wh/s3e/big/"} {
		if keys, err := st.List(ctx, s3srv.Bucket, p); err != nil || len(keys) != 0 {
			t.Errorf("objects under %s after DROP TABLE: %q, %v", p, keys, err)
		}
	}
	srv.stopT(t)
}

func getObject(t *testing.T, st *objstore.S3, uri string) []byte {
	t.Helper()
	b, k, _ := objstore.ParseS3URI(uri)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := st.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(out.Body); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func putObject(t *testing.T, st *objstore.S3, uri string, data []byte) {
	t.Helper()
	b, k, _ := objstore.ParseS3URI(uri)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := st.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k),
		Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}
