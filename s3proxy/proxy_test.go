package s3proxy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
	"github.com/lakesoul-go/lakesoul/s3proxy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// accessKey is a key from lakesoul.create_access_key().
type accessKey struct{ id, secret string }

// fixture is a migrated catalog with two workspaces, their tables on a real
// S3 server, and the proxy in front of that server.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	s3      *s3test.Server
	direct  *s3.Client // the backend itself, with its own credentials
	admin   *pgx.Conn  // the catalog as a superuser
	url     string     // the proxy
	root    string     // bucket-relative warehouse prefix: <test prefix>/wh
	logs    *syncBuffer
	alice   accessKey // px_alice, workspace pxa
	carol   accessKey // px_carol, workspace pxb
	objects map[string][]byte
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func mustExec(t *testing.T, ctx context.Context, c *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// createKey creates an access key as role, the way the engine runs a
// session's catalog statements (set_config('role', …) in a transaction).
func createKey(t *testing.T, ctx context.Context, c *pgx.Conn, role string) accessKey {
	t.Helper()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", role); err != nil {
		t.Fatal(err)
	}
	var k accessKey
	if err := tx.QueryRow(ctx, "SELECT access_key_id, secret_access_key FROM lakesoul.create_access_key()").Scan(&k.id, &k.secret); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return k
}

// asRole runs one statement as role.
func asRole(ctx context.Context, c *pgx.Conn, role, sql string, args ...any) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", role); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func newFixture(t *testing.T, srv *s3test.Server, transport http.RoundTripper) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	f := &fixture{t: t, ctx: ctx, s3: srv, admin: admin, root: srv.Prefix + "/wh", logs: &syncBuffer{},
		objects: map[string][]byte{}}
	tablePath := func(rel string) string { return "s3://" + srv.Bucket + "/" + f.root + "/" + rel }
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('pxa')",
		"SELECT lakesoul.create_workspace('pxb')",
		"SELECT lakesoul.create_user('px_alice', 'pw', 'pxa')",
		"SELECT lakesoul.create_user('px_carol', 'pw', 'pxb', admin => true)",
		"SELECT lakesoul.create_namespace('ns_a', 'pxa')",
		"SELECT lakesoul.create_namespace('ns_b', 'pxb')",
		"SELECT lakesoul.create_namespace('ns_pub', 'public')")
	for _, tb := range []struct{ id, ns, name, path string }{
		{"t-a", "ns_a", "t", tablePath("ns_a/t")},
		{"t-b", "ns_b", "u", tablePath("ns_b/u")},
		// carol's table, placed inside alice's namespace directory.
		{"t-s", "ns_b", "sneaky", tablePath("ns_a/t_b")},
		{"t-p", "ns_pub", "p", strings.Replace(tablePath("ns_pub/p"), "s3://", "s3a://", 1) + "/"},
	} {
		if _, err := admin.Exec(ctx, "SELECT lakesoul.create_table($1, $2, $3, $4, '{}', '{}'::json, '')",
			tb.id, tb.ns, tb.name, tb.path); err != nil {
			t.Fatal(err)
		}
	}
	f.direct = s3.NewFromConfig(aws.Config{Region: srv.Region, Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")},
		func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(srv.Endpoint), true })
	for key, body := range map[string]string{
		"ns_a/t/d=1/part-a_0000.parquet": "alice's data",
		"ns_b/u/part-b_0000.parquet":     "carol's data",
		"ns_a/t_b/part-s_0000.parquet":   "carol's sneaky data",
		"ns_pub/p/part-p_0000.parquet":   "public data",
	} {
		f.put(f.root+"/"+key, []byte(body))
	}
	f.alice = createKey(t, ctx, admin, "px_alice")
	f.carol = createKey(t, ctx, admin, "px_carol")

	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.Close)
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := s3proxy.New(s3proxy.Config{Catalog: cat, Logger: logger, Warehouses: []string{srv.URI("wh")},
		Backend: s3proxy.Backend{Endpoint: srv.Endpoint, Region: srv.Region, Transport: transport,
			Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(p)
	t.Cleanup(hs.Close)
	f.url = hs.URL
	return f
}

// put writes an object straight to the backend.
func (f *fixture) put(key string, body []byte) {
	f.t.Helper()
	if _, err := f.direct.PutObject(f.ctx, &s3.PutObjectInput{Bucket: aws.String(f.s3.Bucket), Key: aws.String(key),
		Body: bytes.NewReader(body)}); err != nil {
		f.t.Fatalf("put %s: %v", key, err)
	}
	f.objects[key] = body
}

// client is an S3 client of the proxy signing with k.
func (f *fixture) client(k accessKey, opts ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.url), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(k.id, k.secret, ""), RetryMaxAttempts: 1}, opts...)
}

func (f *fixture) key(rel string) *string { return aws.String(f.root + "/" + rel) }

// apiError is the HTTP status and S3 error code of err.
func apiError(err error) (int, string) {
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return status, ae.ErrorCode()
	}
	return status, ""
}

func (f *fixture) get(c *s3.Client, rel string) (string, error) {
	out, err := c.GetObject(f.ctx, &s3.GetObjectInput{Bucket: aws.String(f.s3.Bucket), Key: f.key(rel)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func (f *fixture) wantDenied(what string, err error, code string) {
	f.t.Helper()
	status, c := apiError(err)
	if status != http.StatusForbidden || (code != "" && c != code) {
		f.t.Errorf("%s: %v (status %d, code %q), want 403 %s", what, err, status, c, code)
	}
}

func TestProxy(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) { testProxy(t, srv) })
	}
}

func testProxy(t *testing.T, srv *s3test.Server) {
	f := newFixture(t, srv, nil)
	defer func() {
		if testing.Verbose() {
			t.Log(f.logs.String())
		}
	}()
	alice, carol := f.client(f.alice), f.client(f.carol)
	bucket := aws.String(srv.Bucket)

	// Reads of one's own workspace's tables, and of public ones.
	for who, c := range map[string]*s3.Client{"alice": alice, "carol": carol} {
		own := map[string]string{"alice": "ns_a/t/d=1/part-a_0000.parquet", "carol": "ns_b/u/part-b_0000.parquet"}[who]
		got, err := f.get(c, own)
		if err != nil || got != string(f.objects[f.root+"/"+own]) {
			t.Errorf("%s reads %s: %q, %v", who, own, got, err)
		}
		if got, err := f.get(c, "ns_pub/p/part-p_0000.parquet"); err != nil || got != "public data" {
			t.Errorf("%s reads the public table (an s3a:// path): %q, %v", who, got, err)
		}
	}
	head, err := alice.HeadObject(f.ctx, &s3.HeadObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=1/part-a_0000.parquet")})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len("alice's data")) {
		t.Errorf("alice HEADs her object: %v", err)
	}
	rng, err := alice.GetObject(f.ctx, &s3.GetObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=1/part-a_0000.parquet"), Range: aws.String("bytes=0-4")})
	if err != nil {
		t.Fatalf("ranged GET: %v", err)
	} else if b, _ := io.ReadAll(rng.Body); string(b) != "alice" {
		t.Errorf("ranged GET: %q", b)
	}
	list, err := alice.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: aws.String(f.root + "/ns_a/t/")})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].Key) != f.root+"/ns_a/t/d=1/part-a_0000.parquet" {
		t.Errorf("alice lists her table: %v %v", list, err)
	}
	if _, err := alice.HeadBucket(f.ctx, &s3.HeadBucketInput{Bucket: bucket}); err != nil {
		t.Errorf("HeadBucket: %v", err)
	}

	// Another workspace's tables: 403, however asked.
	_, err = f.get(alice, "ns_b/u/part-b_0000.parquet")
	f.wantDenied("alice reads carol's table", err, "AccessDenied")
	_, err = f.get(alice, "ns_a/t_b/part-s_0000.parquet")
	f.wantDenied("alice reads carol's table inside her namespace directory", err, "AccessDenied")
	_, err = f.get(carol, "ns_a/t/d=1/part-a_0000.parquet")
	f.wantDenied("carol reads alice's table", err, "AccessDenied")
	_, err = alice.HeadObject(f.ctx, &s3.HeadObjectInput{Bucket: bucket, Key: f.key("ns_b/u/part-b_0000.parquet")})
	f.wantDenied("alice HEADs carol's object", err, "")
	for _, prefix := range []string{"/ns_b/", "/ns_b/u/", "/", "", "/ns_a/t", "/ns_a/"} {
		_, err := alice.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: aws.String(f.root + prefix)})
		f.wantDenied("alice lists "+prefix, err, "AccessDenied")
	}
	_, err = alice.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: bucket})
	f.wantDenied("alice lists the bucket", err, "AccessDenied")
	_, err = alice.ListBuckets(f.ctx, &s3.ListBucketsInput{})
	f.wantDenied("alice lists buckets", err, "AccessDenied")
	_, err = alice.CopyObject(f.ctx, &s3.CopyObjectInput{Bucket: bucket, Key: f.key("ns_a/t/stolen.parquet"),
		CopySource: aws.String(srv.Bucket + "/" + f.root + "/ns_b/u/part-b_0000.parquet")})
	f.wantDenied("alice copies carol's object into her table", err, "AccessDenied")
	for _, rel := range []string{"ns_b/u/x.parquet", "ns_a/t_b/x.parquet", "ns_b/newtable/x.parquet"} {
		_, err = alice.PutObject(f.ctx, &s3.PutObjectInput{Bucket: bucket, Key: f.key(rel), Body: strings.NewReader("x")})
		f.wantDenied("alice writes "+rel, err, "AccessDenied")
		_, err = alice.DeleteObject(f.ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: f.key(rel)})
		f.wantDenied("alice deletes "+rel, err, "AccessDenied")
	}
	_, err = alice.DeleteObjects(f.ctx, &s3.DeleteObjectsInput{Bucket: bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: f.key("ns_a/t/d=1/nothing.parquet")}, {Key: f.key("ns_b/u/part-b_0000.parquet")}}}})
	f.wantDenied("alice's multi-delete naming carol's object", err, "AccessDenied")
	if got, err := f.get(carol, "ns_b/u/part-b_0000.parquet"); err != nil || got != "carol's data" {
		t.Errorf("carol's object after alice's attempts: %q, %v", got, err)
	}
	if !strings.Contains(f.logs.String(), "access_key_id="+f.alice.id) || !strings.Contains(f.logs.String(), "role=px_alice") ||
		!strings.Contains(f.logs.String(), "ns_b/u/part-b_0000.parquet") {
		t.Errorf("denials are not logged with key, role and path:\n%s", f.logs.String())
	}

	// Writes: into her table, and a new table's files under her namespace
	// directory; reads of paths of no table are refused (LakeSoul's rule).
	if _, err := alice.PutObject(f.ctx, &s3.PutObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=2/part-n_0000.parquet"),
		Body: strings.NewReader("new file")}); err != nil {
		t.Errorf("alice writes into her table: %v", err)
	}
	if got, err := f.get(alice, "ns_a/t/d=2/part-n_0000.parquet"); err != nil || got != "new file" {
		t.Errorf("alice reads back: %q %v", got, err)
	}
	if _, err := alice.CopyObject(f.ctx, &s3.CopyObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=2/copy.parquet"),
		CopySource: aws.String(srv.Bucket + "/" + f.root + "/ns_pub/p/part-p_0000.parquet")}); err != nil {
		t.Errorf("alice copies a public object into her table: %v", err)
	}
	if _, err := alice.PutObject(f.ctx, &s3.PutObjectInput{Bucket: bucket, Key: f.key("ns_a/newtable/part-0.parquet"),
		Body: strings.NewReader("a new table")}); err != nil {
		t.Errorf("alice writes a new table's file in her namespace: %v", err)
	}
	_, err = f.get(alice, "ns_a/newtable/part-0.parquet")
	f.wantDenied("alice reads a path of no table", err, "AccessDenied")
	if _, err := alice.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: f.key("ns_a/newtable/")}); err != nil {
		t.Errorf("alice lists her new table's directory: %v", err)
	}
	_, err = alice.PutObject(f.ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String(srv.Prefix + "/elsewhere/x"), Body: strings.NewReader("x")})
	f.wantDenied("alice writes outside the warehouse", err, "AccessDenied")
	if _, err := alice.DeleteObjects(f.ctx, &s3.DeleteObjectsInput{Bucket: bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: f.key("ns_a/t/d=2/copy.parquet")}, {Key: f.key("ns_a/newtable/part-0.parquet")}}}}); err != nil {
		t.Errorf("alice's multi-delete in her namespace: %v", err)
	}

	// Multipart upload of a multi-MiB object, read back through the proxy.
	big := make([]byte, 13<<20)
	rand.Read(big)
	up, err := alice.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: f.key("ns_a/t/d=3/big.parquet")})
	if err != nil {
		t.Fatalf("create multipart upload: %v", err)
	}
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{big[:8<<20], big[8<<20:]} {
		out, err := alice.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: bucket, Key: f.key("ns_a/t/d=3/big.parquet"),
			UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(chunk)})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	_, err = carol.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: bucket, Key: f.key("ns_a/t/d=3/big.parquet"),
		UploadId: up.UploadId, PartNumber: aws.Int32(3), Body: bytes.NewReader([]byte("intruder"))})
	f.wantDenied("carol uploads a part into alice's upload", err, "AccessDenied")
	if _, err := alice.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: f.key("ns_a/t/d=3/big.parquet"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("complete multipart upload: %v", err)
	}
	if got, err := f.get(alice, "ns_a/t/d=3/big.parquet"); err != nil || sha256.Sum256([]byte(got)) != sha256.Sum256(big) {
		t.Errorf("multipart object read back: %d bytes, %v", len(got), err)
	}
	out, err := f.direct.GetObject(f.ctx, &s3.GetObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=3/big.parquet")})
	if err != nil {
		t.Fatal(err)
	} else if b, _ := io.ReadAll(out.Body); !bytes.Equal(b, big) {
		t.Errorf("the backend holds %d bytes, want the %d uploaded", len(b), len(big))
	}

	// A presigned URL works until it expires; one forged does not.
	ps := s3.NewPresignClient(alice)
	req, err := ps.PresignGetObject(f.ctx, &s3.GetObjectInput{Bucket: bucket, Key: f.key("ns_a/t/d=1/part-a_0000.parquet")},
		s3.WithPresignExpires(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	status, body := httpGet(t, req.URL)
	if status != 200 || body != "alice's data" {
		t.Errorf("presigned GET: %d %q", status, body)
	}
	forged, err := url.Parse(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	forged.Path, forged.RawPath = "/"+srv.Bucket+"/"+f.root+"/ns_b/u/part-b_0000.parquet", ""
	if status, body := httpGet(t, forged.String()); status != 403 || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("presigned URL for another path: %d %q", status, body)
	}
	other, err := ps.PresignGetObject(f.ctx, &s3.GetObjectInput{Bucket: bucket, Key: f.key("ns_b/u/part-b_0000.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := httpGet(t, other.URL); status != 403 || !strings.Contains(body, "AccessDenied") {
		t.Errorf("alice's presigned URL for carol's object: %d %q", status, body)
	}
	time.Sleep(3 * time.Second)
	if status, body := httpGet(t, req.URL); status != 403 || !strings.Contains(body, "expired") {
		t.Errorf("expired presigned URL: %d %q", status, body)
	}
	if u, _ := url.Parse(req.URL); strings.Contains(f.logs.String(), u.Query().Get("X-Amz-Signature")) {
		t.Errorf("a presigned URL's signature is in the log")
	}

	// Paths forged to escape alice's table: refused before the backend
	// sees them (the signature is valid: a key holder can sign anything).
	for _, raw := range []string{
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t/../../ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t/..%2F..%2Fns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t/%2E%2E/%2E%2E/ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t/..%252F..%252Fns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t/.%2e/.%2e/ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t//../../ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t\\..\\..\\ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/./" + f.root + "/ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "%2F" + f.root + "/ns_b/u/part-b_0000.parquet",
		"/" + srv.Bucket + "/" + f.root + "/ns_a/t_b/part-s_0000.parquet",
		"/../" + srv.Bucket + "/" + f.root + "/ns_b/u/part-b_0000.parquet",
	} {
		resp := f.signedRaw(f.alice, http.MethodGet, raw, "", nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(string(b), "AccessDenied") {
			t.Errorf("forged path %s: %d %s", raw, resp.StatusCode, b)
		}
	}

	// Revoked keys stop working at once; keys are one's own.
	spare := createKey(t, f.ctx, f.admin, "px_alice")
	if _, err := f.get(f.client(spare), "ns_a/t/d=1/part-a_0000.parquet"); err != nil {
		t.Fatalf("a second key: %v", err)
	}
	if err := asRole(f.ctx, f.admin, "px_carol", "SELECT lakesoul.revoke_access_key($1)", spare.id); err == nil ||
		!strings.Contains(err.Error(), "42704") {
		t.Errorf("carol revokes alice's key: %v, want 42704", err)
	}
	if err := asRole(f.ctx, f.admin, "px_alice", "SELECT lakesoul.revoke_access_key($1)", spare.id); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	_, err = f.get(f.client(spare), "ns_a/t/d=1/part-a_0000.parquet")
	f.wantDenied("revoked key", err, "InvalidAccessKeyId")
	_, err = f.get(f.client(accessKey{f.alice.id, f.carol.secret}), "ns_a/t/d=1/part-a_0000.parquet")
	f.wantDenied("wrong secret", err, "SignatureDoesNotMatch")
	if err := asRole(f.ctx, f.admin, "px_alice", "SELECT * FROM lakesoul.access_key"); err == nil || !strings.Contains(err.Error(), "42501") {
		t.Errorf("alice reads the secrets table: %v, want 42501", err)
	}
	var n int
	if err := f.admin.QueryRow(f.ctx, `SELECT count(*) FROM lakesoul.access_keys WHERE role_name = 'px_alice'`).Scan(&n); err != nil || n < 2 {
		t.Errorf("lakesoul.access_keys: %d, %v", n, err)
	}
	// Keys that see everything are not made through a switched role.
	mustExec(t, f.ctx, f.admin, "DROP ROLE IF EXISTS px_su", "CREATE ROLE px_su SUPERUSER")
	if err := asRole(f.ctx, f.admin, "px_su", "SELECT * FROM lakesoul.create_access_key()"); err == nil || !strings.Contains(err.Error(), "42501") {
		t.Errorf("a superuser's key through set_config('role'): %v, want 42501", err)
	}
	mustExec(t, f.ctx, f.admin, "DROP ROLE px_su")
	// A key whose role was dropped sees nothing.
	mustExec(t, f.ctx, f.admin, "CREATE ROLE px_temp", "GRANT pxa, pxa_users TO px_temp")
	temp := createKey(t, f.ctx, f.admin, "px_temp")
	if _, err := f.get(f.client(temp), "ns_a/t/d=1/part-a_0000.parquet"); err != nil {
		t.Errorf("px_temp reads: %v", err)
	}
	mustExec(t, f.ctx, f.admin, "DROP ROLE px_temp")
	_, err = f.get(f.client(temp), "ns_a/t/d=1/part-a_0000.parquet")
	f.wantDenied("a dropped role's key", err, "AccessDenied")
}

// signedRaw sends a request for the raw (undecoded) path, signed by k for
// the path the proxy decodes from it: a valid signature on a forged path.
func (f *fixture) signedRaw(k accessKey, method, raw, query string, body []byte) *http.Response {
	f.t.Helper()
	host := strings.TrimPrefix(f.url, "http://")
	decoded, err := pathUnescape(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, f.url, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.URL.Opaque = "//" + host + awsEncodePath(decoded)
	req.URL.RawQuery = query
	sum := sha256.Sum256(body)
	payload := fmt.Sprintf("%x", sum)
	req.Header.Set("X-Amz-Content-Sha256", payload)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(f.ctx, aws.Credentials{AccessKeyID: k.id, SecretAccessKey: k.secret}, req, payload, "s3", "us-east-1", time.Now()); err != nil {
		f.t.Fatal(err)
	}
	req.URL.Opaque = "//" + host + raw
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

func pathUnescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02X", &c); err != nil {
				return "", err
			}
			b.WriteByte(c)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

func awsEncodePath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// gate is the proxy's transport to the backend, observing bodies on their
// way: it lets a test see that a request body reaches the backend while the
// client is still sending it, and holds a response body back until the
// client has received its first part. A proxy that buffered whole objects
// would deadlock on either (and the test fails after a timeout).
type gate struct {
	base        http.RoundTripper
	threshold   int64
	armed       chan struct{} // closed: gate the next big bodies
	upstreamGot chan struct{} // closed when threshold bytes of a request body went to the backend
	clientGot   chan struct{} // closed by the test when the client has threshold bytes of a response
	once1       sync.Once
}

func (g *gate) on() bool {
	select {
	case <-g.armed:
		return true
	default:
		return false
	}
}

func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.on() && req.ContentLength > 2*g.threshold {
		req.Body = &countingBody{ReadCloser: req.Body, g: g}
	}
	resp, err := g.base.RoundTrip(req)
	if err == nil && g.on() && req.Method == http.MethodGet && resp.ContentLength > 2*g.threshold {
		resp.Body = &holdingBody{ReadCloser: resp.Body, g: g}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	g *gate
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.n += int64(n); c.n >= c.g.threshold {
		c.g.once1.Do(func() { close(c.g.upstreamGot) })
	}
	return n, err
}

type holdingBody struct {
	io.ReadCloser
	g *gate
	n int64
}

func (h *holdingBody) Read(p []byte) (int, error) {
	if h.n >= 2*h.g.threshold {
		select {
		case <-h.g.clientGot:
		case <-time.After(30 * time.Second):
			return 0, errors.New("the client never received the first part of the object: the proxy buffers responses")
		}
	} else if rest := 2*h.g.threshold - h.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := h.ReadCloser.Read(p)
	h.n += int64(n)
	return n, err
}

// gatedReader gives its first part, then waits for the backend to have
// received threshold bytes before giving the rest.
type gatedReader struct {
	data  []byte
	off   int
	first int
	g     *gate
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if r.off == len(r.data) {
		return 0, io.EOF
	}
	if r.off >= r.first {
		select {
		case <-r.g.upstreamGot:
		case <-time.After(30 * time.Second):
			return 0, errors.New("the backend never received the first part of the body: the proxy buffers requests")
		}
	} else if len(p) > r.first-r.off {
		p = p[:r.first-r.off]
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func TestProxyStreams(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			base := http.DefaultTransport.(*http.Transport).Clone()
			base.DisableCompression = true
			g := &gate{base: base, threshold: 2 << 20, armed: make(chan struct{}), upstreamGot: make(chan struct{}),
				clientGot: make(chan struct{})}
			f := newFixture(t, srv, g)
			close(g.armed)
			data := make([]byte, 24<<20)
			rand.Read(data)
			key := "ns_a/t/d=4/stream.parquet"

			// Upload: the client holds back everything after 4 MiB until
			// the backend has 2 MiB.
			req, err := http.NewRequestWithContext(f.ctx, http.MethodPut, f.url+"/"+srv.Bucket+"/"+f.root+"/"+key,
				&gatedReader{data: data, first: 4 << 20, g: g})
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = "//" + req.URL.Host + awsEncodePath(req.URL.Path)
			req.ContentLength = int64(len(data))
			req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
			if err := signer.SignHTTP(f.ctx, aws.Credentials{AccessKeyID: f.alice.id, SecretAccessKey: f.alice.secret}, req,
				"UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("streamed PUT: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("streamed PUT: %d %s", resp.StatusCode, b)
			}
			out, err := f.direct.GetObject(f.ctx, &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: f.key(key)})
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if !bytes.Equal(stored, data) {
				t.Fatalf("the backend holds %d bytes, want the %d sent", len(stored), len(data))
			}

			// Download: the backend's response pauses after 4 MiB until
			// the client has 2 MiB.
			got, err := f.client(f.alice).GetObject(f.ctx, &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: f.key(key)})
			if err != nil {
				t.Fatal(err)
			}
			defer got.Body.Close()
			head := make([]byte, 2<<20)
			if _, err := io.ReadFull(got.Body, head); err != nil {
				t.Fatalf("first part of the streamed GET: %v", err)
			}
			close(g.clientGot)
			tail, err := io.ReadAll(got.Body)
			if err != nil {
				t.Fatalf("rest of the streamed GET: %v", err)
			}
			if !bytes.Equal(append(head, tail...), data) {
				t.Fatalf("streamed GET returned %d bytes, not the object", len(head)+len(tail))
			}
		})
	}
}

// Over TLS aws-sdk-go-v2 sends bodies aws-chunked with a CRC32 trailer
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER) by default: the proxy checks and
// decodes them.
func TestProxyChecksumTrailer(t *testing.T) {
	srv := s3test.Fake(t)
	f := newFixture(t, srv, nil)
	cat, err := catalog.Open(f.ctx, pgxConnString(f.admin))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	p, err := s3proxy.New(s3proxy.Config{Catalog: cat, Warehouses: []string{srv.URI("wh")},
		Backend: s3proxy.Backend{Endpoint: srv.Endpoint, Region: srv.Region,
			Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewTLSServer(p)
	defer hs.Close()
	var seen []string
	var mu sync.Mutex
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), UsePathStyle: true, RetryMaxAttempts: 1,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		Credentials:                credentials.NewStaticCredentialsProvider(f.alice.id, f.alice.secret, ""),
		HTTPClient: recordingClient{hs.Client(), func(r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("X-Amz-Content-Sha256"))
			mu.Unlock()
		}}})
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	key := f.key("ns_a/t/d=5/trailer.parquet")
	// An unseekable body: the SDK cannot hash it first, so it streams it
	// with a trailing checksum.
	body := struct{ io.Reader }{bytes.NewReader(data)}
	if _, err := c.PutObject(f.ctx, &s3.PutObjectInput{Bucket: aws.String(srv.Bucket), Key: key, Body: body,
		ContentLength: aws.Int64(int64(len(data)))}); err != nil {
		t.Fatalf("PutObject over TLS: %v", err)
	}
	out, err := f.direct.GetObject(f.ctx, &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(out.Body)
	if !bytes.Equal(stored, data) {
		t.Fatalf("stored %d bytes, want %d", len(stored), len(data))
	}
	if len(seen) != 1 || seen[0] != "STREAMING-UNSIGNED-PAYLOAD-TRAILER" {
		t.Errorf("the SDK sent x-amz-content-sha256 %q, want a checksum trailer", seen)
	}
	// A multi-delete's body (whose keys the proxy reads) with a trailer.
	if _, err := c.DeleteObjects(f.ctx, &s3.DeleteObjectsInput{Bucket: aws.String(srv.Bucket),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: key}}}}); err != nil {
		t.Fatalf("DeleteObjects over TLS: %v", err)
	}
	if _, err := f.direct.HeadObject(f.ctx, &s3.HeadObjectInput{Bucket: aws.String(srv.Bucket), Key: key}); err == nil {
		t.Errorf("%s still exists after DeleteObjects", *key)
	}
	t.Logf("x-amz-content-sha256 sent: %q", seen)
}

type recordingClient struct {
	c   *http.Client
	see func(*http.Request)
}

func (r recordingClient) Do(req *http.Request) (*http.Response, error) {
	r.see(req)
	return r.c.Do(req)
}

func pgxConnString(c *pgx.Conn) string { return c.Config().ConnString() }
