package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Coalesced snapshot queries. Every statement over a lake table asks the
// catalog for the table's current heads (snapcache.go): one round trip and
// one catalog backend's work per statement, which under many clients of
// point queries costs the catalog more CPU than the statements cost the
// server. Statements that need the same answer — the same table and
// partitions, read as the same role on a handle that sees the latest
// committed state — share queries, as group commit shares a WAL flush:
// per such key at most one query is in flight; statements that start
// while it runs join the next one, sent when it ends, and all of them take
// its answer.
//
// Invariant (READ COMMITTED's): a statement takes the answer of a query
// sent after the statement started, so it sees every commit that finished
// before it started, on this server or any other. A statement never joins
// a query already sent. The shared query runs on its own goroutine, so a
// statement cancelled while it waits returns at once and the others keep
// their query; when the last of its statements has left, the query is
// cancelled (sent) or dropped (not yet sent), as a statement's own query
// would be.

// snapFlights are the coalesced queries in flight, by key; safe for
// concurrent use.
type snapFlights struct {
	mu sync.Mutex
	m  map[string]*snapKey
}

// snapKey is one key's state: whether a query is in flight, and the
// flight that waits for it to end.
type snapKey struct {
	running bool
	next    *snapFlight
}

// snapFlight is one shared query: its statements wait on done, then read
// out and err. waiters is how many statements wait (under snapFlights.mu);
// cancel cancels ctx.
type snapFlight struct {
	list    func(ctx context.Context) ([]catalog.PartitionFiles, error)
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
	done    chan struct{}
	out     []catalog.PartitionFiles
	err     error
}

// testHookSnapshotFlight, when set, runs in a shared query's goroutine
// after the catalog answered and before the statements waiting on it see
// the answer; testHookSnapshotJoined when a statement waits for a running
// query to end (in the flight after it).
var (
	testHookSnapshotFlight func(key string)
	testHookSnapshotJoined func(key string)
)

// do returns the answer of a query for key sent after do was called: a
// new one when none is running, else the one that will be sent when the
// running one ends. list is the query; the first statement of a flight
// supplies it, run with its context's values; it is cancelled when every
// statement waiting on it has been.
func (fs *snapFlights) do(ctx context.Context, key string, list func(ctx context.Context) ([]catalog.PartitionFiles, error)) ([]catalog.PartitionFiles, error) {
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = map[string]*snapKey{}
	}
	k := fs.m[key]
	if k == nil {
		k = &snapKey{}
		fs.m[key] = k
	}
	queued := k.running
	f := k.next
	if f == nil {
		f = &snapFlight{list: list, done: make(chan struct{})}
		f.ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
		if queued {
			k.next = f
		} else {
			k.running = true
			fs.start(key, k, f)
		}
	}
	f.waiters++
	fs.mu.Unlock()
	if queued && testHookSnapshotJoined != nil {
		testHookSnapshotJoined(key)
	}
	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		// Each statement gets its own outer slice; file lists are
		// shared, as the snapshot cache shares them.
		return slices.Clone(f.out), nil
	case <-ctx.Done():
		fs.leave(k, f)
		return nil, ctx.Err()
	}
}

// leave takes a cancelled statement off f, a flight of k: the last one to
// leave drops f when it has not been sent, else cancels its query.
func (fs *snapFlights) leave(k *snapKey, f *snapFlight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.waiters--; f.waiters > 0 {
		return
	}
	if k.next == f {
		k.next = nil
	}
	f.cancel()
}

// start runs f's query on a goroutine; when it ends, the key's next flight
// starts, or the key is forgotten. Called with fs.mu held.
func (fs *snapFlights) start(key string, k *snapKey, f *snapFlight) {
	safego.Go(func() {
		f.out, f.err = f.run()
		f.cancel()
		if testHookSnapshotFlight != nil {
			testHookSnapshotFlight(key)
		}
		close(f.done)
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if next := k.next; next != nil {
			k.next = nil
			fs.start(key, k, next)
			return
		}
		k.running = false
		delete(fs.m, key)
	})
}

// run is the flight's query; a panic in it is the error of every statement
// waiting on it.
func (f *snapFlight) run() (out []catalog.PartitionFiles, err error) {
	defer safego.Recover(&err)
	return f.list(f.ctx)
}

// snapFlightKey identifies the answers of lakesoul.live_files_cached that
// statements may share: the role the handle reads as, the table, and the
// partitions asked for (descs, else terms, nil and empty kept apart).
func snapFlightKey(role, tableID string, descs, terms []string) string {
	// Every part is length-prefixed, so no text a part holds can make two
	// keys equal.
	var b strings.Builder
	part := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	part(role)
	part(tableID)
	for _, l := range [][]string{descs, terms} {
		if l == nil {
			b.WriteByte('n')
			continue
		}
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte('[')
		for _, s := range l {
			part(s)
		}
	}
	return b.String()
}
