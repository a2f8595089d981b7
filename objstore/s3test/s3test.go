// Package s3test gives tests real S3 servers on loopback: an in-process
// gofakes3 server (always), and the server named by LAKESOUL_TEST_S3_ENDPOINT
// (SeaweedFS in .ci/run) when set. Both sit behind a fault switch that can
// take S3 "down" (connections cut), make it slow, or count requests.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lakesoul-go/lakesoul/objstore"
)

// Environment of an external S3 server for tests (.ci/run sets them for
// SeaweedFS). Without LAKESOUL_TEST_S3_ENDPOINT those tests use only the
// in-process server.
const (
	EnvEndpoint  = "LAKESOUL_TEST_S3_ENDPOINT"
	EnvAccessKey = "LAKESOUL_TEST_S3_ACCESS_KEY"
	EnvSecretKey = "LAKESOUL_TEST_S3_SECRET_KEY"
	EnvBucket    = "LAKESOUL_TEST_S3_BUCKET"
	EnvRegion    = "LAKESOUL_TEST_S3_REGION"
)

// Server is an S3 server for one test, reached through a fault switch.
type Server struct {
	// Name is "gofakes3" or "external".
	Name string
	// Endpoint is the URL clients use (the fault switch's).
	Endpoint string
	// Bucket exists; Prefix is unique to the test, under which it works.
	Bucket, Prefix string
	// AccessKey, SecretKey and Region sign requests.
	AccessKey, SecretKey, Region string

	down     atomic.Bool
	delay    atomic.Int64
	mu       sync.Mutex
	requests map[string]int
	srv      *httptest.Server
}

// Servers returns the S3 servers a test runs against: gofakes3, plus the
// external one when LAKESOUL_TEST_S3_ENDPOINT is set.
func Servers(t testing.TB) []*Server {
	out := []*Server{Fake(t)}
	if os.Getenv(EnvEndpoint) != "" {
		out = append(out, External(t))
	}
	return out
}

// Fake starts an in-process gofakes3 server with one bucket.
func Fake(t testing.TB) *Server {
	t.Helper()
	backend := s3mem.New()
	bucket := "lakesoul-test"
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	return start(t, "gofakes3", fake.Server(), bucket, "test", "test", "us-east-1")
}

// External proxies to the server of LAKESOUL_TEST_S3_ENDPOINT (skipping the
// test when unset); the bucket (LAKESOUL_TEST_S3_BUCKET, default
// lakesoul-test) is created when missing.
func External(t testing.TB) *Server {
	t.Helper()
	ep := os.Getenv(EnvEndpoint)
	if ep == "" {
		t.Skipf("%s is not set", EnvEndpoint)
	}
	target, err := url.Parse(ep)
	if err != nil {
		t.Fatalf("%s: %v", EnvEndpoint, err)
	}
	bucket := env(EnvBucket, "lakesoul-test")
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	// Keep the Host header the client signed (SigV4 covers it).
	s := start(t, "external", proxy, bucket, env(EnvAccessKey, os.Getenv("AWS_ACCESS_KEY_ID")),
		env(EnvSecretKey, os.Getenv("AWS_SECRET_ACCESS_KEY")), env(EnvRegion, "us-east-1"))
	// A server just started may accept connections before it serves S3:
	// wait up to a minute for the bucket.
	st := s.Store(t, objstore.S3Options{MaxRetries: -1, RequestTimeout: 10 * time.Second})
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := st.Client().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
		if err != nil {
			_, err = st.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
		}
		cancel()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("bucket %s on %s: %v", bucket, ep, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func start(t testing.TB, name string, h http.Handler, bucket, ak, sk, region string) *Server {
	var rnd [4]byte
	rand.Read(rnd[:])
	prefix := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + hex.EncodeToString(rnd[:])
	s := &Server{Name: name, Bucket: bucket, Prefix: strings.ToLower(prefix), AccessKey: ak, SecretKey: sk,
		Region: region, requests: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.Method]++
		s.mu.Unlock()
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		if s.down.Load() {
			// Cut the connection without an answer, as a dead server would.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	s.Endpoint = s.srv.URL
	return s
}

// URI is s3://bucket/<test prefix>/elems….
func (s *Server) URI(elems ...string) string {
	return objstore.Join("s3://"+s.Bucket+"/"+s.Prefix, elems...)
}

// SetDown cuts every request's connection (true) or serves again (false).
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// SetDelay delays every request by d before it is served.
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// Requests returns how many requests of method were made (all methods
// for "").
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if method != "" {
		return s.requests[method]
	}
	n := 0
	for _, v := range s.requests {
		n += v
	}
	return n
}

// ResetRequests zeroes the request counters.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	s.requests = map[string]int{}
	s.mu.Unlock()
}

// Options fills the connection fields of o for this server.
func (s *Server) Options(o objstore.S3Options) objstore.S3Options {
	o.Endpoint, o.Region, o.AccessKeyID, o.SecretAccessKey = s.Endpoint, s.Region, s.AccessKey, s.SecretKey
	return o
}

// Store opens an S3 store on this server with o's tuning.
func (s *Server) Store(t testing.TB, o objstore.S3Options) *objstore.S3 {
	t.Helper()
	st, err := objstore.NewS3(context.Background(), s.Options(o))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
