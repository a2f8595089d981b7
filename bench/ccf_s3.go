package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/server"
)

func init() { Register("ccf-s3", runCCFS3) }

// runCCFS3 is the CCF workload with the warehouse on S3: ingest, then the
// full merge-on-read with a cold disk cache, a warm one and no cache, next
// to the same workload on local disk (ingest and read). The S3 server is --s3-endpoint (the
// standard AWS credential chain signs) or, without one, a SeaweedFS
// `weed mini` this benchmark starts from --weed (DEVELOPERS.md tells how to
// build it). --s3-latency adds a delay to every request, as a remote
// object store's first-byte latency.
func runCCFS3(ctx context.Context, o Options) error {
	fs := flag.NewFlagSet("ccf-s3", flag.ContinueOnError)
	upserts := fs.Int("upserts", 10, "number of upsert batches")
	endpoint := fs.String("s3-endpoint", os.Getenv("AWS_ENDPOINT_URL"), "S3 endpoint; empty = start SeaweedFS from --weed")
	bucket := fs.String("s3-bucket", "lakesoul-bench", "bucket (created when missing)")
	weed := fs.String("weed", defaultWeed(), "SeaweedFS binary started when --s3-endpoint is empty")
	latency := fs.Duration("s3-latency", 0, "extra latency added to every S3 request")
	cacheSize := fs.String("cache-size", "4GiB", "disk cache capacity")
	skipLocal := fs.Bool("skip-local", false, "skip the local-disk peer")
	rounds := fs.Int("rounds", 1, "how often to repeat the reads (local, S3 cold, warm, no cache)")
	if err := fs.Parse(o.Args); err != nil {
		return err
	}
	csize, err := objstore.ParseSize(*cacheSize)
	if err != nil || csize <= 0 {
		return fmt.Errorf("ccf-s3: --cache-size %q: want a positive size", *cacheSize)
	}
	w := newCCFWorkload(o.Scale, *upserts)
	if w.batch < 2 {
		return fmt.Errorf("ccf-s3: scale %v is too small", o.Scale)
	}
	name := "ccf-s3"
	if *upserts != 10 {
		name = fmt.Sprintf("ccf-s3-upserts-%d", *upserts)
	}
	want, keys := w.expectedChecksum()
	fmt.Fprintf(o.Log, "ccf-s3: %d base rows + %d × %d upserts = %d rows, %d keys\n", w.base, w.upserts, w.batch, w.totalRows(), keys)
	logger := slog.New(slog.NewTextHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))

	ep := *endpoint
	if ep == "" {
		if *weed == "" {
			return errors.New("ccf-s3: no --s3-endpoint and no SeaweedFS binary (--weed); see DEVELOPERS.md")
		}
		stop, wep, err := startWeed(ctx, o, *weed, *bucket)
		if err != nil {
			return err
		}
		defer stop()
		ep = wep
	}
	if err := ensureBucket(ctx, ep, *bucket); err != nil {
		return err
	}
	if *latency > 0 {
		proxy, err := latencyProxy(ep, *latency)
		if err != nil {
			return err
		}
		defer proxy.Close()
		ep = proxy.URL
	}
	extra := map[string]any{"s3_latency_ms": latency.Milliseconds()}

	// Ingest into a local-disk server and an S3 server; a third server
	// reads the S3 table (same catalog) without a disk cache.
	var local *server.Server
	if !*skipLocal {
		if local, err = server.Start(ctx, server.Config{DataDir: filepath.Join(o.Dir, "local"), Listen: "127.0.0.1:0",
			AdminPassword: "bench", Announce: io.Discard, Logger: logger}); err != nil {
			return err
		}
		defer local.Close(context.WithoutCancel(ctx))
		if err := ccfIngest(ctx, o, name, local, "lakesoul-local", w, nil, ""); err != nil {
			return fmt.Errorf("local peer: %w", err)
		}
	}
	warehouse := fmt.Sprintf("s3://%s/ccf-%d", *bucket, time.Now().UnixNano())
	srv, err := server.Start(ctx, server.Config{DataDir: filepath.Join(o.Dir, "s3"), Listen: "127.0.0.1:0",
		AdminPassword: "bench", Announce: io.Discard, Logger: logger, Warehouse: warehouse, S3Endpoint: ep,
		CacheDir: filepath.Join(o.Dir, "s3-cache"), CacheSize: csize})
	if err != nil {
		return err
	}
	defer srv.Close(context.WithoutCancel(ctx))
	if err := ccfIngest(ctx, o, name, srv, "lakesoul-s3", w, extra, ""); err != nil {
		return err
	}
	nc, err := server.Start(ctx, server.Config{DataDir: filepath.Join(o.Dir, "s3-nocache"), Listen: "127.0.0.1:0",
		AdminPassword: "bench", Announce: io.Discard, Logger: logger, Warehouse: warehouse, S3Endpoint: ep,
		CatalogURL: srv.CatalogURL(), NoMigrate: true, CacheSize: -1})
	if err != nil {
		return err
	}
	defer nc.Close(context.WithoutCancel(ctx))

	// Reads back to back, so that the machine's state is alike for all.
	st := srv.Store().(*objstore.S3)
	for r := 1; r <= *rounds; r++ {
		x := map[string]any{"round": r}
		for k, v := range extra {
			x[k] = v
		}
		if local != nil {
			if err := ccfS3Read(ctx, o, name, local, "lakesoul-local", "read", want, keys, map[string]any{"round": r}); err != nil {
				return err
			}
		}
		st.Cache().Purge()
		for _, ph := range []struct {
			srv   *server.Server
			phase string
		}{{srv, "read_cold"}, {srv, "read_warm"}, {nc, "read_nocache"}} {
			if err := ccfS3Read(ctx, o, name, ph.srv, "lakesoul-s3", ph.phase, want, keys, x); err != nil {
				return err
			}
		}
	}
	lake, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer lake.Close(ctx)
	_, err = lake.Exec(ctx, "DROP SCHEMA ccf CASCADE") // removes the objects
	return err
}

// ccfS3Read is the full MOR read (every row materialised and checksummed),
// with the object store's counters for the read.
func ccfS3Read(ctx context.Context, o Options, name string, srv *server.Server, system, phase string,
	want uint64, keys int, extra map[string]any) error {
	lake, err := connectBench(ctx, srv)
	if err != nil {
		return err
	}
	defer lake.Close(ctx)
	st, isS3 := srv.Store().(*objstore.S3)
	var before objstore.S3Stats
	if isS3 {
		before = st.Stats()
	}
	start := time.Now()
	n, sum, err := checksumQuery(ctx, lake, "SELECT "+strings.Join(ccfColumns, ", ")+" FROM ccf.t")
	if err != nil {
		return fmt.Errorf("%s %s: %w", system, phase, err)
	}
	secs := time.Since(start).Seconds()
	x := map[string]any{"checksum": strconv.FormatUint(sum, 16), "checksum_ok": sum == want && n == int64(keys)}
	for k, v := range extra {
		x[k] = v
	}
	if isS3 {
		after := st.Stats()
		x["s3_requests"] = after.Requests - before.Requests
		x["s3_mb_in"] = float64(after.BytesIn-before.BytesIn) / (1 << 20)
		x["cache_hits"] = after.Cache.Hits - before.Cache.Hits
		x["cache_misses"] = after.Cache.Misses - before.Cache.Misses
		x["cache_prefetched"] = after.Cache.Prefetched - before.Cache.Prefetched
	}
	o.Out.Emit(Row{Bench: name, Phase: phase, System: system, Rows: n, Seconds: secs, Extra: x})
	return nil
}

// defaultWeed is the SeaweedFS binary DEVELOPERS.md and .ci/run build
// ($HOME/.cache/lakesoul/weed-<version>, or weed), if present.
func defaultWeed() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	found, _ := filepath.Glob(filepath.Join(home, ".cache", "lakesoul", "weed-v*"))
	found = append(found, filepath.Join(home, ".cache", "lakesoul", "weed"))
	for _, p := range found {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(p, ".tmp") {
			return p
		}
	}
	return ""
}

// freePorts returns n TCP ports on 127.0.0.1 free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startWeed runs `weed mini` on loopback with its data under o.Dir, the S3
// credentials of the environment (set to bench/bench when absent) and the
// bucket pre-created, and waits until S3 answers.
func startWeed(ctx context.Context, o Options, bin, bucket string) (stop func(), endpoint string, err error) {
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		os.Setenv("AWS_ACCESS_KEY_ID", "bench")
		os.Setenv("AWS_SECRET_ACCESS_KEY", "bench-secret")
	}
	dir := filepath.Join(o.Dir, "weed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	// gRPC ports are the HTTP ports + 10000; keep both in range.
	var ports []int
	for {
		if ports, err = freePorts(4); err != nil {
			return nil, "", err
		}
		if ports[0] < 50000 && ports[1] < 50000 && ports[2] < 50000 && ports[3] < 50000 {
			break
		}
	}
	cmd := exec.Command(bin, "mini", "-dir="+dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		fmt.Sprintf("-s3.port=%d", ports[0]), fmt.Sprintf("-master.port=%d", ports[1]),
		fmt.Sprintf("-filer.port=%d", ports[2]), fmt.Sprintf("-volume.port=%d", ports[3]),
		"-webdav=false", "-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-master.telemetry=false", "-bucket="+bucket)
	logf, err := os.Create(filepath.Join(o.Dir, "weed.log"))
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	safego.Go(func() { cmd.Wait(); close(exited) })
	stop = func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logf.Close()
	}
	endpoint = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err = ensureBucket(ctx, endpoint, bucket); err == nil {
			fmt.Fprintf(o.Log, "ccf-s3: SeaweedFS serves S3 on %s\n", endpoint)
			return stop, endpoint, nil
		}
		select {
		case <-exited:
			stop()
			return nil, "", fmt.Errorf("weed mini exited; see %s", filepath.Join(o.Dir, "weed.log"))
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", fmt.Errorf("weed mini: S3 not ready: %w", err)
		}
	}
}

// ensureBucket creates bucket on the server when it is missing.
func ensureBucket(ctx context.Context, endpoint, bucket string) error {
	st, err := objstore.NewS3(ctx, objstore.S3Options{Endpoint: endpoint, MaxRetries: -1, RequestTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	if st.CheckBucket(ctx, "s3://"+bucket) == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := st.Client().CreateBucket(cctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return st.CheckBucket(ctx, "s3://"+bucket)
}

// latencyProxy forwards to endpoint, delaying each request by d.
func latencyProxy(endpoint string, d time.Duration) (*httptest.Server, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		rp.ServeHTTP(w, r)
	})), nil
}
