package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

// randomBytes is n deterministic pseudo-random bytes.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// put writes data to uri in writes of chunk bytes.
func put(t *testing.T, st objstore.Store, uri string, data []byte, chunk int) {
	t.Helper()
	w, err := st.Create(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += chunk {
		if _, err := w.Write(data[off:min(off+chunk, len(data))]); err != nil {
			t.Fatalf("write %s: %v", uri, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", uri, err)
	}
}

// readAll reads an object with Seek + Read, checking Size.
func readAll(t *testing.T, st objstore.Store, uri string) []byte {
	t.Helper()
	r, err := st.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if int64(len(b)) != r.Size() {
		t.Fatalf("read %d bytes, Size %d", len(b), r.Size())
	}
	return b
}

// checkRanges reads ranges of data through ReadAt, concurrently.
func checkRanges(t *testing.T, r objstore.Reader, data []byte, ranges [][2]int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ranges))
	for _, rg := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, rg[1])
			n, err := r.ReadAt(p, int64(rg[0]))
			want := data[min(rg[0], len(data)):min(rg[0]+rg[1], len(data))]
			if (err != nil && err != io.EOF) || n != len(want) || !bytes.Equal(p[:n], want) {
				errs <- fmt.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", rg[1], rg[0], n, err, len(want))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestS3PutGetRange(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			for _, cached := range []bool{false, true} {
				o := objstore.S3Options{MaxRequestSize: 256 << 10, TailSize: 4 << 10}
				if cached {
					o.CacheDir, o.CacheSize, o.CacheBlockSize = t.TempDir(), 64<<20, 64<<10
				}
				st := srv.Store(t, o)
				// A small object (one PUT) and an empty one.
				small := randomBytes(1000, 1)
				put(t, st, srv.URI("small.bin"), small, 100)
				if got := readAll(t, st, srv.URI("small.bin")); !bytes.Equal(got, small) {
					t.Fatalf("small object differs")
				}
				put(t, st, srv.URI("empty.bin"), nil, 1)
				if got := readAll(t, st, srv.URI("empty.bin")); len(got) != 0 {
					t.Fatalf("empty object has %d bytes", len(got))
				}
				// 1.5 MiB: ranges inside the tail, across blocks, split into
				// several requests, past the end.
				data := randomBytes(1536<<10, 2)
				put(t, st, srv.URI("dir", "mid.bin"), data, 70000)
				r, err := st.Open(context.Background(), srv.URI("dir", "mid.bin"))
				if err != nil {
					t.Fatal(err)
				}
				if r.Size() != int64(len(data)) {
					t.Fatalf("Size %d, want %d", r.Size(), len(data))
				}
				checkRanges(t, r, data, [][2]int{{0, 4}, {len(data) - 8, 8}, {len(data) - 5000, 5000},
					{100, 1 << 20}, {65535, 2}, {0, len(data)}, {len(data) - 10, 100}, {300 << 10, 900 << 10}})
				if n, err := r.ReadAt(make([]byte, 1), int64(len(data))); n != 0 || err != io.EOF {
					t.Fatalf("ReadAt at the end: %d, %v", n, err)
				}
				r.Close()
			}
		})
	}
}

func TestS3MultipartAndAbort(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			st := srv.Store(t, objstore.S3Options{PartSize: 5 << 20, UploadConcurrency: 2})
			ctx := context.Background()
			data := randomBytes(13<<20+12345, 3)
			srv.ResetRequests()
			put(t, st, srv.URI("big.bin"), data, 1<<20+7)
			// Create + 3 parts + complete.
			if puts, posts := srv.Requests("PUT"), srv.Requests("POST"); puts != 3 || posts != 2 {
				t.Errorf("multipart upload made %d PUTs and %d POSTs, want 3 and 2", puts, posts)
			}
			if got := readAll(t, st, srv.URI("big.bin")); !bytes.Equal(got, data) {
				t.Fatal("multipart object differs")
			}

			// Abort after two parts went up: nothing visible, no upload left.
			w, err := st.Create(ctx, srv.URI("aborted.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data[:11<<20]); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Open(ctx, srv.URI("aborted.bin")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("aborted object: Open = %v, want not exist", err)
			}
			if ups, err := st.PendingUploads(ctx, srv.Bucket, srv.Prefix+"/"); err != nil || len(ups) != 0 {
				t.Fatalf("pending uploads after abort: %v, %v", ups, err)
			}
			// Abort of a small write: nothing visible either.
			w, _ = st.Create(ctx, srv.URI("aborted-small.bin"))
			w.Write([]byte("x"))
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Open(ctx, srv.URI("aborted-small.bin")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("aborted small object: Open = %v, want not exist", err)
			}
		})
	}
}

func TestS3ListDelete(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			st := srv.Store(t, objstore.S3Options{})
			ctx := context.Background()
			for _, k := range []string{"t/a.parquet", "t/d=2026-01-01/b.parquet", "t/d=2026-01-01/c.parquet", "t2/x.parquet"} {
				put(t, st, srv.URI(k), []byte(k), 100)
			}
			keys, err := st.List(ctx, srv.Bucket, srv.Prefix+"/t/")
			if err != nil || len(keys) != 3 {
				t.Fatalf("List = %v, %v; want 3 keys", keys, err)
			}
			if err := st.Delete(ctx, srv.URI("t/a.parquet")); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, srv.URI("t/missing.parquet")); err != nil {
				t.Fatalf("deleting a missing object: %v", err)
			}
			for _, bad := range [][2]string{
				{srv.URI(), srv.URI("t", "..", "t2")}, // dot segments
				{srv.URI("t"), srv.URI("t")},          // the root itself
				{srv.URI("t"), srv.URI("t2")},         // outside the root
				{srv.URI(), srv.URI() + "//t2"},       // empty segment
				{srv.URI(), "s3a://" + srv.Bucket},    // the bucket
			} {
				if err := st.DeletePrefix(ctx, bad[0], bad[1]); err == nil {
					t.Fatalf("DeletePrefix(%q, %q) succeeded", bad[0], bad[1])
				}
			}
			if keys, _ := st.List(ctx, srv.Bucket, srv.Prefix+"/"); len(keys) != 3 {
				t.Fatalf("refused DeletePrefix calls deleted objects: %v left", keys)
			}
			if err := st.DeletePrefix(ctx, srv.URI(), srv.URI("t")); err != nil {
				t.Fatal(err)
			}
			keys, _ = st.List(ctx, srv.Bucket, srv.Prefix+"/")
			if len(keys) != 1 || !strings.HasSuffix(keys[0], "t2/x.parquet") {
				t.Fatalf("after DeletePrefix(t): %v, want only t2/x.parquet", keys)
			}
			if err := st.DeletePrefix(ctx, "s3://"+srv.Bucket, "s3://"+srv.Bucket+"/"); err == nil {
				t.Fatal("DeletePrefix of a whole bucket succeeded")
			}
		})
	}
}

func TestS3NotFound(t *testing.T) {
	srv := s3test.Fake(t)
	st := srv.Store(t, objstore.S3Options{CacheDir: t.TempDir(), CacheSize: 1 << 20})
	uri := srv.URI("nope", "part-x_0000.parquet")
	_, err := st.Open(context.Background(), uri)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), uri) {
		t.Fatalf("Open of a missing object: %v; want fs.ErrNotExist naming %s", err, uri)
	}
	if _, err := objstore.ForURI("s3://"); err == nil {
		t.Fatal("ForURI(s3://) succeeded")
	}
	if b, k, err := objstore.ParseS3URI("s3a://bkt/wh/ns/t/d=1/part-a_0001.parquet"); err != nil || b != "bkt" || k != "wh/ns/t/d=1/part-a_0001.parquet" {
		t.Fatalf("ParseS3URI: %q %q %v", b, k, err)
	}
}

// TestS3DownDuringWrite: S3 goes away in the middle of a multipart upload.
// The write fails cleanly naming the object, nothing becomes visible, and
// once S3 is back writes work and cleanup removes the orphan upload.
func TestS3DownDuringWrite(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			st := srv.Store(t, objstore.S3Options{PartSize: 5 << 20, MaxRetries: 2, RetryBase: 10 * time.Millisecond,
				RequestTimeout: 5 * time.Second})
			ctx := context.Background()
			uri := srv.URI("t", "part-down_0000.parquet")
			data := randomBytes(12<<20, 4)
			w, err := st.Create(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data[:6<<20]); err != nil {
				t.Fatal(err)
			}
			srv.SetDown(true)
			_, werr := w.Write(data[6<<20:])
			cerr := w.Close()
			err = errors.Join(werr, cerr)
			if err == nil || !strings.Contains(err.Error(), uri) {
				t.Fatalf("write with S3 down: %v; want an error naming %s", err, uri)
			}
			w.Abort()
			srv.SetDown(false)
			if _, err := st.Open(ctx, uri); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after the failed write Open = %v, want not exist", err)
			}
			put(t, st, uri, data, 1<<20)
			if got := readAll(t, st, uri); !bytes.Equal(got, data) {
				t.Fatal("object written after S3 came back differs")
			}
			if err := st.DeletePrefix(ctx, srv.URI(), srv.URI("t")); err != nil {
				t.Fatal(err)
			}
			if ups, err := st.PendingUploads(ctx, srv.Bucket, srv.Prefix+"/"); err != nil || len(ups) != 0 {
				t.Fatalf("pending uploads after cleanup: %v, %v", ups, err)
			}
		})
	}
}

// TestS3Slow: requests that get no answer time out per attempt; transient
// outages are ridden out by retries.
func TestS3Slow(t *testing.T) {
	srv := s3test.Fake(t)
	ctx := context.Background()
	fast := srv.Store(t, objstore.S3Options{})
	put(t, fast, srv.URI("o.bin"), []byte("hello"), 5)

	st := srv.Store(t, objstore.S3Options{RequestTimeout: 200 * time.Millisecond, MaxRetries: 1, RetryBase: time.Millisecond})
	srv.SetDelay(2 * time.Second)
	// The per-attempt timeout (not the 2 s delay) ends the call: the error says so.
	_, err := st.Open(ctx, srv.URI("o.bin"))
	if err == nil || !strings.Contains(err.Error(), "no answer within") || !strings.Contains(err.Error(), srv.URI("o.bin")) {
		t.Fatalf("Open on a slow S3: %v; want a timeout naming the object", err)
	}
	srv.SetDelay(0)

	// Down for a moment: retries with backoff get through.
	st = srv.Store(t, objstore.S3Options{MaxRetries: 8, RetryBase: 20 * time.Millisecond})
	srv.SetDown(true)
	go func() {
		time.Sleep(150 * time.Millisecond)
		srv.SetDown(false)
	}()
	if got := readAll(t, st, srv.URI("o.bin")); string(got) != "hello" {
		t.Fatalf("read %q", got)
	}
	if st.Stats().Retries == 0 {
		t.Fatal("no retries counted")
	}
}
