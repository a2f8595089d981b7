package objstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

const testBlock = 64 << 10

func cachedStore(t *testing.T, srv *s3test.Server, c *objstore.Cache, prefetch int64) *objstore.S3 {
	return srv.Store(t, objstore.S3Options{Cache: c, MaxRequestSize: 256 << 10, TailSize: 8 << 10, Prefetch: prefetch})
}

func openCache(t *testing.T, dir string, capacity int64) *objstore.Cache {
	t.Helper()
	c, err := objstore.OpenCache(dir, capacity, testBlock)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readRange opens uri and reads [off, off+n) with one ReadAt.
func readRange(t *testing.T, st objstore.Store, uri string, off, n int) []byte {
	t.Helper()
	r, err := st.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := make([]byte, n)
	if _, err := r.ReadAt(p, int64(off)); err != nil {
		t.Fatalf("ReadAt(%d, %d): %v", n, off, err)
	}
	return p
}

// TestCacheHitsMisses: a cold read fetches each block once; a warm read
// (new Open) makes one HEAD and no GET.
func TestCacheHitsMisses(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			c := openCache(t, t.TempDir(), 64<<20)
			st := cachedStore(t, srv, c, -1)
			data := randomBytes(1<<20, 5)
			uri := srv.URI("f.parquet")
			put(t, st, uri, data, 1<<16)

			srv.ResetRequests()
			if got := readRange(t, st, uri, 0, 1<<20-8<<10); !bytes.Equal(got, data[:1<<20-8<<10]) {
				t.Fatal("cold read differs")
			}
			s := c.Stats()
			if s.Misses != 16 || s.Hits != 0 {
				t.Fatalf("cold: %+v; want 16 misses, 0 hits", s)
			}
			// Tail GET + 1 MiB in 256 KiB requests.
			if gets := srv.Requests("GET"); gets != 1+4 {
				t.Fatalf("cold read made %d GETs, want 5", gets)
			}
			srv.ResetRequests()
			if got := readRange(t, st, uri, 100, 900<<10); !bytes.Equal(got, data[100:100+900<<10]) {
				t.Fatal("warm read differs")
			}
			if gets, heads := srv.Requests("GET"), srv.Requests("HEAD"); gets != 0 || heads != 1 {
				t.Fatalf("warm read made %d GETs and %d HEADs, want 0 and 1", gets, heads)
			}
			if s := c.Stats(); s.Hits != 15 || s.Misses != 16 || s.HitBytes != 900<<10 {
				t.Fatalf("warm: %+v; want 15 hits of 900 KiB", s)
			}
			// A rewritten object (new ETag) is not served from stale blocks.
			data2 := randomBytes(1<<20, 6)
			put(t, st, uri, data2, 1<<20)
			if got := readRange(t, st, uri, 0, 1<<19); !bytes.Equal(got, data2[:1<<19]) {
				t.Fatal("read after rewrite returned stale bytes")
			}
		})
	}
}

func TestCacheEviction(t *testing.T) {
	srv := s3test.Fake(t)
	c := openCache(t, t.TempDir(), 256<<10)
	st := cachedStore(t, srv, c, -1)
	data := randomBytes(1<<20, 7)
	uri := srv.URI("f.parquet")
	put(t, st, uri, data, 1<<20)
	for i := 0; i < 2; i++ {
		if got := readRange(t, st, uri, 0, len(data)-8<<10); !bytes.Equal(got, data[:len(data)-8<<10]) {
			t.Fatal("read differs")
		}
	}
	s := c.Stats()
	if s.Bytes > 256<<10 || s.Evictions == 0 || s.Entries == 0 {
		t.Fatalf("stats %+v: want evictions and at most 256 KiB", s)
	}
	var onDisk int64
	filepath.Walk(c.Dir(), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && filepath.Base(p) != "VERSION" {
			onDisk += info.Size()
		}
		return nil
	})
	if onDisk != s.Bytes {
		t.Fatalf("%d bytes on disk, index says %d", onDisk, s.Bytes)
	}
}

// TestCacheConcurrentReaders: many readers of the same ranges at once
// share fetches (each block is fetched once) and all get the right bytes.
func TestCacheConcurrentReaders(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			c := openCache(t, t.TempDir(), 64<<20)
			st := cachedStore(t, srv, c, -1)
			data := randomBytes(2<<20, 8)
			uri := srv.URI("f.parquet")
			put(t, st, uri, data, 1<<20)
			var wg sync.WaitGroup
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := st.Open(context.Background(), uri)
					if err != nil {
						t.Error(err)
						return
					}
					defer r.Close()
					for i := 0; i < 8; i++ {
						off := (g*7919 + i*131071) % (len(data) - 300<<10)
						p := make([]byte, 300<<10)
						if _, err := r.ReadAt(p, int64(off)); err != nil || !bytes.Equal(p, data[off:off+len(p)]) {
							t.Errorf("reader %d: ReadAt(%d) = %v or wrong bytes", g, off, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			s := c.Stats()
			if blocks := int64(len(data)) / testBlock; s.Misses > blocks {
				t.Fatalf("%+v: %d misses for %d blocks: a block was fetched twice", s, s.Misses, blocks)
			}
			if s.Waits == 0 && s.Hits == 0 {
				t.Fatalf("%+v: no reader shared another's block", s)
			}
		})
	}
}

// TestCacheRestart: a new cache over the same directory finds the blocks
// (index rebuilt from the files); leftovers of interrupted writes and
// damaged entries are dropped, not served.
func TestCacheRestart(t *testing.T) {
	srv := s3test.Fake(t)
	dir := t.TempDir()
	c := openCache(t, dir, 64<<20)
	st := cachedStore(t, srv, c, -1)
	data := randomBytes(1<<20, 9)
	uri := srv.URI("f.parquet")
	put(t, st, uri, data, 1<<20)
	readRange(t, st, uri, 0, len(data))
	before := c.Stats()

	// Damage: a temporary of an interrupted write, and a truncated block.
	var blocks []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && info.Size() == testBlock {
			blocks = append(blocks, p)
		}
		return nil
	})
	if len(blocks) == 0 {
		t.Fatal("no block files")
	}
	tmp := blocks[0] + ".tmp123"
	os.WriteFile(tmp, []byte("partial"), 0o644)
	os.Truncate(blocks[1], 100)

	c2 := openCache(t, dir, 64<<20)
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("temporary file survived the rebuild")
	}
	if s := c2.Stats(); s.Entries != before.Entries || s.Bytes != before.Bytes-testBlock+100 {
		t.Fatalf("rebuilt index %+v, before %+v", s, before)
	}
	st2 := cachedStore(t, srv, c2, -1)
	srv.ResetRequests()
	if got := readRange(t, st2, uri, 0, len(data)); !bytes.Equal(got, data) {
		t.Fatal("read after restart differs")
	}
	s := c2.Stats()
	if s.Misses != 1 || s.Hits != int64(len(data))/testBlock-1 || srv.Requests("GET") != 1 {
		t.Fatalf("after restart %+v with %d GETs: want 1 miss (the damaged block), the rest hits", s, srv.Requests("GET"))
	}

	// Another block size: the directory is wiped, not misread.
	c3, err := objstore.OpenCache(dir, 64<<20, 2*testBlock)
	if err != nil {
		t.Fatal(err)
	}
	if s := c3.Stats(); s.Entries != 0 {
		t.Fatalf("cache of another block size kept %d entries", s.Entries)
	}
}

// TestCachePrefetch: a sequential reader finds the next blocks prefetched.
func TestCachePrefetch(t *testing.T) {
	srv := s3test.Fake(t)
	c := openCache(t, t.TempDir(), 64<<20)
	st := cachedStore(t, srv, c, 512<<10)
	data := randomBytes(2<<20, 10)
	uri := srv.URI("f.parquet")
	put(t, st, uri, data, 1<<20)
	r, err := st.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off+100<<10 < len(data)-8<<10; off += 100 << 10 {
		p := make([]byte, 100<<10)
		if _, err := r.ReadAt(p, int64(off)); err != nil || !bytes.Equal(p, data[off:off+len(p)]) {
			t.Fatalf("ReadAt(%d): %v or wrong bytes", off, err)
		}
	}
	r.Close()
	if s := c.Stats(); s.Prefetched == 0 || s.Hits+s.Waits == 0 {
		t.Fatalf("%+v: nothing prefetched and used", s)
	}
}

func TestCacheDirIsNotFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := objstore.OpenCache(f, 1<<20, 0); err == nil || !strings.Contains(err.Error(), "cache") {
		t.Fatalf("OpenCache on a file: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "0": 0, "1.5G": 3 << 29, "100": 100, "4 kb": 4096, "2TiB": 2 << 40} {
		if got, err := objstore.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "1XB", "one"} {
		if _, err := objstore.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func TestCachePurge(t *testing.T) {
	srv := s3test.Fake(t)
	c := openCache(t, t.TempDir(), 64<<20)
	st := cachedStore(t, srv, c, -1)
	data := randomBytes(300<<10, 11)
	uri := srv.URI("f.parquet")
	put(t, st, uri, data, 1<<20)
	readRange(t, st, uri, 0, 200<<10)
	c.Purge()
	if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Fatalf("after Purge: %+v", s)
	}
	if got := readRange(t, st, uri, 0, 200<<10); !bytes.Equal(got, data[:200<<10]) {
		t.Fatal("read after Purge differs")
	}
	if s := c.Stats(); s.Misses != 8 {
		t.Fatalf("after Purge: %+v; want 8 misses (4 blocks, twice)", s)
	}
}
