package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

// TestS3Proxy drives the S3 proxy of `lakesoul serve --s3proxy-listen` and
// of a separate `lakesoul s3proxy` with aws-sdk-go-v2: workspace users
// create access keys over pgwire, read their tables' Parquet files through
// the proxy and get 403 for another workspace's; a revoked key stops
// working.
func TestS3Proxy(t *testing.T) {
	requirePG(t)
	for _, s3srv := range s3test.Servers(t) {
		t.Run(s3srv.Name, func(t *testing.T) { testS3Proxy(t, s3srv) })
	}
}

// proxyKey is an access key as lakesoul.create_access_key() returns it.
type proxyKey struct{ id, secret string }

func proxyClient(endpoint string, k proxyKey) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(k.id, k.secret, ""), RetryMaxAttempts: 1})
}

// s3Status is the HTTP status and S3 error code of err.
func s3Status(err error) (int, string) {
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

func proxyGet(ctx context.Context, c *s3.Client, bucket, key string) ([]byte, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func proxyList(ctx context.Context, c *s3.Client, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

func testS3Proxy(t *testing.T, s3srv *s3test.Server) {
	ctx := testCtx(t)
	base := testBaseDir(t)
	proxyAddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv := startS3Server(t, base+"/data", s3srv, "--s3proxy-listen", proxyAddr)
	admin := srv.connect(t)
	mustExec(t, ctx, admin,
		"SELECT lakesoul.create_workspace('pxa')",
		"SELECT lakesoul.create_workspace('pxb')",
		"SELECT lakesoul.create_user('pxalice', 'alice-pw', 'pxa', admin => true)",
		"SELECT lakesoul.create_user('pxbob', 'bob-pw', 'pxb', admin => true)")
	login := func(user, pw string) *pgx.Conn { return srv.login(t, ctx, user, pw) }
	alice, bob := login("pxalice", "alice-pw"), login("pxbob", "bob-pw")
	mustExec(t, ctx, alice,
		"CREATE SCHEMA pxa_s",
		"CREATE TABLE pxa_s.t (id bigint PRIMARY KEY, a text, b text) WITH (hash_bucket_num = 1)",
		// One Parquet file of a few MiB.
		"INSERT INTO pxa_s.t SELECT i, md5(i::text), md5((-i)::text) FROM generate_series(1, 100000) AS g(i)")
	mustExec(t, ctx, bob,
		"CREATE SCHEMA pxb_s",
		"CREATE TABLE pxb_s.u (id bigint, v text) PARTITION BY LIST (v)",
		"INSERT INTO pxb_s.u VALUES (1, 'secret')")
	newKey := func(c *pgx.Conn) proxyKey {
		var k proxyKey
		if err := c.QueryRow(ctx, "SELECT * FROM lakesoul.create_access_key()").Scan(&k.id, &k.secret); err != nil {
			t.Fatalf("create_access_key over pgwire: %v", err)
		}
		return k
	}
	aliceKey, bobKey := newKey(alice), newKey(bob)
	wantRows(t, "alice's keys", queryStrings(t, ctx, alice, "SELECT role_name FROM lakesoul.access_keys"), []string{"pxalice"})
	if _, err := alice.Exec(ctx, "SELECT * FROM lakesoul.access_key"); pgCode(err) != "42501" {
		t.Errorf("alice reads the access key secrets: %v, want 42501", err)
	}

	cat := srv.catalogConn(t)
	tablePrefix := func(name string) string {
		var p string
		if err := cat.QueryRow(ctx, "SELECT table_path FROM table_info WHERE table_name = $1", name).Scan(&p); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p, "s3://"+s3srv.Bucket+"/") {
			t.Fatalf("table path %s is not in bucket %s", p, s3srv.Bucket)
		}
		return strings.TrimPrefix(p, "s3://"+s3srv.Bucket+"/") + "/"
	}
	alicePrefix, bobPrefix := tablePrefix("t"), tablePrefix("u")
	direct := s3srv.Store(t, objstore.S3Options{}).Client()
	bobKeys, err := proxyList(ctx, direct, s3srv.Bucket, bobPrefix)
	if err != nil || len(bobKeys) == 0 {
		t.Fatalf("bob's files on the backend: %v %v", bobKeys, err)
	}

	check := func(endpoint string) {
		t.Helper()
		ac, bc := proxyClient(endpoint, aliceKey), proxyClient(endpoint, bobKey)
		keys, err := proxyList(ctx, ac, s3srv.Bucket, alicePrefix)
		if err != nil || len(keys) != 1 || !strings.HasSuffix(keys[0], ".parquet") {
			t.Fatalf("alice lists her table through %s: %v %v", endpoint, keys, err)
		}
		got, err := proxyGet(ctx, ac, s3srv.Bucket, keys[0])
		if err != nil {
			t.Fatalf("alice reads %s: %v", keys[0], err)
		}
		want, err := proxyGet(ctx, direct, s3srv.Bucket, keys[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 2<<20 || sha256.Sum256(got) != sha256.Sum256(want) || !bytes.HasPrefix(got, []byte("PAR1")) {
			t.Errorf("alice's Parquet file through the proxy: %d bytes, want the %d stored", len(got), len(want))
		}
		if _, err := proxyGet(ctx, bc, s3srv.Bucket, bobKeys[0]); err != nil {
			t.Errorf("bob reads his file: %v", err)
		}
		for what, err := range map[string]error{
			"alice reads bob's file":  func() error { _, err := proxyGet(ctx, ac, s3srv.Bucket, bobKeys[0]); return err }(),
			"bob reads alice's file":  func() error { _, err := proxyGet(ctx, bc, s3srv.Bucket, keys[0]); return err }(),
			"alice lists bob's table": func() error { _, err := proxyList(ctx, ac, s3srv.Bucket, bobPrefix); return err }(),
			"alice overwrites bob's file": func() error {
				_, err := ac.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s3srv.Bucket), Key: aws.String(bobKeys[0]),
					Body: strings.NewReader("x")})
				return err
			}(),
		} {
			if status, code := s3Status(err); status != http.StatusForbidden || code != "AccessDenied" {
				t.Errorf("%s through %s: %v, want 403 AccessDenied", what, endpoint, err)
			}
		}
	}
	check(proxyAddr)

	// The proxy alone, against the same catalog.
	info, ok := readPostmasterPid(srv.pgDir())
	if !ok {
		t.Fatal("no postmaster.pid")
	}
	standalone := startS3Proxy(t, base, s3srv, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		info.socketDir, info.port, adminRole, database))
	check(standalone)

	// Revoking a key over pgwire ends its access at once, on both.
	var revoked bool
	if err := alice.QueryRow(ctx, "SELECT lakesoul.revoke_access_key($1)", aliceKey.id).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("revoke_access_key over pgwire: %v %v", revoked, err)
	}
	if _, err := bob.Exec(ctx, "SELECT lakesoul.revoke_access_key($1)", bobKey.id+"X"); pgCode(err) != "42704" {
		t.Errorf("revoking an unknown key: %v, want 42704", err)
	}
	for _, ep := range []string{proxyAddr, standalone} {
		_, err := proxyList(ctx, proxyClient(ep, aliceKey), s3srv.Bucket, alicePrefix)
		if status, code := s3Status(err); status != http.StatusForbidden || code != "InvalidAccessKeyId" {
			t.Errorf("revoked key through %s: %v, want 403 InvalidAccessKeyId", ep, err)
		}
	}
	if !strings.Contains(srv.logTail(1<<20), `msg="s3proxy: request denied"`) {
		t.Errorf("the server logged no denial")
	}
}

// startS3Proxy runs `lakesoul s3proxy` against catalogURL in front of
// s3srv and returns its address once it accepts connections; it is stopped
// when the test ends.
func startS3Proxy(t *testing.T, base string, s3srv *s3test.Server, catalogURL string) string {
	t.Helper()
	addr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(base + "/s3proxy.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(lakesoulBin, "s3proxy", "--listen", addr, "--catalog-url", catalogURL,
		"--s3-endpoint", s3srv.Endpoint, "--s3-region", s3srv.Region, "--warehouse", s3srv.URI("wh"))
	cmd.Env = append(serverEnv(), "AWS_ACCESS_KEY_ID="+s3srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3srv.SecretKey,
		"AWS_EC2_METADATA_DISABLED=true")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childSysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
			return // it failed to start: reported already
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("lakesoul s3proxy exited with %v", waitErr)
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
			t.Errorf("lakesoul s3proxy did not stop on SIGTERM")
		}
		if t.Failed() {
			b, _ := os.ReadFile(base + "/s3proxy.log")
			t.Logf("s3proxy log:\n%s", b)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(base + "/s3proxy.log")
			t.Fatalf("lakesoul s3proxy exited: %v\n%s", waitErr, b)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("lakesoul s3proxy does not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
